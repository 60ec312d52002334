"""Small helpers for AppTest-driven page tests."""

import base64
import html
import json
import re
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


def shown(markdown: str) -> str:
    """What a reader sees of Streamlit Markdown: rendered by an independent CommonMark renderer (with link
    detection), tags dropped, entities read. Escaped text from outside the app reads as the text it was."""
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark", {"linkify": True}).enable(["linkify", "table"]).render(markdown)
    return html.unescape(re.sub(r"<[^>]+>", "", rendered)).replace("\u2060", "").strip()    # (word joiners: unseen)


def page(name: str, timeout: float = 60) -> AppTest:
    """An AppTest for ``pages/<name>.py``, already run once."""
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=timeout)
    return at.run()


def _decode(value):
    """Plotly serialises numpy arrays as {"dtype", "bdata"(, "shape")}: turn them back into arrays."""
    if isinstance(value, dict) and "bdata" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        if "shape" in value:
            arr = arr.reshape([int(s) for s in str(value["shape"]).split(",")])
        return arr
    if isinstance(value, list):
        return np.array([np.nan if v is None else v for v in value], dtype=object)
    return value


def chart_data(at: AppTest, key: str) -> list[dict]:
    """The traces of the plotly chart drawn with ``key``, arrays decoded."""
    for el in at.get("plotly_chart"):
        spec = json.loads(el.proto.spec)
        if el.proto.id and key in el.proto.id:
            return [{k: _decode(v) for k, v in trace.items()} for trace in spec["data"]]
    raise AssertionError(f"no plotly chart with key {key!r}")


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def upload(at: AppTest, file: tuple[str, bytes, str]) -> AppTest:
    """Put ``file`` (name, bytes, type) into the data uploader and run (the uploader's key changes each time a
    file it held was refused, which empties it)."""
    generation = at.session_state["data.file_generation"] if "data.file_generation" in at.session_state else 0
    return at.file_uploader(key=f"data.file.{generation}").set_value(file).run()


def set_bandwidth(at: AppTest, h: float) -> AppTest:
    """Move the bandwidth slider to ``h``, then read the whole page. On Kernel regression and Attention heatmap the
    move reruns only the parts it changes (``test_a_bandwidth_move_reruns_only_its_parts`` on each); AppTest's
    tree then holds only those parts, where a browser keeps the rest of the page as drawn, so a test that reads
    the rest runs the page once more (a run that changes nothing)."""
    at.select_slider(key="nw.bandwidth").set_value(h).run()
    return at.run()
