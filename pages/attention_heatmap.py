"""Attention heatmap: the NW weight matrix, one query's weights, entropy, and a bandwidth sweep."""

import streamlit as st

from explorer.lessons import attention_heatmap as L
from explorer.ui import cache
from explorer.ui.cache import spec_data
from explorer.ui.control import draw, rerun_alone, stop_page, value, values
from explorer.ui.controls import TYPED_PART, dataset_controls, kernel_bandwidth_controls
from explorer.ui.figure import show_spec
from explorer.ui.follow import FRAME_CELLS, FRAME_ROWS, Follow
from explorer.ui.layout import explanation, write
from explorer.ui.page import lesson_page, page_part
from explorer.ui.predict import prediction
from explorer.ui.state import say, tr

MAIN, QUERY, NOTICE = "ah.part_main", "ah.part_query", "ah.part_notice"   # the parts a bandwidth move redraws


def weights(data: dict) -> dict:
    """The weight matrix at the current settings (computed once per setting: ``spec_data``'s cache)."""
    return spec_data(L.figures(values(L), data)["weights_heatmap"])


@page_part(L, MAIN)
def heatmap(data: dict) -> None:
    """The weight matrix and its size; the matrix follows a drag of h (frames drawn ahead) when it is small enough."""
    try:
        # the frames a drag of h plays have at most FRAME_ROWS rows (the release redraws the whole matrix): at
        # the default 100 rows, twelve whole frames made a rerun send 1.5 MB instead of 0.14
        rows = min(value(L.N_QUERIES), FRAME_ROWS)
        res = show_spec(L.figures(values(L), data)["weights_heatmap"], key="heatmap", main=True,
                        follow=Follow(L.BANDWIDTH, lambda v: L.figures({**v, L.N_QUERIES.key: rows}, data), values(L))
                        if rows * len(data["x"]) <= FRAME_CELLS else None)
    except ValueError as err:
        stop_page(say(err))
    write(L.size_caption(res))


@page_part(L, QUERY)
def one_query(data: dict) -> None:
    """The chosen query's weights and every query's entropy, with what they say."""
    res, specs = weights(data), L.figures(values(L), data)
    c1, c2 = st.columns(2)
    with c1:
        show_spec(specs["query_row"], res)
    with c2:
        show_spec(specs["row_entropy"], res, key="entropy")
    write(L.support_caption(res))
    write(L.row_text(res, value(L.QUERY_X)))


@page_part(L, NOTICE)
def what_to_notice(data: dict, ends: dict) -> None:
    """What the figures show at the two ends of the bandwidth (``ends``) and at the current h."""
    with explanation("ui.what_to_notice"):
        write(L.notice(weights(data), ends, data, value(L.BANDWIDTH)), join="\n")
        st.latex(r"\alpha(x, x_i) = \frac{K\left(\frac{x - x_i}{h}\right)}{\sum_j K\left(\frac{x - x_j}{h}\right)}"
                 r",\qquad H(x) = -\sum_i \alpha(x, x_i)\,\log \alpha(x, x_i) \in [0, \log N]")


with lesson_page(L, question="ah.question"):
    ds = dataset_controls()
    left, right = st.columns([1, 2])
    with left:     # a bandwidth move redraws the parts that show h; the sweep too when it shows h (none picked)
        kernel_bandwidth_controls(ds, on_move=rerun_alone(MAIN, QUERY, NOTICE, TYPED_PART) if value(L.SWEEP)
                                  else None)
        n_queries = draw(L.N_QUERIES)
    kernel = value(L.KERNEL)

    try:
        data = cache.dataset(*ds)
        res = weights(data)
    except ValueError as err:
        stop_page(say(err))
    with right:
        heatmap(data)

    st.subheader(tr("ah.one_query"))
    lo, hi = L.query_range(res["x_query"])
    draw(L.QUERY_X, lo=lo, hi=hi)
    one_query(data)

    st.subheader(tr("ah.sweep"))
    ends = cache.heatmap_regimes(*ds, kernel, n_queries)
    question = L.question(ends, len(data["x"]), kernel)
    revealed = prediction(question)
    draw(L.SWEEP)
    asked = ends["large_h"] if revealed.shown else None     # the bandwidth the question asked about, among the panels
    sweep = show_spec(L.figures(values(L), data, asked)["sigma_sweep"], key="sweep",
                      answer=(asked, say(question.mark())) if revealed.shown else None)
    write(L.sweep_caption(sweep))

    what_to_notice(data, ends)
