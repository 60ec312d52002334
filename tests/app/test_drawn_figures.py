"""The server keeps finished figures (explorer.ui.figure.DRAWN): a rerun that leaves a figure's inputs alone reuses
it, and anything the figure depends on (its data, marks, language, lecture mode, theme) draws it anew. Either way
the chart sent is the one a fresh drawing gives."""

import json

import numpy as np
import plotly
import plotly.graph_objects as go
from streamlit.testing.v1 import AppTest

from explorer.figures.describe import data_array
from explorer.lessons import live_training
from explorer.ui import figure
from explorer.ui.figure import figure_key, single_precision
from explorer.ui.memory import Kept
from tests.app.helpers import ROOT, assert_clean, set_bandwidth


def _charts(at: AppTest) -> dict[str, str]:
    return {e.proto.id: e.proto.spec for e in at.get("plotly_chart")}


def _page(theme: str = "light") -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / "kernel_regression.py"), default_timeout=120)
    at.context["theme"] = theme
    return at


def test_a_kept_figure_is_reused_and_every_input_draws_a_new_one(monkeypatch):
    monkeypatch.setattr(figure, "DRAWN", Kept())
    at = _page().run()
    assert_clean(at)
    first = _charts(at)
    drawn = figure.DRAWN.misses
    assert drawn == len(first) and figure.DRAWN.hits == 0

    at.run()                                          # nothing moved: nothing drawn again, the same charts sent
    assert figure.DRAWN.misses == drawn and figure.DRAWN.hits == len(first)
    assert _charts(at) == first

    set_bandwidth(at, 0.5)   # the fit changes; the kernel shapes do not
    assert_clean(at)
    after = {json.loads(s)["layout"]["title"]["text"]: s for s in _charts(at).values()}
    before = {json.loads(s)["layout"]["title"]["text"]: s for s in first.values()}
    changed = [title for title in after if after[title] != before.get(title)]
    assert changed and len(changed) < len(after)
    assert figure.DRAWN.misses == drawn + len(changed)

    for setting, value in (("ui.lang", "zh"), ("ui.lecture", True)):   # another language, lecture mode
        misses, hits = figure.DRAWN.misses, figure.DRAWN.hits
        other = _page()
        other.session_state[setting] = value
        other.run()
        assert_clean(other)
        assert figure.DRAWN.hits == hits and figure.DRAWN.misses == misses + len(_charts(other)), setting


def test_a_reused_figure_is_the_one_a_fresh_drawing_sends(monkeypatch):
    monkeypatch.setattr(figure, "DRAWN", Kept())
    _page("light").run()                               # the same figures kept for a light page first
    kept = _page("dark").run()
    set_bandwidth(kept, 0.5)
    set_bandwidth(kept, 0.2)    # back: every figure comes from DRAWN
    assert figure.DRAWN.hits >= len(_charts(kept))
    monkeypatch.setattr(figure, "DRAWN", Kept(size=0))      # keeps nothing: every figure drawn fresh
    fresh = _page("dark").run()
    assert figure.DRAWN.hits == 0
    assert _charts(kept) == _charts(fresh)
    for spec in _charts(kept).values():                # the dark figures, not light ones kept under a dark page
        assert json.loads(spec)["layout"]["font"]["color"] == "#fafafa"


def test_the_store_drops_the_least_recently_used_and_keys_only_what_pickles():
    store = Kept(size=2)
    builds = []
    for key in (b"a", b"b", b"a", b"c", b"b"):        # c pushes out b (a was used after b); b is built again
        store.get(key, lambda key=key: builds.append(key) or key)
    assert builds == [b"a", b"b", b"c", b"b"]
    assert store.hits == 1 and list(store._kept) == [b"c", b"b"]
    assert store.get(None, lambda: "not kept") == "not kept" and len(store._kept) == 2
    assert figure_key("x", {"h": 0.2}) == figure_key("x", {"h": 0.2}) != figure_key("x", {"h": 0.5})
    assert figure_key(lambda: 0) is None               # a function cannot be pickled: drawn, never kept


def test_the_browser_gets_float32_where_it_holds_the_values_and_the_export_keeps_float64():
    x = np.linspace(0.0, 1.0, 5)
    fig = go.Figure([go.Scatter(x=x, y=np.exp(-x)), go.Scatter(x=x, y=np.array([1e-40, 1e-3, 1.0, 2.0, 3.0])),
                     go.Heatmap(z=np.array([[0.5, 1e-35], [1e-12, 0.25]]))])
    sent = single_precision(fig)
    data = [{k: data_array(v) for k, v in trace.items()} for trace in sent.to_dict()["data"]]
    assert [t["x"].dtype for t in data[:2]] == [np.float32, np.float32]
    assert data[0]["y"].dtype == np.float32 and np.allclose(data[0]["y"], np.exp(-x), rtol=1e-7)
    assert data[1]["y"].dtype == np.float64 and data[1]["y"][0] == 1e-40          # a log axis's 1e-40 is kept
    assert data[2]["z"].dtype == np.float32
    assert data[2]["z"].tolist() == [[0.5, 0.0], [np.float32(1e-12), 0.25]]       # under 1e-30: 0 on a colour scale
    assert fig.data[0].y.dtype == np.float64 and fig.data[2].z[0, 1] == 1e-35        # the original is left alone
    as_sent = json.loads(plotly.io.to_json(plotly.tools.return_figure_from_figure_or_data(sent, True)))
    assert as_sent["data"][0]["y"]["dtype"] == "f4"         # what st.plotly_chart sends, after its own checks
    assert len(sent.to_json()) < len(fig.to_json())


def test_a_figure_of_live_state_is_drawn_and_not_kept(monkeypatch):
    monkeypatch.setattr(figure, "DRAWN", Kept())
    at = AppTest.from_file(str(ROOT / "pages" / "live_training.py"), default_timeout=180).run()
    at.button(key="train.step").click().run()             # the training charts: live state, new at every step
    assert_clean(at)
    live = {name for name, f in live_training.FIGURES.items() if not f.cached}
    kept = len(figure.DRAWN._kept)
    charts = len(at.get("plotly_chart"))
    assert live and kept < charts                          # the page's live charts went past the store
    at.button(key="train.step").click().run()
    assert len(figure.DRAWN._kept) == kept                 # another step adds nothing to it


def test_pandas_is_whole_before_any_figure_is_drawn():
    """plotly reads pandas from sys.modules without importing it; were pandas first imported lazily by one thread
    while another drew, the drawing found a half-built module and raised (seen on a loaded server). The module that
    draws every figure loads pandas with itself, in a fresh interpreter as on a server."""
    import subprocess
    import sys

    probe = ("import sys; assert 'pandas' not in sys.modules; import explorer.ui.figure; "
             "print(hasattr(sys.modules.get('pandas'), 'Series'))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.stdout.strip() == "True", out.stderr[-2000:]
