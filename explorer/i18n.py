"""UI text in English and 中文, one catalog per page: ``explorer/text/<page>.toml``.

Each entry holds the English (``en``), the 中文 (``zh``) and ``zh_from``, a digest of the English the
translation was made from (another language ``xx`` adds ``xx``, ``xx_from`` and a name in ``LANGUAGES``),
so a changed English sentence shows up as a stale translation (``stale_translations``; a test fails on
it). ``t(key, lang, **values)`` looks a key up and fills its ``{placeholders}``; ``Message`` carries a key
from the compute package to the page that shows it. Formulas stay LaTeX in the pages.

>>> t("kernel.gaussian", "zh")
'高斯核'
>>> Message("data.generated", dataset=Message("dataset.d2l"), n=40, noise=1, seed=0).in_lang("en")
'D2L 11.2: n = 40, noise sd = 1, seed = 0'
"""

from __future__ import annotations

import hashlib
import math
import re
import tomllib
from pathlib import Path

LANGUAGES = {"en": "English", "zh": "中文"}
CATALOG_DIR = Path(__file__).parent / "text"


def digest(english: str) -> str:
    """What ``zh_from`` records: the first 8 hex digits of the SHA-1 of the English sentence."""
    return hashlib.sha1(english.encode("utf-8")).hexdigest()[:8]


def load_catalogs(folder: Path = CATALOG_DIR) -> dict[str, dict[str, dict[str, str]]]:
    """Every catalog in ``folder`` by file name (without .toml): ``{page: {key: {"en", "zh", "zh_from"}}}``.
    A key defined in two catalogs is an error."""
    catalogs, seen = {}, {}
    for path in sorted(folder.glob("*.toml")):
        with path.open("rb") as fh:
            entries = tomllib.load(fh)
        for key in entries:
            if key in seen:
                raise ValueError(f"UI text {key!r} is in both {seen[key]}.toml and {path.stem}.toml.")
            seen[key] = path.stem
        catalogs[path.stem] = entries
    return catalogs


def stale_translations(catalogs: dict[str, dict[str, dict[str, str]]]) -> list[tuple[str, str, str]]:
    """(catalog, key, digest of the current English) for every entry with a translation made from other
    English: a language ``xx`` records the English it was made from as ``xx_from``."""
    return [(page, key, digest(e["en"])) for page, entries in catalogs.items() for key, e in entries.items()
            if any(e.get(f"{lang}_from") != digest(e["en"]) for lang in LANGUAGES if lang != "en")]


CATALOGS = load_catalogs()
STRINGS: dict[str, dict[str, str]] = {
    lang: {k: e[lang] for entries in CATALOGS.values() for k, e in entries.items() if lang in e} for lang in LANGUAGES
}
EN, ZH = STRINGS["en"], STRINGS["zh"]
# English counts: an entry may give ``en_one``, the sentence for a count of exactly 1 ("1 answer"), which ``t`` picks;
# the count is the value ``n``, or the one the entry's ``count`` names. 中文 needs none (its nouns have no plural).
ONE: dict[str, tuple[str, str]] = {k: (e.get("count", "n"), e["en_one"]) for entries in CATALOGS.values()
                                   for k, e in entries.items() if "en_one" in e}


def t(key: str, lang: str = "en", **values) -> str:
    """The text for ``key`` in ``lang`` with ``{placeholders}`` filled; English when a language lacks it. In English
    a count of 1 takes the entry's ``en_one`` where it has one.

    >>> t("poll.count", "en", n=1, round=2), t("poll.count", "en", n=3, round=2)
    ('1 answer (round 2)', '3 answers (round 2)')
    >>> t("poll.round_n", "en", n=2, total=1), t("poll.round_n", "zh", n=2, total=1)
    ('round 2 (1 vote)', '第 2 轮（1 票）')
    """
    table = STRINGS.get(lang, EN)
    if lang == "en" and key in ONE and values.get(ONE[key][0]) == 1:
        return ONE[key][1].format(**values)
    text = table.get(key, EN.get(key))
    if text is None:
        raise KeyError(f"no UI text with key {key!r}")
    return text.format(**values) if values else text


class Message(str):
    """A sentence for the user that remembers its key: it reads as the English text wherever a string is
    expected (logs, exceptions, tests), and ``in_lang`` gives it in another UI language. Values that are
    themselves messages (a dataset's name) are translated too."""

    def __new__(cls, key: str, **values):
        obj = super().__new__(cls, t(key, "en", **values))
        obj.key, obj.values = key, values
        return obj

    def in_lang(self, lang: str, quote=None) -> str:
        return t(self.key, lang, **{k: in_lang(v, lang, quote) if hasattr(v, "in_lang") else v
                                    for k, v in self.values.items()})

    def __reduce__(self):
        return _message, (self.key, self.values)


def _message(key: str, values: dict) -> Message:
    return Message(key, **values)


class Phrase(str):
    """A UI text in the language it is shown in that can also be said in another (``in_lang``): what the pages'
    ``tr`` returns, so that a page's question can go to each student's phone in that student's language. The values
    it quotes are said in its language too; ``quote`` escapes those from outside the app (``in_lang``)."""

    def __new__(cls, key: str, lang: str, quote=None, **values):
        obj = super().__new__(cls, t(key, lang, **{k: in_lang(v, lang, quote) if hasattr(v, "in_lang") else v
                                                   for k, v in values.items()}))
        obj.key, obj.values, obj.quote = key, values, quote
        return obj

    def in_lang(self, lang: str, quote=None) -> str:
        quote = quote or self.quote
        return t(self.key, lang, **{k: in_lang(v, lang, quote) if hasattr(v, "in_lang") else v
                                    for k, v in self.values.items()})

    def __reduce__(self):
        return _phrase, (str(self), self.key, self.values, self.quote)


def _phrase(text: str, key: str, values: dict, quote=None) -> Phrase:
    obj = str.__new__(Phrase, text)
    obj.key, obj.values, obj.quote = key, values, quote
    return obj


class Joined(str):
    """Several texts said as one, joined by the separator UI text ``sep`` of the language they are said in
    (``punct.list``: "a, b" in English, "a、b" in 中文): a value a ``Message`` quotes, e.g. the modes that leak.

    >>> Joined([Message("kernel.gaussian"), Message("kernel.boxcar")]).in_lang("zh")
    '高斯核，矩形核'
    """

    def __new__(cls, parts, sep: str = "punct.list"):
        parts = tuple(parts)
        obj = super().__new__(cls, t(sep, "en").join(in_lang(p, "en") for p in parts))
        obj.parts, obj.sep = parts, sep
        return obj

    def in_lang(self, lang: str, quote=None) -> str:
        return t(self.sep, lang).join(in_lang(p, lang, quote) for p in self.parts)

    def __reduce__(self):
        return Joined, (self.parts, self.sep)


def in_lang(text, lang: str, quote=None) -> str:
    """``text`` in ``lang`` when it knows its key (a ``Message``, a ``Phrase``, a ``Joined``); as it is otherwise (a
    number, a name: the same in every language). ``quote``: how text from outside the app that it quotes
    (``explorer.outside.Outside``: a file's name, a column's header) is escaped for where it is shown (the pages:
    ``markdown_text``); as it is when None.

    >>> from explorer.outside import Outside, markdown_text
    >>> print(in_lang(Message("data.rejected", file=Outside("*notes*"), error="x"), "en", markdown_text))
    \\*notes\\* was not used: x
    """
    return text.in_lang(lang, quote) if hasattr(text, "in_lang") else str(text)


def marks_as_html(escaped: str) -> str:
    """The catalog's own marks in text already HTML-escaped: ``**bold**`` as <strong>, ``code`` as <code> (for the
    pages made outside Streamlit: the phones' and the offline lessons').

    >>> marks_as_html("**Var(q·k) = d**, see `Trainer.save`")
    '<strong>Var(q·k) = d</strong>, see <code>Trainer.save</code>'
    """
    return re.sub(r"`(.+?)`", r"<code>\1</code>", re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escaped))


def byte_size(n_bytes: float) -> str:
    """A size in bytes as a person reads it, in the unit that gives it 1 to 1023 (B, KiB, MiB, GiB), three
    significant digits: never "0.0 MiB" for a few hundred bytes. The units read the same in every language.

    >>> [byte_size(b) for b in (800, 1536, 2.5 * 2 ** 20, 3 * 2 ** 30)]
    ['800 B', '1.5 KiB', '2.5 MiB', '3 GiB']
    """
    size, unit = float(n_bytes), "B"
    for bigger in ("KiB", "MiB", "GiB"):
        if size < 1024:
            break
        size, unit = size / 1024, bigger
    return f"{size:.3g} {unit}"


def scientific(log10: float) -> str:
    """A positive number given by its base-10 logarithm, written as 3 significant digits ("0.0412", "2.51e+195"),
    also past the range of a float.

    >>> scientific(-1.385), scientific(195.4)
    ('0.0412', '2.51e+195')
    """
    if -4 <= log10 < 6:
        return f"{10 ** log10:.3g}"
    exponent = math.floor(log10)
    mantissa = 10 ** (log10 - exponent)
    if round(mantissa, 2) >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa:.3g}e{exponent:+d}"


def text_width(text: str) -> int:
    """Display width in Latin-letter units: a CJK character is about two."""
    return sum(2 if "\u2e80" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef" else 1 for ch in text)
