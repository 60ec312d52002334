"""Live training: watch per-head attention entropy while a small transformer learns a toy task."""

import streamlit as st

from explorer.lessons import live_training as L
from explorer.ui import live
from explorer.ui.figure import show_spec
from explorer.ui.layout import explanation, on_demand
from explorer.ui.page import lesson_page
from explorer.ui.state import tr

with lesson_page(live.C, question="lt.question") as beside_question:
    live.draw_controls(beside_question)
    trainer = live.session_trainer()
    live.draw_buttons()

    @st.fragment(run_every=live.TICK if live.running() else None)
    def live_view():
        with st.container(key="live-view"):        # the style sheet keeps it from fading while it redraws
            live.live_view()

    live_view()

    st.subheader(tr("lt.test_header"))
    st.markdown(tr("lt.test_text"))
    live.test_the_heads(trainer)

    with explanation("ui.what_to_notice"):
        task = live.C.TASK.value
        st.markdown(tr("lt.watch", task=tr(f"taskname.{task}"), text=live.watch_text(trainer)))

    with explanation("ui.formula"):
        st.latex(r"\alpha^{(\ell,h)} = \operatorname{softmax}\!\left(\frac{Q K^\top}{\tau\sqrt{d_k}} + M\right),"
                 r"\qquad H^{(\ell,h)} = -\frac{1}{T}\sum_{i=1}^{T}\sum_{j} \alpha_{ij}\log\alpha_{ij}"
                 r"\;\le\; \frac{1}{T}\sum_{i=1}^{T}\log\lvert\{j : M_{ij} = 0\}\rvert")
        st.markdown(tr("lt.formula_text", ceiling=trainer.task.entropy_ceiling()))

    st.subheader(tr("lt.schedules"))
    specs = L.figures(live.C.values(), trainer)
    curves = show_spec(specs["schedules"])
    st.caption(tr("lt.schedule_text", warmup=curves["warmup"], total=curves['total'],
                  floor=curves['lr'][-1] / curves['lr0']))

    st.subheader(tr("lt.kv"))
    st.markdown(tr("lt.kv_text"))
    gap = L.kv_cache_gap(trainer)
    if gap is None:
        st.caption(tr("lt.kv_bidirectional"))
    else:
        st.metric(tr("lt.kv_metric", n=gap[0]), f"{gap[1]:.1e}")
    flops = show_spec(specs["kv_flops"])["rows"]
    st.caption(tr("lt.kv_flops_caption", **L.kv_flops_summary(flops)))
    # Timing is of this machine at this moment: measured on demand, kept for this session only (a busy server's
    # noisy timing is never shown to anyone else), and said to be noisy when it did not settle.
    with st.spinner(tr("spin.kv")):
        timing = on_demand(tr("lt.kv_run"), tr("lt.kv_run_help"), "train.kv_run", specs["kv_timing"].data)
    if timing:
        show_spec(specs["kv_timing"], timing)
        if L.kv_timing_agrees(timing):
            st.caption(tr("lt.kv_caption", rounds=timing["rounds"], **L.kv_summary(timing["rows"])))
        else:
            st.warning(tr("lt.kv_noisy", rounds=timing["rounds"], spread=timing['spread']))
