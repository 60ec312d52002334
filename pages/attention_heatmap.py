"""Attention heatmap: the NW weight matrix, one query's weights, entropy, and a bandwidth sweep."""

import math

import numpy as np
import streamlit as st

from explorer import lessons
from explorer.figures.attention import query_row_figure
from explorer.figures.common import MAX_DISPLAY_CELLS, downsample, lines
from explorer.ui import cache
from explorer.ui.control import lesson_page, stop_page
from explorer.ui.controls import dataset_controls, kernel_bandwidth_controls
from explorer.ui.figure import show, show_lesson
from explorer.ui.layout import explanation
from explorer.ui.page_controls import AttentionHeatmap as C
from explorer.ui.predict import prediction
from explorer.ui.state import lang, say, tr

with lesson_page("attention_heatmap", C.ALL, question="ah.question", file_name=C.FILE_NAME):
    ds = dataset_controls()
    left, right = st.columns([1, 2])
    with left:
        kernel_bandwidth_controls(ds)
        n_queries = C.N_QUERIES.draw()
    kernel, h = st.session_state["nw.kernel"], st.session_state["nw.bandwidth"]

    try:
        data = cache.dataset(*ds)
        res = cache.lesson_data("weights_heatmap", data=data, kernel=kernel, h=h, n_queries=n_queries)
    except ValueError as err:
        stop_page(say(err))

    w, xq, xk = res["weights"], res["x_query"], data["x"]
    with right:
        show_lesson("weights_heatmap", res, key="heatmap", main=True)
        note = tr("ah.size", m=w.shape[0], n=w.shape[1], cells=f"{w.size:,}")
        factor = downsample(w, xq, xk)[3]
        if factor > 1:
            note += tr("ah.downsampled", factor=factor, limit=f"{MAX_DISPLAY_CELLS:,}")
        st.caption(note)

    st.subheader(tr("ah.one_query"))
    lo, hi = float(np.floor(xq[0] * 100) / 100), float(np.ceil(xq[-1] * 100) / 100)
    qi = int(np.abs(xq - C.QUERY_X.draw(lo=lo, hi=hi)).argmin())       # the query nearest the chosen x
    c1, c2 = st.columns(2)
    with c1:
        show(query_row_figure(data["x"], data["y"], w[qi], float(xq[qi]), float(res["estimate"][qi]),
                              data["x_grid"], data["true"], lang=lang()), key="query_row")
    with c2:
        log_n = math.log(len(xk))
        show(lines(xq, {tr("ah.entropy_series"): res["entropy"]}, tr("ah.entropy_title"), tr("ah.query_x"),
                   tr("fig.entropy_nats"),
                   hlines=[(log_n, tr("ah.log_n", value=f"{log_n:.2f}")), (0.0, tr("ah.one_hot"))],
                   vlines=[(float(xq[qi]), tr("ah.picked"))], height=380), key="entropy")
    row = w[qi]
    unsupported = int(np.isnan(res["entropy"]).sum())
    if unsupported:
        st.caption(tr("ah.no_support_caption", n=unsupported, m=len(xq), kernel=tr(f"kernel.{kernel}")))
    if row.sum() > 0:
        st.markdown(tr("ah.row_text", x=f"{xq[qi]:.3f}", wmax=f"{row.max():.3f}", n_big=int((row > 0.01).sum()),
                        n=len(row), h=f"{res['entropy'][qi]:.2f}", log_n=f"{math.log(len(row)):.2f}"))
    else:
        st.markdown(tr("ah.row_none_text", x=f"{xq[qi]:.3f}", kernel=tr(f"kernel.{kernel}")))

    st.subheader(tr("ah.sweep"))
    ends = cache.heatmap_regimes(*ds, kernel, n_queries)
    shapes = [tr(f"ah.shape_{s}") for s in lessons.ROW_SHAPES]
    right = lessons.row_shape(ends["entropy_large"], math.log(len(data["x"])), ends["max_weight_large"])
    large = ends["large_h"]
    revealed = prediction("ah.wide", tr("ah.predict_q", h=f"{large:g}", kernel=tr(f"kernel.{kernel}")), shapes, right,
                          tr("ah.predict_why", h=f"{large:g}", ent=f"{ends['entropy_large']:.2f}",
                             log_n=f"{math.log(len(data['x'])):.2f}", wmax=f"{ends['max_weight_large']:.3f}"))
    sweep = C.SWEEP.draw() or [h]
    if revealed.shown:                  # the bandwidth the question asked about, among the panels
        sweep = sorted({*sweep, large})
    show_lesson("sigma_sweep", cache.lesson_data("sigma_sweep", data=data, kernel=kernel, bandwidths=tuple(sweep),
                                                 n_queries=n_queries), key="sweep",
                answer=(large, tr("fig.answer_is", answer=shapes[right])) if revealed.shown else None)

    with explanation("ui.what_to_notice"):
        log_n = f"{math.log(len(data['x'])):.2f}"
        small = lessons.small_h_rows(ends, len(data["x"]), kernel)
        density = lessons.entropy_and_density(w, res["entropy"], xq, data["x"], kernel, h)
        lines = [tr("ah.notice"),
                 tr(f"ah.notice_small_{small}", kernel=tr(f"kernel.{kernel}"), small=f"{ends['small_h']:g}",
                    mw_small=f"{ends['max_weight_small']:.2f}", ent_small=f"{ends['entropy_small']:.2f}",
                    n=len(data["x"])),
                 tr("ah.notice_large", large=f"{ends['large_h']:g}", ent_large=f"{ends['entropy_large']:.2f}",
                    log_n=log_n, inv_n=f"{1 / len(data['x']):.2g}", ratio=f"{ends['row_ratio_large']:.2f}"),
                 tr("ah.notice_density" if density["holds"] else "ah.notice_density_not", corr=f"{density['corr']:.2f}",
                    lo=f"{density['lo']:.2f}", hi=f"{density['hi']:.2f}")]
        st.markdown("\n".join(lines))
        st.latex(r"\alpha(x, x_i) = \frac{K\left(\frac{x - x_i}{h}\right)}{\sum_j K\left(\frac{x - x_j}{h}\right)}"
                 r",\qquad H(x) = -\sum_i \alpha(x, x_i)\,\log \alpha(x, x_i) \in [0, \log N]")
