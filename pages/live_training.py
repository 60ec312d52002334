"""Live training: watch per-head attention entropy while a small transformer learns a toy task."""

import streamlit as st

from explorer import lessons
from explorer.figures.training import kv_flops_figure, kv_timing_figure, schedule_figure
from explorer.training.timing import cache_timing
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
        st.markdown(tr("lt.watch", task=tr(f"taskname.{task}"), text=live.watch_text(trainer)))

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
    flops = cache.kv_flops(KV_LENGTHS)
    show(kv_flops_figure(flops, lang=lang()), key="kv_flops")
    st.caption(tr("lt.kv_flops_caption", **lessons.kv_flops_summary(flops)))
    # Timing is of this machine at this moment: measured on demand, kept for this session only (a busy server's
    # noisy timing is never shown to anyone else), and said to be noisy when it did not settle.
    if st.button(tr("lt.kv_run"), help=tr("lt.kv_run_help"), key="train.kv_run"):
        with st.spinner(tr("spin.kv")):
            st.session_state["train.kv_timing"] = cache_timing(list(KV_LENGTHS))
    timing = st.session_state.get("train.kv_timing")
    if timing:
        show(kv_timing_figure(timing["rows"], lang=lang()), key="kv_timing")
        if lessons.kv_timing_agrees(timing):
            st.caption(tr("lt.kv_caption", rounds=timing["rounds"], **lessons.kv_summary(timing["rows"])))
        else:
            st.warning(tr("lt.kv_noisy", rounds=timing["rounds"], spread=f"{timing['spread']:.0%}"))
