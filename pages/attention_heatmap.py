"""Attention heatmap: the NW weight matrix, one query's weights, entropy, and a bandwidth sweep."""

import math

import numpy as np
import streamlit as st

from explorer.lessons import attention_heatmap as L
from explorer.ui import cache
from explorer.ui.control import stop_page
from explorer.ui.controls import dataset_controls, kernel_bandwidth_controls, lesson_controls
from explorer.ui.figure import show_spec
from explorer.ui.layout import explanation
from explorer.ui.page import lesson_page
from explorer.ui.predict import prediction
from explorer.ui.state import say, tr

C = lesson_controls(L)

with lesson_page(C, question="ah.question"):
    ds = dataset_controls()
    left, right = st.columns([1, 2])
    with left:
        kernel_bandwidth_controls(ds)
        n_queries = C.N_QUERIES.draw()
    kernel, h = C.KERNEL.value, C.BANDWIDTH.value

    try:
        data = cache.dataset(*ds)
        with right:
            res = show_spec(L.figures(C.values(), data)["weights_heatmap"], key="heatmap", main=True)
    except ValueError as err:
        stop_page(say(err))

    w, xq = res["weights"], res["x_query"]
    with right:
        note = tr("ah.size", m=w.shape[0], n=w.shape[1], cells=w.size)
        if L.display_factor(w) > 1:
            note += tr("ah.downsampled", factor=L.display_factor(w), limit=L.DISPLAY_CELLS)
        st.caption(note)

    st.subheader(tr("ah.one_query"))
    lo, hi = L.query_range(xq)
    qi = L.query_index(xq, C.QUERY_X.draw(lo=lo, hi=hi))              # the query nearest the chosen x
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

    with explanation("ui.what_to_notice"):
        log_n = math.log(len(data['x']))
        small = L.small_h_rows(ends, len(data["x"]), kernel)
        density = L.entropy_and_density(w, res["entropy"], xq, data["x"], kernel, h)
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
