"""The Live training page's controller: its controls, the session's trainer, the buttons, and the live view.

The page (``pages/live_training.py``) reads as a lesson and calls into here; everything that keeps a model
training between reruns lives in this module: building the trainer when the architecture changes, applying
learning-rate and temperature settings, the Start/Pause/Step/Reset callbacks, sizing each training chunk so
a redraw stays within its time budget, and the KV-cache check.
"""

from __future__ import annotations

import time
import uuid

import numpy as np
import pandas as pd
import streamlit as st

from ..device import get_device, torch_threads, trainer_threads
from ..lessons import live_training as L
from ..training import (
    COLLAPSE_NATS,
    COLLAPSE_STEPS,
    TASKS,
    TemperatureSchedule,
    Trainer,
    head_warnings,
    make_task,
)
from .cache import spec_data
from .control import controls, stop_page
from .figure import show_spec
from .predict import prediction
from .slots import SLOTS
from .state import lang, lecture_mode, say, tr

TICK = 0.5                      # seconds between redraws while training
LIVE_MAIN_HEIGHT = 320          # px in lecture mode: the live charts under the buttons and metrics, on screen
LIVE_FIRST_HEIGHT = 400         # px: the maps before the first step, when they are all there is under the buttons
TICK_BUDGET = 0.3               # seconds of training per tick (shorter than the tick)


def _load_task_defaults() -> None:
    """Picking a task loads its own architecture and optimiser settings."""
    task = TASKS[st.session_state[L.TASK.key]]
    for param, field in L.TASK_FIELDS.items():
        st.session_state[param.key] = getattr(task.defaults, field)


C = controls(L, on_change={L.TASK: _load_task_defaults})
ARCH = tuple(c for c in C.ALL if c.param in L.ARCH)     # a change builds a new model


def head_name(head: str) -> str:
    return L.head_name(head, lang())


def draw_controls(where) -> None:
    """The settings, in four columns: task, architecture, data and seed, optimiser and temperature (folded into
    one expander in lecture mode, so that the buttons and the live charts get the screen)."""
    with where.expander(tr("lt.settings"), expanded=False) if lecture_mode() else where:
        _draw_controls()


def _draw_controls() -> None:
    c1, c2, c3, c4 = st.columns(4)
    C.TASK.draw(c1)
    c1.caption(tr(f"task.{C.TASK.value}"))
    for control, column in ((C.LAYERS, c2), (C.HEADS, c2), (C.D_MODEL, c2), (C.SEQ_LEN, c3), (C.MLP, c3), (C.SEED, c3),
                            (C.LR, c4), (C.WARMUP, c4), (C.TEMP_KIND, c4)):
        control.draw(column)
    t1, t2 = c4.columns(2)
    C.TEMP_START.draw(t1)
    C.TEMP_END.draw(t2, disabled=C.TEMP_KIND.value == "constant")


def _architecture() -> tuple:
    return tuple(st.session_state[c.key] for c in ARCH)


def _build() -> None:
    s = st.session_state
    task = make_task(s["train.task"], s["train.seq_len"])
    cfg = task.model_config(n_layers=s["train.layers"], n_heads=s["train.heads"], d_model=s["train.d_model"],
                            with_mlp=s["train.mlp"])
    s["train.trainer"] = Trainer(cfg, task, lr=s["train.lr"], warmup=s["train.warmup"], seed=s["train.seed"],
                                 device=get_device())
    s["train.arch"], s["train.running"] = _architecture(), False
    SLOTS.release(_session())


def session_trainer() -> Trainer:
    """The session's trainer with the current settings: rebuilt (with a notice) when the architecture changed,
    its learning rate and temperature schedule updated otherwise. A setting it refuses stops the page with one
    sentence and keeps the previous model."""
    s = st.session_state
    s.setdefault("train.running", False)
    s.setdefault("train.chunk", 5)
    try:
        if s.get("train.arch") != _architecture():
            rebuilt = "train.trainer" in s
            _build()
            if rebuilt:
                st.info(tr("lt.rebuilt", seed=s["train.seed"]))
        trainer: Trainer = s["train.trainer"]
        trainer.set_lr(s["train.lr"], s["train.warmup"])
        end = s["train.temp_end"] if s["train.temp_kind"] != "constant" else s["train.temp_start"]
        trainer.set_temperature_schedule(TemperatureSchedule(s["train.temp_kind"], s["train.temp_start"], end))
    except ValueError as err:
        stop_page(tr("lt.kept", error=say(err)))
    return trainer


def _set_running(on: bool) -> None:
    st.session_state["train.running"] = on
    if not on:
        SLOTS.release(_session())


def _step() -> None:
    st.session_state["train.running"] = False
    st.session_state["train.trainer"].step(10)


def draw_buttons() -> None:
    running = st.session_state["train.running"]
    with st.container(horizontal=True):          # a row that wraps, each button as wide as its label
        st.button(tr("lt.start"), on_click=_set_running, args=(True,), type="primary", disabled=running,
                  key="train.start", icon=":material/play_arrow:")
        st.button(tr("lt.pause"), on_click=_set_running, args=(False,), disabled=not running, key="train.pause",
                  icon=":material/pause:")
        st.button(tr("lt.step"), on_click=_step, help=tr("lt.step_help"), key="train.step")
        st.button(tr("lt.reset"), on_click=_build, help=tr("lt.reset_help"), key="train.reset")


def _session() -> str:
    """This browser session's name in the training line (a random token kept in its state)."""
    return st.session_state.setdefault("train.slot_id", uuid.uuid4().hex)


def advance(trainer: Trainer) -> None:
    """Train one chunk while running, sized so that it takes about ``TICK_BUDGET`` seconds, when this session holds
    one of the server's training slots (``explorer.ui.slots``); otherwise say its place in the line; stop on a halt."""
    s = st.session_state
    if s["train.running"] and not trainer.stopped:
        place = SLOTS.claim(_session())
        if place:
            k, _, waiting = SLOTS.status()
            st.info(tr("lt.queued", place=place, waiting=waiting, k=k))
            return
        t0 = time.perf_counter()
        with torch_threads(trainer_threads()):      # leave the other cores to the other sessions
            rows = trainer.step(s["train.chunk"])
        per_step = (time.perf_counter() - t0) / max(1, len(rows))
        s["train.chunk"] = int(np.clip(TICK_BUDGET / max(per_step, 1e-4), 1, 200))
    if trainer.stopped and s["train.running"]:
        s["train.running"] = False
        SLOTS.release(_session())
        st.rerun(scope="app")
    if trainer.stopped:
        st.error(say(trainer.stopped))


def compact(value: float) -> str:
    """A metric tile's number: 4 decimals up to 10⁴, then 3 significant digits ("1.27e+09"), never a long row of
    digits; a non-finite value as a dash."""
    if not np.isfinite(value):
        return tr("lt.m_none")
    return f"{value:.4f}" if abs(value) < 1e4 else f"{value:.3g}"


def _head_notes(notes: list, task) -> None:
    """The heads' notices (collapsed, duplicate) as one box: a warning if any of them is a problem for this task."""
    lines, problem = [], False
    for kind, layer, value in notes:
        if kind == "collapsed":
            key = "lt.collapsed" if task.sharp_heads_expected else "lt.collapsed_problem"
            problem |= not task.sharp_heads_expected
            lines.append(tr(key, layer=layer, head=value, nats=COLLAPSE_NATS, steps=COLLAPSE_STEPS))
        else:
            problem = True
            lines.append(tr("lt.duplicate", layer=layer, sim=value))
    text = lines[0] if len(lines) == 1 else "\n".join(f"- {line}" for line in lines)
    (st.warning if problem else st.info)(text)


def running() -> bool:
    """Whether the session's model is training (the live view then redraws every ``TICK``)."""
    return st.session_state.get("train.running", False)


def live_view() -> None:
    """Metrics, warnings, the loss and entropy curves, the score table and the task's example, from one
    consistent read of the session's trainer."""
    trainer = st.session_state["train.trainer"]
    advance(trainer)
    specs = L.figures(C.values(), trainer)
    data = spec_data(specs["training_entropy"])
    rows, cfg, task = data["rows"], trainer.config, trainer.task
    if not rows:                     # nothing trained yet: one line, and the maps get the screen
        st.info(tr("lt.press_start"))
    else:
        m1, m2, m3, m4, m5 = st.columns(5)
        m1.metric(tr("lt.m_step"), data["step_count"])
        df, last = pd.DataFrame(rows), rows[-1]
        # after a stop, the tile shows the last good step's loss and says so (the message names the bad value)
        m2.metric(tr("lt.m_loss_last") if trainer.stopped else tr("lt.m_loss"), compact(last["loss"]))
        m3.metric(tr("lt.m_acc"), tr("lt.m_none") if np.isnan(last["accuracy"]) else f"{last['accuracy']:.1%}")
        m4.metric(tr("lt.m_lr"), f"{last['lr']:.2g}")
        m5.metric(tr("lt.m_temp"), f"{last['temperature']:.2g}")
        notes = head_warnings(rows, cfg.n_layers, cfg.n_heads, task.entropy_ceiling())
        left, right = st.columns(2)
        if lecture_mode():           # the attention maps (the point of the lesson) on screen, beside the entropy
            with left:
                _maps(trainer, specs, data, main=True)
            with right:
                show_spec(specs["training_entropy"], data, key="entropy", main=LIVE_MAIN_HEIGHT)
            show_spec(specs["training_loss"], data, key="loss", main=LIVE_MAIN_HEIGHT)
        else:
            with left:
                show_spec(specs["training_loss"], data, key="loss")
            with right:
                show_spec(specs["training_entropy"], data, key="entropy")
        if notes:                    # below the charts, in one box: several heads would push the charts off screen
            _head_notes(notes, task)
        baseline = L.uniform_baseline(trainer)
        st.dataframe(L.score_table(df, cfg.n_layers, cfg.n_heads, lang(), scores=not task.regression,
                                         baseline=baseline), hide_index=True)
        if not task.regression:
            st.caption(tr("lt.scores_caption", u_prev=baseline['prevtok'],
                          u_ind=baseline['induction'],
                          rows=tr("lt.rows_first_copy" if task.map_block(trainer.example) is not None
                                  else "lt.rows_all")))
        if lecture_mode():
            return
    _maps(trainer, specs, data, main=not rows)     # before the first step the maps are all there is to see


def _maps(trainer: Trainer, specs: dict, data: dict, main: bool) -> None:
    """The attention maps on the held-out example (and, in-context regression, the example's fit)."""
    if "icl_maps" not in specs:
        show_spec(specs["training_head_maps"], data, key="maps",
                  main=main and (LIVE_MAIN_HEIGHT if trainer.history else LIVE_FIRST_HEIGHT))
        return
    icl = show_spec(specs["icl_maps"], key="maps", main=main and LIVE_MAIN_HEIGHT)
    show_spec(specs["icl_fit"], icl, key="icl")
    st.markdown(tr("lt.icl_text", mse=icl['mse'], nw_mse=icl['nw_mse'], h=icl['h'],
                   floor=icl['floor']))


# ------------------------------------------------------------------------------------ testing the heads


def watch_text(trainer: Trainer) -> str:
    """What to watch for on the current task; on the induction task, with what models at its defaults do across
    seeds 0-9 (``L.INDUCTION_SEEDS``) against uniform attention's scores."""
    task = trainer.task.name
    if task != "induction":
        return tr(f"watch.{task}")
    seeds, base = L.INDUCTION_SEEDS, L.uniform_baseline(trainer)
    return tr("watch.induction", prev_lo=seeds['prev'][0], prev_hi=seeds['prev'][1],
              ind_lo=seeds['ind'][0], ind_hi=seeds['ind'][1], u_prev=base['prevtok'],
              u_ind=base['induction'])


def test_the_heads(trainer: Trainer) -> None:
    """Ablation on the live model (evaluation only: the weights being trained are never touched), each head
    switched off in turn, the heads' scores over training, and the circuits read from the weights."""
    task, cfg = trainer.task, trainer.config
    heads = L.heads(trainer)
    c1, c2 = st.columns([3, 1])
    chosen = C.ABLATE.draw(c1, options=heads)
    result = L.ablation(trainer, chosen, C.ABLATE_HOW.draw(c2))
    intact, off, importance, untrained = (result[k] for k in ("intact", "off", "importance", "untrained"))
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(tr("lt.intact_loss"), compact(intact[0]))
    m2.metric(tr("lt.ablated_loss", n=len(chosen)), compact(off[0]), delta=f"{off[0] - intact[0]:+.3g}",
              delta_color="inverse")
    if not task.regression:
        m3.metric(tr("lt.intact_acc"), f"{intact[1]:.1%}")
        m4.metric(tr("lt.ablated_acc", n=len(chosen)), f"{off[1]:.1%}",
                  delta=tr("lt.pp_delta", pp=(off[1] - intact[1]) * 100))
    ranked = sorted((k for k in importance if k != "intact"), key=lambda k: importance[k], reverse=True)
    top = ranked[0]
    pairs = [L.head_pair(h) for h in heads]
    rise = importance[top] - importance["intact"]
    revealed = prediction("lt.head", tr("lt.predict_q"), [head_name(h) for h in heads], pairs.index(top),
                          tr("lt.predict_why", rise=rise))
    specs = L.figures(C.values(), trainer)
    show_spec(specs["head_importance"], {"importance": importance, "untrained": untrained}, key="importance",
              answer=top if revealed.shown else None)
    caption = tr("lt.importance_caption", head=head_name(f"l{top[0]}h{top[1]}"), rise=rise,
                 base=importance['intact'])
    if result["together"] is not None:        # do the last layer's heads cover for each other?
        last = cfg.n_layers - 1
        c = L.cover([importance[(last, h)] - importance["intact"] for h in range(cfg.n_heads)],
                    result["together"] - importance["intact"], untrained - importance["intact"])
        caption += tr("punct.space") + tr("lt.cover" if c["covers"] else "lt.no_cover", layer=last,
                                          alone=c['alone'], together=c['together'])
    st.caption(caption)
    rows = trainer.history
    if rows and "head_scores" in specs:
        show_spec(specs["head_scores"], key="scores")
    if not task.regression:
        _circuits(trainer, heads)


def _circuits(trainer: Trainer, heads: list[str]) -> None:
    cfg = trainer.config
    st.markdown(tr("lt.circuits_text"))
    if cfg.with_mlp:
        st.caption(tr("lt.circuits_mlp"))
    C.CIRCUIT_HEAD.draw(options=heads)
    read = show_spec(L.figures(C.values(), trainer)["qk_circuit"], key="qk")
    copying, composition, at_init = read["copying"], read["composition"], read["at_init"]
    if trainer.task.map_block(trainer.example) is not None:       # the induction task: its heads should copy
        seeds = L.INDUCTION_SEEDS
        st.caption(tr("lt.circuits_induction", l1_lo=seeds['l1_copy'][0], l1_hi=seeds['l1_copy'][1],
                      l0_lo=seeds['l0_copy'][0], l0_hi=seeds['l0_copy'][1],
                      odd=tr("punct.list").join(f"{v:.2f}" for v in seeds["odd_copy"])))
    table = pd.DataFrame({tr("lt.col_head"): [head_name(h) for h in heads],
                          tr("lt.col_copying"): [round(copying[h], 3) for h in heads]})
    left, right = st.columns(2)
    left.dataframe(table, hide_index=True)
    if composition:
        later = sorted({b for _, b in composition})
        earlier = sorted({a for a, _ in composition})
        grid = pd.DataFrame([[tr("lt.kcomp_cell", now=composition[(a, b)], init=at_init[(a, b)])
                              for b in later] for a in earlier],
                            index=[head_name(a) for a in earlier], columns=[head_name(b) for b in later])
        right.caption(tr("lt.kcomp_caption", lo=min(at_init.values()), hi=max(at_init.values())))
        right.dataframe(grid)
