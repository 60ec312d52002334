"""Live training: watch per-head attention entropy while a small transformer learns a toy task."""

import streamlit as st

from explorer import lessons
from explorer.figures.training import kv_timing_figure, schedule_figure
from explorer.ui import cache, live
from explorer.ui.control import lesson_page
from explorer.ui.figure import show
from explorer.ui.layout import explanation
from explorer.ui.state import lang, tr

KV_LENGTHS = (32, 64, 128, 256, 512)   # long enough that per-token work, not overhead, shows

with lesson_page("live_training", live.CONTROLS, question="lt.question",
                 file_name=live.FILE_NAME) as beside_question:
    live.draw_controls(beside_question)
    trainer = live.session_trainer()
    live.draw_buttons()

    @st.fragment(run_every=live.TICK if st.session_state["train.running"] else None)
    def live_view():
        with st.container(key="live-view"):        # the style sheet keeps it from fading while it redraws
            live.live_view(st.session_state["train.trainer"])

    live_view()

    st.subheader(tr("lt.test_header"))
    st.markdown(tr("lt.test_text"))
    live.test_the_heads(trainer)

    with explanation("ui.what_to_notice"):
        task = st.session_state["train.task"]
        st.markdown(tr("lt.watch", task=tr(f"taskname.{task}"), text=tr(f"watch.{task}")))

    with explanation("ui.formula"):
        st.latex(r"\alpha^{(\ell,h)} = \operatorname{softmax}\!\left(\frac{Q K^\top}{\tau\sqrt{d_k}} + M\right),"
                 r"\qquad H^{(\ell,h)} = -\frac{1}{T}\sum_{i=1}^{T}\sum_{j} \alpha_{ij}\log\alpha_{ij}"
                 r"\;\le\; \frac{1}{T}\sum_{i=1}^{T}\log\lvert\{j : M_{ij} = 0\}\rvert")
        st.markdown(tr("lt.formula_text", ceiling=f"{trainer.task.entropy_ceiling():.2f}"))

    st.subheader(tr("lt.schedules"))
    curves = trainer.schedules()
    show(schedule_figure(curves["step"], curves["lr"], curves["temperature"], trainer.step_count, lang=lang()),
         key="schedules")
    st.caption(tr("lt.schedule_text", warmup=trainer.warmup, total=f"{trainer.total_steps:,}",
                  floor=f"{curves['lr'][-1] / trainer.lr:.0%}"))

    st.subheader(tr("lt.kv"))
    st.markdown(tr("lt.kv_text"))
    gap = live.kv_cache_gap(trainer)
    if gap is None:
        st.caption(tr("lt.kv_bidirectional"))
    else:
        st.metric(tr("lt.kv_metric", n=gap[0]), f"{gap[1]:.1e}")
    if st.button(tr("lt.kv_run"), help=tr("lt.kv_run_help"), key="train.kv_run"):
        st.session_state["train.kv_shown"] = True
    if st.session_state.get("train.kv_shown"):
        with st.spinner(tr("spin.kv")):
            timing = cache.kv_timing(KV_LENGTHS)
        show(kv_timing_figure(timing, lang=lang()), key="kv_timing")
        st.caption(tr("lt.kv_caption", **lessons.kv_summary(timing)))
