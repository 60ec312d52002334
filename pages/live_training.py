"""Live training: watch per-head attention entropy while a small transformer learns a toy task."""

import streamlit as st

from explorer.lessons import live_training as L
from explorer.ui import live
from explorer.ui.control import values
from explorer.ui.figure import show_spec
from explorer.ui.layout import explanation, on_demand, write
from explorer.ui.page import lesson_page, page_part
from explorer.ui.state import tr

with lesson_page(L, question="lt.question") as beside_question:
    live.draw_controls(beside_question)
    run = live.session_run()
    live.draw_buttons(run)

    @st.fragment(run_every=live.TICK if live.running() else None)
    def live_view():
        with st.container(key="live-view"):        # the style sheet keeps it from fading while it redraws
            live.live_view()

    live_view()

    # the heads' tests follow the model while it trains, redrawn every HEADS_TICK s (a part of its own, so that
    # switching a head off reruns it alone)
    @page_part(L, "lt.heads", run_every=live.HEADS_TICK if live.running() else None)
    def test_the_heads():
        st.subheader(tr("lt.test_header"))
        write(L.test_text())
        live.test_the_heads(run.trainer)

    test_the_heads()

    with explanation("ui.what_to_notice"):
        write(L.watch(run.trainer))

    with explanation("ui.formula"):
        st.latex(r"\alpha^{(\ell,h)} = \operatorname{softmax}\!\left(\frac{QK^\top}{\tau\sqrt{d_k}} + M\right),"
                 r"\qquad H^{(\ell,h)} = -\frac{1}{T}\sum_{i=1}^{T}\sum_{j} \alpha_{ij}\log\alpha_{ij}"
                 r"\;\le\; \frac{1}{T}\sum_{i=1}^{T}\log\lvert\{j : M_{ij} = 0\}\rvert")
        write(L.formula_text(run.trainer))

    st.subheader(tr("lt.schedules"))
    specs = L.figures(values(L), run.trainer)
    write(L.schedule_text(show_spec(specs["schedules"])))

    st.subheader(tr("lt.kv"))
    write(L.kv_text())
    gap = L.kv_cache_gap(run.trainer)
    if gap is None:
        write(L.kv_bidirectional())
    else:
        st.metric(tr("lt.kv_metric", n=gap[0]), f"{gap[1]:.1e}")
    write(L.kv_flops_caption(show_spec(specs["kv_flops"])))
    # Timing is of this machine at this moment: measured on demand, kept for this session only (a busy server's
    # noisy timing is never shown to anyone else), and said to be noisy when it did not settle.
    with st.spinner(tr("spin.kv")):
        timing = on_demand(tr("lt.kv_run"), tr("lt.kv_run_help"), "train.kv_run", specs["kv_timing"].data)
    if timing:
        show_spec(specs["kv_timing"], timing)
        write(L.kv_timing_text(timing))
