"""Text that comes from outside the app: a link's keys and values, a path, a room code, an uploaded file's name and
column headers. Such text is quoted as it is, never read as markup: ``Outside`` marks it (cut to a stated length,
control characters replaced), and each place that shows it escapes it for what reads it there:

- ``markdown_text``: Streamlit's Markdown (links, images, emphasis, ``:colour[...]``, ``:emoji:``, ``$maths$``,
  HTML tags, bare addresses): every ASCII punctuation character is backslash-escaped, which CommonMark shows as the
  character, and an invisible word joiner breaks each address;
- ``plotly_text``: plotly's titles and labels, which read ``<a href>``, ``<b>``, ``<br>`` and entities: ``<``, ``>``
  and ``&`` become entities, which plotly shows as the characters;
- ``spreadsheet_cell``: a text cell of an exported CSV that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
  return gets a leading ``'`` (OWASP's rule against formula injection), so a spreadsheet shows it as text.

Nothing here imports streamlit.

>>> markdown_text(Outside("[Sign in](https://evil.example)")).replace("\\u2060", "")
'\\\\[Sign in\\\\]\\\\(https\\\\:\\\\/\\\\/evil\\\\.example\\\\)'
>>> plotly_text(Outside('<a href="https://evil.example">x</a>'))
'&lt;a href="https://evil.example"&gt;x&lt;/a&gt;'
>>> spreadsheet_cell('=HYPERLINK("https://evil.example")'), spreadsheet_cell("weight")
('\\'=HYPERLINK("https://evil.example")', 'weight')
"""

from __future__ import annotations

import html
import re
import string
import unicodedata

ECHO_LIMIT = 60          # characters of outside text shown back at most (then "…")
_PUNCTUATION = frozenset(string.punctuation)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class Outside(str):
    """Text from outside the app, as it may be shown: at most ``limit`` characters (the rest said as "…"), each
    control or format character (a newline, a right-to-left override) replaced by a space. It reads as that text
    wherever a string is expected (``Message``, ``t``) and is escaped where markup would read it
    (``explorer.ui.state.tr`` and ``say`` escape it for Markdown, ``plotly_text`` for plotly).

    >>> Outside("a\\nb" + "c" * 100, limit=5)
    'a bcc…'
    """

    def __new__(cls, text, limit: int = ECHO_LIMIT):
        text = str(text)
        clean = "".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in text[:limit])
        return super().__new__(cls, clean + ("…" if len(text) > limit else ""))

    def in_lang(self, lang: str, quote=None) -> str:     # the same text in every language, escaped by ``quote``
        return quote(self) if quote is not None else str(self)


def markdown_text(text) -> str:
    """``text`` escaped so that Streamlit's Markdown shows it character for character (an ``Outside`` is cut and
    cleaned first; other text is escaped as it is). Streamlit also turns a bare address (``https://…``,
    ``www.…``, ``name@host``) into a link after escapes are read, so a word joiner (U+2060, invisible) goes before
    each ``:`` and ``@`` and between ``www`` and its ``.``, which no address pattern matches across (other dots
    stay as they are: ``mask.kind`` copied from a notice is still ``mask.kind``)."""
    text = text if isinstance(text, Outside) else Outside(text, limit=len(str(text)))
    return _WWW.sub("\\1\u2060\\.", "".join(_ESCAPED.get(c, c) for c in text))


_ESCAPED = {c: ("\u2060\\" if c in ":@" else "\\") + c for c in _PUNCTUATION}
_WWW = re.compile(r"(?i)(www)\\\.")                             # "www" and its escaped dot


def plotly_text(text) -> str:
    """``text`` escaped so that plotly's text (titles, labels, hover) shows it as written, not as its HTML."""
    text = text if isinstance(text, Outside) else Outside(text, limit=len(str(text)))
    return html.escape(str(text), quote=False)


def spreadsheet_cell(text: str) -> str:
    """A text cell of an exported CSV that a spreadsheet would read as a formula, quoted as text (OWASP's rule:
    a leading ``'`` before ``=``, ``+``, ``-``, ``@``, tab or carriage return). Numbers are not passed here."""
    return "'" + text if text.startswith(_FORMULA_START) else text


__all__ = ["ECHO_LIMIT", "Outside", "markdown_text", "plotly_text", "spreadsheet_cell"]
