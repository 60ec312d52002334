"""Every undocumented name of Streamlit, plotly and plotly.js the app uses (``explorer/ui/internals.py``) is still
there in the installed versions. Each test fails with a sentence naming the internal and the versions it was written
for, so that an upgrade is caught here and not in front of a class."""

import json
import re
import subprocess
from importlib.resources import files
from pathlib import Path

import numpy as np
import plotly
import plotly.graph_objects as go
import plotly.io
import pytest
import streamlit

from explorer.ui import internals
from explorer.ui.internals import WEB, WRITTEN_FOR

STREAMLIT_JS = Path(streamlit.__file__).parent / "static" / "static" / "js"
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
WEB_FILES = files("explorer.ui") / "web"


def gone(name: str, library: str) -> str:
    installed = {"streamlit": streamlit.__version__, "plotly": plotly.__version__}[library]
    return (f"{name} is gone from {library} {installed} (explorer/ui/internals.py was written for {library} "
            f"{WRITTEN_FOR[library]}): find what replaced it and update the adapter")


def in_streamlit_front_end(text: str) -> bool:
    return any(text in path.read_text(encoding="utf-8", errors="ignore") for path in STREAMLIT_JS.glob("*.js"))


def test_the_page_the_browser_asked_for():
    from streamlit.runtime.pages_manager import PagesManager

    assert isinstance(getattr(PagesManager, "intended_page_name", None), property), \
        gone("PagesManager.intended_page_name", "streamlit")
    assert internals.requested_page() == ""                 # no script run: nothing asked


def test_a_rerun_of_parts_of_a_page():
    from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

    assert "fragment_ids_this_run" in ScriptRunContext.__dataclass_fields__, \
        gone("ScriptRunContext.fragment_ids_this_run", "streamlit")
    assert internals.rerun_of_parts() is False


def test_the_pages_directory_switch():
    from streamlit.runtime.pages_manager import PagesManager

    assert "uses_pages_directory" in vars(PagesManager), gone("PagesManager.uses_pages_directory", "streamlit")


def test_the_script_run_context_logger():
    import logging

    import streamlit.runtime.scriptrunner_utils.script_run_context as module

    loggers = [v for v in vars(module).values() if isinstance(v, logging.Logger)]
    assert any(logger.name == internals.SCRIPT_RUN_CONTEXT_LOGGER for logger in loggers), \
        gone(f"the logger {internals.SCRIPT_RUN_CONTEXT_LOGGER!r}", "streamlit")


def test_a_numpy_array_in_plotlys_base64_form():
    values = np.array([0.5, 1.5, 2.5], dtype=np.float32)
    try:
        spec = internals.typed_array(values)
    except ImportError as err:
        pytest.fail(gone("_plotly_utils.utils.to_typed_array_spec", "plotly") + f" ({err})")
    assert spec["dtype"] == "f4" and "bdata" in spec, gone("to_typed_array_spec's {dtype, bdata} form", "plotly")
    figure = json.loads(plotly.io.to_json(go.Figure(go.Scatter(y=values))))     # what plotly itself writes
    assert figure["data"][0]["y"]["bdata"] == spec["bdata"]


def test_a_ready_figure_goes_through_st_plotly_charts_checks():
    """``st.plotly_chart`` hands its figure to ``plotly.tools.return_figure_from_figure_or_data`` and reads it with
    ``to_dict``: a ``ReadyFigure`` (a go.Figure whose ``__init__`` is skipped) must come out as its own dict."""
    spec = {"data": [{"type": "scatter", "y": [1, 3, 2]}], "layout": {"title": {"text": "t"}}}
    ready = internals.ReadyFigure(spec)
    try:
        out = plotly.tools.return_figure_from_figure_or_data(ready, True)
    except Exception as err:
        pytest.fail(gone("a go.Figure built without __init__ passing return_figure_from_figure_or_data", "plotly")
                    + f" ({err!r})")
    assert out == spec                                      # the dict st.plotly_chart then sends
    assert ready.to_dict() == spec and ready.to_dict() is not ready.spec


def test_a_live_views_charts_keep_their_element_id_while_their_structure_stays():
    """``charts_kept_by_key`` wraps ``streamlit.elements.plotly_chart.compute_and_register_element_id``: inside it
    a chart drawn under ``kept_key`` has one id for two figures of one structure (new data: the front end keeps the
    chart, ``web/live.mjs`` updates it) and a new id for a new structure (a new title); outside it the data changes
    the id (Streamlit's own rule, which the wrapper leaves alone). Run through AppTest, so the ids are the ones
    Streamlit sends; what ``kept_key`` remembers is the figure itself."""
    import streamlit.elements.plotly_chart as st_plotly_chart
    from streamlit.testing.v1 import AppTest

    assert st_plotly_chart.compute_and_register_element_id is internals._plotly_chart_id, \
        gone("streamlit.elements.plotly_chart.compute_and_register_element_id", "streamlit")

    def page(kept: bool, y: int, title: str):
        import plotly.graph_objects as go
        import streamlit as st

        from explorer.ui.internals import charts_kept_by_key, kept_key

        fig = go.Figure(go.Scatter(y=[1, y]), layout={"title": {"text": title}})
        if kept:
            with charts_kept_by_key() as drawn:
                st.plotly_chart(fig, key=kept_key("chart", fig))
            st.session_state["drawn"] = dict(drawn)
        else:
            st.plotly_chart(fig, key="chart")

    def drawn(kept: bool, y: int, title: str = "a"):
        at = AppTest.from_function(page, args=(kept, y, title)).run()
        assert not at.exception, at.exception
        return at.get("plotly_chart")[0].proto.id, at.session_state["drawn"] if kept else None

    (one, kept_one), (two, _), (other, _) = drawn(True, 2), drawn(True, 3), drawn(True, 2, "b")
    assert one == two != other
    assert drawn(False, 2)[0] != drawn(False, 3)[0]
    ((key, figure),) = kept_one.items()
    assert key.startswith("chart-") and json.loads(figure)["data"][0]["y"] == [1, 2]


@pytest.mark.parametrize("name", ["transition_data", "frame_hash", "full_layout"])
def test_the_plotly_js_internals_the_follow_component_reads(name):
    assert WEB[name] in PLOTLY_JS.read_text(encoding="utf-8"), gone(f"plotly.js's gd.{WEB[name]}", "plotly")


@pytest.mark.parametrize("name", ["slider_thumb_value", "script_state_attribute", "header"])
def test_the_streamlit_front_end_names_the_components_read(name):
    wanted = WEB[name] if name != "script_state_attribute" else "data-test-script-state"
    assert in_streamlit_front_end(wanted), gone(f"the front end's {wanted!r}", "streamlit")
    assert WEB["script_state"] == "testScriptState"      # the dataset name of data-test-script-state


def _test_ids_in_style_sheets() -> list[str]:
    text = " ".join((WEB_FILES / name).read_text(encoding="utf-8") for name in ("base.css", "lecture.css"))
    return sorted(set(re.findall(r'data-testid="(\w+)"', text)) | set(re.findall(r"\.(st[A-Z]\w+)", text)))


@pytest.mark.parametrize("test_id", _test_ids_in_style_sheets())
def test_every_streamlit_name_the_style_sheets_select(test_id):
    assert in_streamlit_front_end(test_id), gone(f"the element {test_id!r} the style sheets select", "streamlit")


def test_no_private_name_outside_the_adapter():
    """The product's Python, scripts and web files name no internal of Streamlit or plotly but through
    ``explorer/ui/internals.py`` (tests may: they are where an upgrade should be caught)."""
    root = Path(__file__).resolve().parents[2]
    private = re.compile(r"_plotly_utils|_frameHash|_transitionData|_fullLayout|stSliderThumbValue|"
                         r"intended_page_name|PagesManager|fragment_ids_this_run|scriptrunner|test-script-state|"
                         r"testScriptState|go\.Figure\.__init__")
    sources = [*root.glob("explorer/**/*.py"), *root.glob("explorer/**/*.mjs"), *root.glob("explorer/**/*.css"),
               *root.glob("pages/*.py"), root / "app.py"]
    found = [f"{p.relative_to(root)}:{i}" for p in sources if p.name != "internals.py"
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if private.search(line)]
    assert not found, f"internal names outside explorer/ui/internals.py: {found}"


@pytest.mark.parametrize("name", sorted(p.name for p in WEB_FILES.iterdir() if p.name.endswith(".mjs")))
def test_the_components_javascript_parses(name):
    """``node --check`` on each component's module (Node is on the machine wherever ``make test`` runs its browser
    tests; a machine without it skips this)."""
    import shutil

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    done = subprocess.run([node, "--check", str(WEB_FILES / name)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("name", ["base.css", "lecture.css", "offline.css", "dark.css"])
def test_the_style_sheets_balance_their_braces_and_comments(name):
    text = (WEB_FILES / name).read_text(encoding="utf-8")
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    assert "/*" not in text and "*/" not in text, "an unclosed comment"
    depth = 0
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0, "a closing brace with no opening one"
    assert depth == 0, "an opening brace with no closing one"


def test_no_javascript_or_css_in_a_python_string():
    """JavaScript and CSS live in their own files under explorer/ui/web/ (parsed and checked above), not in strings
    of the product's Python: a string of three or more lines that end like code (``{``, ``}`` or ``;``), one at
    least with a brace, is one."""
    import ast

    root = Path(__file__).resolve().parents[2]
    found = []
    for path in [*root.glob("explorer/**/*.py"), *root.glob("pages/*.py"), root / "app.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                code_like = [line for line in node.value.splitlines() if re.search(r"[{};]\s*$", line)]
                if len(code_like) >= 3 and any(line.rstrip().endswith(("{", "}")) for line in code_like):
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not found, f"JavaScript or CSS in a Python string: {found}"


def test_the_inline_scripts_of_streamlits_page():
    """Each inline script of Streamlit's page (read here with the standard library's HTML parser) has its hash in
    the app's Content-Security-Policy, and nothing else does."""
    import base64
    import hashlib
    from html.parser import HTMLParser

    class Scripts(HTMLParser):
        def __init__(self):
            super().__init__()
            self.inline, self._open = [], None

        def handle_starttag(self, tag, attrs):
            if tag == "script":
                self._open = None if dict(attrs).get("src") else ""

        def handle_data(self, data):
            if self._open is not None:
                self._open += data

        def handle_endtag(self, tag):
            if tag == "script" and self._open is not None:
                self.inline.append(self._open)
                self._open = None

    parser = Scripts()
    parser.feed((files("streamlit") / "static" / "index.html").read_text(encoding="utf-8"))
    assert parser.inline, gone("an inline script in static/index.html", "streamlit")
    expected = {"sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() for s in parser.inline}
    assert set(internals.front_end_inline_scripts()) == expected


def test_the_dicts_a_plotly_figure_keeps_its_properties_in():
    parts = internals.figure_parts(go.Figure(go.Scatter(y=[1.0, 2.0])))
    assert parts is not None and len(parts) == 2, gone("BaseFigure._data and _layout", "plotly")
    data, layout = parts
    assert isinstance(data, list) and data[0]["type"] == "scatter" and isinstance(layout, dict), \
        gone("BaseFigure._data and _layout as a list and a dict", "plotly")
    assert internals.figure_parts({"data": []}) is None


@pytest.mark.parametrize("trusted", ["", "127.0.0.1"])
def test_the_uvicorn_config_that_imports_the_app_takes_the_connections_limits(tmp_path, monkeypatch, trusted):
    """``streamlit run`` hands uvicorn ``app.py`` as an import string; ``Config.load`` imports it, and what the app
    sets on the config then (``explorer.connections.install``) is what the server uses."""
    import importlib
    import sys

    import uvicorn
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    from explorer import connections

    name = f"served_app_{len(trusted)}"
    (tmp_path / f"{name}.py").write_text("from explorer import connections\nINSTALLED = connections.install()\n"
                                         "async def app(scope, receive, send):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("EXPLORER_TRUSTED_PROXIES", trusted)
    config = uvicorn.Config(f"{name}:app", lifespan="off")
    config.load()
    served = importlib.import_module(name)
    sys.modules.pop(name)
    assert served.INSTALLED, "uvicorn.Config.load no longer imports the app under the Config (``self``) it loads"
    assert config.http_protocol_class is connections.TimedH11Protocol
    assert isinstance(config.loaded_app, ProxyHeadersMiddleware) == bool(trusted)
    assert connections.install() is False                       # imported by anything else: nothing to set
