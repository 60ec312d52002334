"""What arrives in a link or a file is shown as text on the pages: the warnings and errors that quote it are read
with an independent Markdown renderer (``helpers.shown``); the figure's axis titles are checked as plotly text."""

from __future__ import annotations

import html
import json

import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from explorer.outside import ECHO_LIMIT
from explorer.ui.links import LINK_ECHO, LINK_ECHO_ITEMS
from tests.app.helpers import ROOT, assert_clean, page, shown, upload

PHISHING = "[Session expired: sign in again](https://evil.example/login)"


def _tags(markdown: str) -> set[str]:
    rendered = MarkdownIt("commonmark", {"linkify": True}).enable(["linkify", "table"]).render(markdown)
    return {tag for tag in ("<a ", "<img", "<strong", "<em", "<code", "<h1", "<script") if tag in rendered}


def _linked(name: str, params: dict) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


@pytest.mark.parametrize("params", [{PHISHING: "1"}, {"nw.bandwidth": PHISHING},
                                    {"![x](https://evil.example/p.png)": "<b>1</b>"},
                                    {"k" * 500_000: "1"}, {f"key{i}": "*x*" for i in range(40)}])
def test_a_links_unknown_keys_and_values_are_said_as_text_and_cut(params):
    at = _linked("kernel_regression", params)
    assert not at.exception
    (warning,) = at.warning
    assert not _tags(warning.value), warning.value
    said = shown(warning.value)
    key, value = next(iter(params.items()))
    assert f"{key[:LINK_ECHO]}" in said and f"{value[:LINK_ECHO]}" in said
    assert len(said) < 200 + LINK_ECHO_ITEMS * 3 * (LINK_ECHO + 1), len(said)     # a 500 KB key is not echoed
    if len(params) > LINK_ECHO_ITEMS:
        assert f"and {len(params) - LINK_ECHO_ITEMS} more" in said


HOSTILE_CSV = ("[a](https://evil.example) <b>x</b>,=HYPERLINK(\"https://evil.example\")\n"
               + "".join(f"{i},{i * i}\n" for i in range(12))).encode()


def test_an_uploads_file_and_column_names_are_text_in_the_captions_and_the_figure():
    at = page("kernel_regression")
    at.selectbox(key="data.name").set_value("upload").run()
    upload(at, ("![i](https://evil.example/p.png).csv", b"x,y\n1,a\n", "text/csv"))       # refused: file name said
    (error, *_) = at.error
    assert not _tags(error.value) and "![i](https://evil.example/p.png).csv was not used" in shown(error.value)
    upload(at, ("data.csv", HOSTILE_CSV, "text/csv"))
    assert_clean(at)
    caption = next(c.value for c in at.sidebar.caption if "uploaded" in c.value)
    assert not _tags(caption) and "x = [a](https://evil.example) <b>x</b>" in shown(caption)
    layout = json.loads(next(e.proto.spec for e in at.get("plotly_chart") if "fit" in e.proto.id))["layout"]
    titles = layout["xaxis"]["title"]["text"], layout["yaxis"]["title"]["text"]
    assert all("<" not in title for title in titles), titles                  # plotly reads no tag in them
    assert html.unescape(titles[0]) == "[a](https://evil.example) <b>x</b>"[:ECHO_LIMIT]
    assert html.unescape(titles[1]).startswith("=HYPERLINK")
