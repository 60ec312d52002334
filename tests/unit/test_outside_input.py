"""Text from outside the app (a link, a file, a phone) is shown as text; a file past the limits is refused before it
is parsed; the poll store is closed to the rest of the machine. The escaping is read back with an independent
Markdown renderer (markdown-it-py, CommonMark with link detection)."""

from __future__ import annotations

import csv
import html
import io
import os
import re
import stat

import numpy as np
import plotly.graph_objects as go
import pytest
from markdown_it import MarkdownIt

from explorer.data import MAX_HEADER_CHARS, MAX_UPLOAD_COLUMNS, MAX_UPLOAD_ROWS, read_csv
from explorer.figures.files import figure_csv
from explorer.i18n import Joined, Message, Phrase
from explorer.outside import ECHO_LIMIT, Outside, markdown_text, plotly_text, spreadsheet_cell
from explorer.polls import SQLiteStore, new_voter
from tests.polls_support import REDIS, REDIS_MISSING, RedisServer

TEXTS = {"en": {"question": "Which?", "choices": ["a", "b", "c"]}}
HOSTILE = [
    "[Session expired: sign in again](https://evil.example/login)",
    "![x](https://evil.example/pixel.png)",
    "<https://evil.example>", "https://evil.example/a_b", "www.evil.example",
    "<a href='https://evil.example'>x</a>", "<img src=x onerror=alert(1)>", "<b>bold</b>", "<script>x</script>",
    "**bold** *em* __u__ ~~s~~", "`code`", "# heading", "- item", "1. item", "> quote", "---",
    "| a | b |", "[ref]: https://evil.example", "\\*already escaped\\*", "&amp; &lt;b&gt;", "a\nb\r\nc",
    ":red[red text]", ":material/home:", ":smile:", "$x^2$", "{{template}}", "x" * 500,
]
RENDER = MarkdownIt("commonmark", {"linkify": True}).enable(["linkify", "table", "strikethrough"])


def rendered(markdown: str) -> str:
    """The HTML an independent renderer makes of it, less the invisible word joiners that break addresses."""
    return RENDER.render(markdown).replace("\u2060", "").strip()


@pytest.mark.parametrize("text", HOSTILE)
def test_outside_text_in_markdown_is_one_paragraph_of_the_same_characters(text):
    shown = markdown_text(Outside(text))
    out = rendered(shown)
    assert out.startswith("<p>") and out.endswith("</p>") and out.count("<") == 2, out   # no tag but the paragraph
    expected = Outside(text)
    assert html.unescape(out[3:-4]) == expected
    assert len(expected) <= ECHO_LIMIT + 1 and "\n" not in expected


def test_a_message_and_a_phrase_escape_what_they_quote_from_outside_and_nothing_else():
    file = Outside("[a](https://evil.example).csv")
    said = Message("data.rejected", file=file, error="**not read**").in_lang("zh", markdown_text)
    out = rendered(said)
    assert "<a" not in out and "[a](https://evil.example).csv" in html.unescape(out)
    assert "<strong>not read</strong>" in out                     # the app's own Markdown still works
    phrase = Phrase("ui.url_ignored", "en", quote=markdown_text, bad=Joined([Outside("![i](x)=1"), Outside("k=v")]))
    out = rendered(phrase)
    assert "<img" not in out and "![i](x)=1, k=v" in html.unescape(out)
    assert "<img" not in rendered(phrase.in_lang("zh"))           # said to a phone in another language: still text
    assert str(Message("data.rejected", file=file, error="e")).startswith("[a](https://evil.example).csv")  # plain


@pytest.mark.parametrize("text", ["<a href='https://evil.example'>x</a>", "<b>b</b><br>c", "a &amp; b", "x<sup>2"])
def test_outside_text_in_plotly_has_no_tag_and_reads_back_as_written(text):
    shown = plotly_text(Outside(text))
    assert "<" not in shown and ">" not in shown
    assert html.unescape(shown) == text


@pytest.mark.parametrize("cell", ["=HYPERLINK(\"https://evil.example\",\"x\")", "+1+2", "-2+3", "@SUM(A1)",
                                  "\t=1", "\r=1"])
def test_a_csv_cell_a_spreadsheet_would_run_is_quoted_as_text(cell):
    assert spreadsheet_cell(cell) == "'" + cell
    assert spreadsheet_cell("weight (unitless)") == "weight (unitless)"


def test_the_figure_csv_quotes_formula_cells_and_keeps_numbers_and_titles_as_shown():
    fig = go.Figure(go.Scatter(x=[-1.5, 2.0], y=[-3.0, 4.0], name="=HYPERLINK(\"https://evil.example\")"))
    fig.update_layout(xaxis_title=plotly_text(Outside("@x <b>col</b>")), yaxis_title="-y")
    rows = list(csv.reader(io.StringIO(figure_csv(fig))))
    assert rows[0] == ["series", "kind", "'@x <b>col</b>", "'-y"]
    assert rows[1] == ["'=HYPERLINK(\"https://evil.example\")", "scatter", "-1.5", "-3.0"]     # numbers stay numbers
    assert rows[2][2:] == ["2.0", "4.0"]


# ----------------------------------------------------------------------------- uploads bounded before parsing
@pytest.fixture
def no_parse(monkeypatch):
    """Fail if pandas is asked to parse the file."""
    import pandas as pd

    def refuse(*args, **kwargs):
        raise AssertionError("the file was parsed")
    monkeypatch.setattr(pd, "read_csv", refuse)


def _refused(raw: bytes) -> str:
    with pytest.raises(ValueError) as err:
        read_csv(raw)
    return err.value.message.key


def test_a_wide_file_is_refused_from_its_first_line(no_parse):
    header = ",".join(f"c{i}" for i in range(40_000))                 # the 349 KB file that took 36 s to parse
    assert _refused((header + "\n" + ",".join("1" * 40_000) + "\n").encode()) == "err.csv_header_long"
    assert _refused((",".join("c" * 2_000) + "\n1,2\n").encode()) == "err.csv_too_many_columns"
    semi = ";".join(f"c{i}" for i in range(MAX_UPLOAD_COLUMNS + 1))
    assert _refused((semi + "\n1;2\n").encode()) == "err.csv_too_many_columns"


def test_a_long_header_is_refused_before_the_rest_is_read(no_parse):
    assert _refused(("a" * (MAX_HEADER_CHARS + 1) + ",b\n1,2\n").encode()) == "err.csv_header_long"
    assert _refused(("a" * 5_000_000).encode()) == "err.csv_header_long"          # no newline at all


def test_a_deep_file_is_refused_by_counting_its_lines(no_parse):
    assert _refused(b"x,y\n" + b"1,2\n" * (MAX_UPLOAD_ROWS + 1)) == "err.csv_too_many"


def test_files_at_the_limits_are_read():
    header = ",".join(f"c{i}" for i in range(MAX_UPLOAD_COLUMNS))
    row = ",".join(str(i) for i in range(MAX_UPLOAD_COLUMNS))
    table = read_csv(((header + "\n") + (row + "\n") * MAX_UPLOAD_ROWS).encode())
    assert len(table.numeric) == MAX_UPLOAD_COLUMNS and len(table.frame) == MAX_UPLOAD_ROWS
    assert read_csv(b"x,y\n\n1,2\n\n3,4\n").frame.shape == (2, 2)            # blank lines are not rows


def test_a_refusal_quotes_the_files_column_names_as_text():
    with pytest.raises(ValueError) as refused:
        read_csv(b"[a](https://evil.example),<b>b</b>\n1,x\n2,y\n")
    message = refused.value.message
    out = rendered(message.in_lang("en", markdown_text))
    assert "<a" not in out and "<b>" not in out and "[a](https://evil.example), <b>b</b>" in html.unescape(out)


# ----------------------------------------------------------------------------- the store, closed to the machine
def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_the_sqlite_store_and_its_folder_are_the_owners_only(tmp_path):
    store = SQLiteStore(tmp_path / "state" / "polls.sqlite3")
    code, _ = store.open("scaling", TEXTS, answer=0)
    store.vote(code, new_voter(), 1, 0)                         # writes the -wal file
    assert _mode(tmp_path / "state") == 0o700
    written = [p for p in (tmp_path / "state").iterdir()]
    assert {p.name for p in written} >= {"polls.sqlite3", "polls.sqlite3-wal"}
    assert all(_mode(p) == 0o600 for p in written), {p.name: oct(_mode(p)) for p in written}


def test_redis_refuses_a_client_without_the_password_and_keeps_it_off_the_command_line(tmp_path):
    if REDIS is None:
        pytest.skip(REDIS_MISSING)
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    from explorer.polls.redis_store import RedisStore

    server = RedisServer(tmp_path / "redis").start()
    once = Retry(NoBackoff(), 0)         # a refusal at the first try (redis-py retries it, 4 s, by default)
    try:
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis(host="127.0.0.1", port=server.port, retry=once).get("x")
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis(host="127.0.0.1", port=server.port, password="guess", retry=once).get("x")
        store = RedisStore(server.url)
        code, _ = store.open("scaling", TEXTS, answer=0)
        assert store.get(code).phase == "voting"
        assert server.password not in repr(store)
        with open(f"/proc/{server.proc.pid}/cmdline", "rb") as fh:
            assert server.password.encode() not in fh.read()
        assert _mode(tmp_path / "redis") == 0o700 and _mode(tmp_path / "redis" / "redis.conf") == 0o600
        assert re.fullmatch(r"[A-Za-z0-9_-]{32}", server.password)
    finally:
        server.stop()


def test_numbers_are_not_quoted_by_the_spreadsheet_rule():
    fig = go.Figure(go.Heatmap(z=np.array([[-1.0, 2.0]]), x=[-1, 1], y=[0]))
    rows = list(csv.reader(io.StringIO(figure_csv(fig))))
    assert [r[2:] for r in rows[1:]] == [["-1", "0", "-1.0"], ["1", "0", "2.0"]]
