"""A notebook's figures survive `jupyter nbconvert --to html` with the network off, after `plot.offline_html()`
(issue: plotly's own MIME type alone leaves the converted page without a figure)."""

import re

import pytest

from tests.conftest import until

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
nbconvert = pytest.importorskip("nbconvert")

FIGURES = ["plot.kernels(names=['gaussian', 'laplace'])",
           "plot.fit(x=[0.0, 1.0, 2.0, 3.0], y=[0.0, 1.0, 0.0, 1.0], bandwidth=[0.3, 1.0])"]


def converted(tmp_path, offline: bool) -> str:
    """Run a notebook as a researcher would (a fresh kernel), then convert it as nbconvert's command line does."""
    first = "from explorer import plot\n" + ("plot.offline_html()" if offline else "")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(first),
                                         *[nbformat.v4.new_code_cell(code) for code in FIGURES]])
    nbclient.NotebookClient(nb, timeout=180, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    body, _ = nbconvert.HTMLExporter().from_notebook_node(nb)
    return body


DRAWN = """() => [...document.querySelectorAll('.js-plotly-plot')]
    .filter(p => p.querySelector('.main-svg') && p.querySelectorAll('.scatterlayer .trace').length > 0).length"""


def drawn_figures(browser, tmp_path, body: str) -> tuple[int, list[str]]:
    path = tmp_path / "notebook.html"
    path.write_text(body, encoding="utf-8")
    context, refused = browser.offline_context(viewport={"width": 1200, "height": 2000})
    try:
        page = context.new_page()
        page.goto(path.as_uri(), wait_until="load")
        # drawn: every figure of the notebook; not drawn: plotly.js was asked of the network (and refused)
        until(lambda: refused or page.evaluate(DRAWN) == len(FIGURES), timeout=30)
        count = page.evaluate(DRAWN)
    finally:
        context.close()
    return count, refused


def test_offline_html_figures_draw_in_the_converted_notebook_with_the_network_off(browser, tmp_path):
    body = converted(tmp_path, offline=True)
    assert not re.search(r"""src=["']https?://cdn\.plot\.ly""", body)      # plotly.js is inside the page
    count, _refused = drawn_figures(browser, tmp_path, body)
    assert count == len(FIGURES)


def test_without_it_the_converted_notebook_shows_no_figure(browser, tmp_path):
    count, _ = drawn_figures(browser, tmp_path, converted(tmp_path, offline=False))
    assert count == 0
