"""Attention heatmap: the NW weight matrix, one query's weights, entropy, and a bandwidth sweep."""

import math

import numpy as np
import streamlit as st

from explorer.lessons import attention_heatmap as L
from explorer.ui import cache
from explorer.ui.cache import spec_data
from explorer.ui.control import rerun_alone, stop_page
from explorer.ui.controls import TYPED_PART, dataset_controls, kernel_bandwidth_controls, lesson_controls
from explorer.ui.figure import show_spec
from explorer.ui.layout import explanation
from explorer.ui.page import lesson_page, page_part
from explorer.ui.predict import prediction
from explorer.ui.state import say, tr

C = lesson_controls(L)
MAIN, QUERY, NOTICE = "ah.main", "ah.query", "ah.notice"     # the parts of the page a bandwidth move redraws


def weights(data: dict) -> dict:
    """The weight matrix at the current settings (computed once per setting: ``spec_data``'s cache)."""
    return spec_data(L.figures(C.values(), data)["weights_heatmap"])


@page_part(C, MAIN)
def heatmap(data: dict) -> None:
    """The weight matrix and its size."""
    try:
        res = show_spec(L.figures(C.values(), data)["weights_heatmap"], key="heatmap", main=True)
    except ValueError as err:
        stop_page(say(err))
    w = res["weights"]
    note = tr("ah.size", m=w.shape[0], n=w.shape[1], cells=w.size)
    if L.display_factor(w) > 1:
        note += tr("ah.downsampled", factor=L.display_factor(w), limit=L.DISPLAY_CELLS)
    st.caption(note)


@page_part(C, QUERY)
def one_query(data: dict) -> None:
    """The chosen query's weights and every query's entropy, with what they say."""
    res, kernel = weights(data), C.KERNEL.value
    w, xq = res["weights"], res["x_query"]
    qi = L.query_index(xq, C.QUERY_X.value)                           # the query nearest the chosen x
    specs = L.figures(C.values(), data)
    c1, c2 = st.columns(2)
    with c1:
        show_spec(specs["query_row"], res)
    with c2:
        show_spec(specs["row_entropy"], res, key="entropy")
    row = w[qi]
    unsupported = int(np.isnan(res["entropy"]).sum())
    if unsupported:
        st.caption(tr("ah.no_support_caption", n=unsupported, m=len(xq), kernel=tr(f"kernel.{kernel}")))
    if row.sum() > 0:
        st.markdown(tr("ah.row_text", x=xq[qi], wmax=row.max(), n_big=int((row > 0.01).sum()),
                        n=len(row), h=res['entropy'][qi], log_n=math.log(len(row))))
    else:
        st.markdown(tr("ah.row_none_text", x=xq[qi], kernel=tr(f"kernel.{kernel}")))


@page_part(C, NOTICE)
def what_to_notice(data: dict, ends: dict) -> None:
    """What the figures show at the two ends of the bandwidth (``ends``) and at the current h."""
    res, kernel = weights(data), C.KERNEL.value
    with explanation("ui.what_to_notice"):
        log_n = math.log(len(data['x']))
        small = L.small_h_rows(ends, len(data["x"]), kernel)
        density = L.entropy_and_density(res["weights"], res["entropy"], res["x_query"], data["x"], kernel,
                                        C.BANDWIDTH.value)
        notes = [tr("ah.notice"),
                 tr(f"ah.notice_small_{small}", kernel=tr(f"kernel.{kernel}"), small=ends['small_h'],
                    mw_small=ends['max_weight_small'], ent_small=ends['entropy_small'],
                    n=len(data["x"])),
                 tr("ah.notice_large", large=ends['large_h'], ent_large=ends['entropy_large'],
                    log_n=log_n, inv_n=1 / len(data['x']), ratio=ends['row_ratio_large']),
                 tr("ah.notice_density" if density["holds"] else "ah.notice_density_not", corr=density['corr'],
                    lo=density['lo'], hi=density['hi'])]
        st.markdown("\n".join(notes))
        st.latex(r"\alpha(x, x_i) = \frac{K\left(\frac{x - x_i}{h}\right)}{\sum_j K\left(\frac{x - x_j}{h}\right)}"
                 r",\qquad H(x) = -\sum_i \alpha(x, x_i)\,\log \alpha(x, x_i) \in [0, \log N]")


with lesson_page(C, question="ah.question"):
    ds = dataset_controls()
    left, right = st.columns([1, 2])
    with left:     # a bandwidth move redraws the parts that show h; the sweep too when it shows h (none picked)
        kernel_bandwidth_controls(ds, on_move=rerun_alone(MAIN, QUERY, NOTICE, TYPED_PART) if C.SWEEP.value
                                  else None)
        n_queries = C.N_QUERIES.draw()
    kernel = C.KERNEL.value

    try:
        data = cache.dataset(*ds)
        res = weights(data)
    except ValueError as err:
        stop_page(say(err))
    with right:
        heatmap(data)

    st.subheader(tr("ah.one_query"))
    lo, hi = L.query_range(res["x_query"])
    C.QUERY_X.draw(lo=lo, hi=hi)
    one_query(data)

    st.subheader(tr("ah.sweep"))
    ends = cache.heatmap_regimes(*ds, kernel, n_queries)
    shapes = [tr(f"ah.shape_{s}") for s in L.ROW_SHAPES]
    right = L.row_shape(ends["entropy_large"], math.log(len(data["x"])), ends["max_weight_large"])
    large = ends["large_h"]
    revealed = prediction("ah.wide", tr("ah.predict_q", h=large, kernel=tr(f"kernel.{kernel}")), shapes, right,
                          tr("ah.predict_why", h=large, ent=ends['entropy_large'],
                             log_n=math.log(len(data['x'])), wmax=ends['max_weight_large']))
    C.SWEEP.draw()
    asked = large if revealed.shown else None        # the bandwidth the question asked about, among the panels
    show_spec(L.figures(C.values(), data, asked)["sigma_sweep"], key="sweep",
              answer=(large, tr("fig.answer_is", answer=shapes[right])) if revealed.shown else None)

    what_to_notice(data, ends)
