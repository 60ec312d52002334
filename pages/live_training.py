"""Live training: watch per-head attention entropy while a small transformer learns a toy task."""

import time

import numpy as np
import pandas as pd
import streamlit as st

from explorer import lessons
from explorer.data import DATASETS
from explorer.device import get_device
from explorer.figures.training import (
    attention_maps_figure,
    entropy_figure,
    icl_figure,
    kv_timing_figure,
    loss_figure,
    schedule_figure,
)
from explorer.training import (
    COLLAPSE_NATS,
    COLLAPSE_STEPS,
    TASKS,
    TEMPERATURE_SCHEDULES,
    TemperatureSchedule,
    Trainer,
    generate,
    head_warnings,
    make_task,
)
from explorer.ui import cache
from explorer.ui.figure import show
from explorer.ui.state import init_state, keep_shared_state, lang, say, tr
from explorer.ui.urlstate import Param, publish, restore

KV_LENGTHS = (32, 64, 128, 256, 512)   # long enough that per-token work, not overhead, shows
TICK = 0.5                      # seconds between redraws while training
TICK_BUDGET = 0.3               # seconds of training per tick (shorter than the tick)
LRS = [1e-4, 3e-4, 1e-3, 2e-3, 3e-3, 5e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0, 10.0, 100.0, 1000.0]
TEMPS = [0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0]
ARCH_KEYS = ("train.task", "train.layers", "train.heads", "train.d_model", "train.seq_len", "train.mlp",
             "train.seed")

keep_shared_state()
PARAMS = [Param("train.task", "str", tuple(TASKS)), Param("train.layers", "int", lo=1, hi=4),
          Param("train.heads", "int", (1, 2, 4, 8)), Param("train.d_model", "int", (16, 32, 64, 128, 256)),
          Param("train.seq_len", "int", lo=8, hi=32), Param("train.mlp", "bool"),
          Param("train.seed", "int", lo=0, hi=9999), Param("train.lr", "float", tuple(LRS)),
          Param("train.warmup", "int", lo=0, hi=200), Param("train.temp_kind", "str", TEMPERATURE_SCHEDULES),
          Param("train.temp_start", "float", tuple(TEMPS)), Param("train.temp_end", "float", tuple(TEMPS))]
restore(PARAMS, "live_training")
st.title(tr("page.live_training"))
st.markdown(tr("lt.question"))



def _task_defaults(name: str) -> dict:
    """The page's settings for a task: what the task declares (``Task.defaults``)."""
    d = TASKS[name].defaults
    return {"train.layers": d.n_layers, "train.heads": d.n_heads, "train.d_model": d.d_model,
            "train.seq_len": d.seq_len, "train.mlp": d.with_mlp, "train.lr": d.lr, "train.warmup": d.warmup}


# a task that arrives in a link brings its own defaults for every setting the link does not give
_first_task = st.session_state.get("train.task", "reverse")
init_state({"train.task": _first_task, **_task_defaults(_first_task), "train.seed": 0,
            "train.temp_kind": "constant", "train.temp_start": 1.0, "train.temp_end": 1.0,
            "train.running": False, "train.chunk": 5})


def _on_task_change():
    st.session_state.update(_task_defaults(st.session_state["train.task"]))


c1, c2, c3, c4 = st.columns(4)
with c1:
    st.selectbox(tr("lt.task"), list(TASKS), key="train.task", on_change=_on_task_change,
                 format_func=lambda k: tr(f"taskname.{k}"))
    st.caption(tr(f"task.{st.session_state['train.task']}"))
with c2:
    st.slider(tr("lt.layers"), 1, 4, key="train.layers")
    st.select_slider(tr("lt.heads"), [1, 2, 4, 8], key="train.heads")
    st.select_slider(tr("lt.d_model"), [16, 32, 64, 128, 256], key="train.d_model")
with c3:
    st.slider(tr("lt.seq_len"), 8, 32, key="train.seq_len")
    st.toggle(tr("lt.mlp"), key="train.mlp")
    st.number_input(tr("ui.seed"), 0, 9999, key="train.seed", step=1, help=tr("ui.seed_help"))
with c4:
    st.select_slider(tr("lt.lr"), LRS, key="train.lr", format_func=lambda v: f"{v:g}",
                     help=tr("lt.lr_help"))
    st.slider(tr("lt.warmup"), 0, 200, key="train.warmup", step=10)
    st.selectbox(tr("lt.temp"), TEMPERATURE_SCHEDULES, key="train.temp_kind", help=tr("lt.temp_help"),
                 format_func=lambda k: tr(f"tempkind.{k}"))
    t1, t2 = st.columns(2)
    t1.select_slider(tr("lt.start_temp"), TEMPS, key="train.temp_start")
    t2.select_slider(tr("lt.end_temp"), TEMPS, key="train.temp_end",
                     disabled=st.session_state["train.temp_kind"] == "constant")

arch = tuple(st.session_state[k] for k in ARCH_KEYS)


def _build() -> None:
    task = make_task(st.session_state["train.task"], st.session_state["train.seq_len"])
    cfg = task.model_config(n_layers=st.session_state["train.layers"], n_heads=st.session_state["train.heads"],
                            d_model=st.session_state["train.d_model"], with_mlp=st.session_state["train.mlp"])
    st.session_state["train.trainer"] = Trainer(cfg, task, lr=st.session_state["train.lr"],
                                                warmup=st.session_state["train.warmup"],
                                                seed=st.session_state["train.seed"], device=get_device())
    st.session_state["train.arch"] = arch
    st.session_state["train.running"] = False


try:
    if st.session_state.get("train.arch") != arch:
        rebuilt = "train.trainer" in st.session_state
        _build()
        if rebuilt:
            st.info(tr("lt.rebuilt", seed=st.session_state["train.seed"]))
    trainer: Trainer = st.session_state["train.trainer"]
    trainer.set_lr(st.session_state["train.lr"], st.session_state["train.warmup"])
    trainer.set_temperature_schedule(TemperatureSchedule(
        st.session_state["train.temp_kind"], st.session_state["train.temp_start"],
        st.session_state["train.temp_end"] if st.session_state["train.temp_kind"] != "constant"
        else st.session_state["train.temp_start"]))
except ValueError as err:
    st.error(tr("lt.kept", error=say(err)))
    st.stop()


def _start():
    st.session_state["train.running"] = True


def _pause():
    st.session_state["train.running"] = False


def _step():
    st.session_state["train.running"] = False
    st.session_state["train.trainer"].step(10)


def _reset():
    _build()


b1, b2, b3, b4, _ = st.columns([1, 1, 1, 1, 4])
b1.button(tr("lt.start"), on_click=_start, type="primary", disabled=st.session_state["train.running"],
          width="stretch", key="train.start")
b2.button(tr("lt.pause"), on_click=_pause, disabled=not st.session_state["train.running"], width="stretch",
          key="train.pause")
b3.button(tr("lt.step"), on_click=_step, width="stretch", help=tr("lt.step_help"), key="train.step")
b4.button(tr("lt.reset"), on_click=_reset, width="stretch", help=tr("lt.reset_help"), key="train.reset")


def _warning_text(kind, layer, value, task) -> str:
    if kind == "collapsed":
        key = "lt.collapsed" if task.sharp_heads_expected else "lt.collapsed_problem"
        return tr(key, layer=layer, head=value, nats=COLLAPSE_NATS, steps=COLLAPSE_STEPS)
    return tr("lt.duplicate", layer=layer, sim=f"{value:.2f}")


@st.fragment(run_every=TICK if st.session_state["train.running"] else None)
def live_view():
    trainer: Trainer = st.session_state["train.trainer"]
    if st.session_state["train.running"] and not trainer.stopped:
        t0 = time.perf_counter()
        rows = trainer.step(st.session_state["train.chunk"])
        per_step = (time.perf_counter() - t0) / max(1, len(rows))
        st.session_state["train.chunk"] = int(np.clip(TICK_BUDGET / max(per_step, 1e-4), 1, 200))
    if trainer.stopped and st.session_state["train.running"]:
        st.session_state["train.running"] = False
        st.rerun(scope="app")
    if trainer.stopped:
        st.error(say(trainer.stopped))

    with trainer.lock:        # another run of this session may be mid-chunk: read after it, all at once
        rows, step_count, maps = list(trainer.history), trainer.step_count, trainer.attention_maps()
    cfg, task = trainer.config, trainer.task
    m1, m2, m3, m4, m5 = st.columns(5)
    m1.metric(tr("lt.m_step"), step_count)
    if not rows:
        st.info(tr("lt.press_start"))
    else:
        df = pd.DataFrame(rows)
        last = df.iloc[-1]
        m2.metric(tr("lt.m_loss"), f"{last['loss']:.4f}" if np.isfinite(last["loss"]) else tr("lt.m_none"))
        m3.metric(tr("lt.m_acc"), tr("lt.m_none") if np.isnan(last["accuracy"]) else f"{last['accuracy']:.1%}")
        m4.metric(tr("lt.m_lr"), f"{last['lr']:.2g}")
        m5.metric(tr("lt.m_temp"), f"{last['temperature']:.2g}")
        for kind, layer, value in head_warnings(rows, cfg.n_layers, cfg.n_heads, task.entropy_ceiling()):
            (st.info if kind == "collapsed" and task.sharp_heads_expected else st.warning)(
                _warning_text(kind, layer, value, task))
        left, right = st.columns(2)
        with left:
            floor = task.NOISE ** 2 if task.regression else None
            show(loss_figure(df, task.regression, lang=lang(), noise_floor=floor), key="loss")
        with right:
            show(entropy_figure(df, cfg.n_layers, cfg.n_heads, task.entropy_ceiling(), lang=lang()), key="entropy")
        st.dataframe(lessons.score_table(df, cfg.n_layers, cfg.n_heads, lang(), scores=not task.regression),
                     hide_index=True)
        if not task.regression:
            st.caption(tr("lt.scores_caption"))
    if task.regression:
        ex = trainer.example_predictions()
        icl = lessons.icl_view(ex, [m.numpy() for m in maps])
        show(attention_maps_figure(icl["maps"], lang=lang(), x_title=tr("fig.context_by_x")), key="maps")
        show(icl_figure(icl["x"], icl["y"], icl["is_query"], icl["prediction"], DATASETS["sine_mix"].true_fn,
                        lang=lang(), nw_prediction=icl["nw_prediction"],
                        nw_label=tr("fig.nw_same_context", h=f"{icl['h']:.2g}")), key="icl")
        st.markdown(tr("lt.icl_text", mse=f"{icl['mse']:.3f}", nw_mse=f"{icl['nw_mse']:.3f}", h=f"{icl['h']:.2g}",
                       floor=f"{task.NOISE ** 2:.2f}"))
    else:
        show(attention_maps_figure([m.numpy() for m in maps], lang=lang()), key="maps")


live_view()
st.markdown(tr("lt.watch", task=tr(f"taskname.{st.session_state['train.task']}"),
               text=tr(f"watch.{st.session_state['train.task']}")))

trainer = st.session_state["train.trainer"]
st.subheader(tr("lt.schedules"))
curves = trainer.schedules()
show(schedule_figure(curves["step"], curves["lr"], curves["temperature"], trainer.step_count, lang=lang()),
     key="schedules")
st.caption(tr("lt.schedule_text", warmup=trainer.warmup, total=f"{trainer.total_steps:,}",
              floor=f"{curves['lr'][-1] / trainer.lr:.0%}"))

st.subheader(tr("lt.kv"))
st.markdown(tr("lt.kv_text"))
if trainer.config.causal:
    prompt = trainer.example.inputs[:, :4]
    n_new = trainer.config.seq_len - 4
    _, with_cache = generate(trainer.model, prompt, n_new, use_cache=True)
    _, without = generate(trainer.model, prompt, n_new, use_cache=False)
    st.metric(tr("lt.kv_metric", n=n_new), f"{float((with_cache - without).abs().max()):.1e}")
else:
    st.caption(tr("lt.kv_bidirectional"))
if st.button(tr("lt.kv_run"), help=tr("lt.kv_run_help"), key="train.kv_run"):
    st.session_state["train.kv_shown"] = True
if st.session_state.get("train.kv_shown"):
    with st.spinner(tr("spin.kv")):
        timing = cache.kv_timing(KV_LENGTHS)
    show(kv_timing_figure(timing, lang=lang()), key="kv_timing")
    st.caption(tr("lt.kv_caption", **lessons.kv_summary(timing)))

publish(PARAMS)
