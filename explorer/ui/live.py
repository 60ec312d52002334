"""The Live training page's controller: its controls, the session's trainer, the buttons, and the live view.

The page (``pages/live_training.py``) reads as a lesson and calls into here; everything that keeps a model
training between reruns lives in this module: building the trainer when the architecture changes, applying
learning-rate and temperature settings, the Start/Pause/Step/Reset callbacks, sizing each training chunk so
a redraw stays within its time budget, and the KV-cache check.
"""

from __future__ import annotations

import math
import time
import uuid

import numpy as np
import pandas as pd
import streamlit as st
import torch

from .. import lessons
from ..data import DATASETS
from ..device import get_device, torch_threads, trainer_threads
from ..figures.registry import FIGURES
from ..figures.training import (
    attention_maps_figure,
    icl_figure,
    importance_figure,
    loss_figure,
    qk_figure,
    scores_figure,
)
from ..training import (
    COLLAPSE_NATS,
    COLLAPSE_STEPS,
    TASKS,
    TEMPERATURE_SCHEDULES,
    TemperatureSchedule,
    Trainer,
    ablate,
    copying_score,
    generate,
    head_importance,
    head_warnings,
    k_composition,
    make_task,
    ov_circuit,
    qk_circuit,
    uniform_scores,
)
from ..training.circuits import HOW
from .control import Control, stop_page
from .controls import seed_control
from .figure import show
from .predict import prediction
from .slots import SLOTS
from .state import lang, lecture_mode, say, tr

TICK = 0.5                      # seconds between redraws while training
LIVE_MAIN_HEIGHT = 320          # px in lecture mode: the live charts under the buttons and metrics, on screen
LIVE_FIRST_HEIGHT = 400         # px: the maps before the first step, when they are all there is under the buttons
TICK_BUDGET = 0.3               # seconds of training per tick (shorter than the tick)
# the useful range (1e-4 to 0.3) takes most of the slider; 1 and 1000 stay to show what "too high" does
LRS = (1e-4, 2e-4, 3e-4, 5e-4, 1e-3, 2e-3, 3e-3, 5e-3, 1e-2, 2e-2, 3e-2, 5e-2, 0.1, 0.3, 1.0, 1000.0)
TEMPS = (0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0)


def _task_default(field: str):
    """The default of a setting: what the current task declares (``Task.defaults``)."""
    return lambda: getattr(TASKS[st.session_state.get("train.task", "reverse")].defaults, field)


def _load_task_defaults() -> None:
    """Picking a task loads its own architecture and optimiser settings."""
    for control, field in TASK_FIELDS.items():
        st.session_state[control.key] = getattr(TASKS[st.session_state["train.task"]].defaults, field)


TASK = Control("train.task", "select", "reverse", "lt.task", options=tuple(TASKS), names="taskname.",
               on_change=_load_task_defaults)
LAYERS = Control("train.layers", "slider", _task_default("n_layers"), "lt.layers", lo=1, hi=4)
HEADS = Control("train.heads", "select_slider", _task_default("n_heads"), "lt.heads", options=(1, 2, 4, 8))
D_MODEL = Control("train.d_model", "select_slider", _task_default("d_model"), "lt.d_model",
                  options=(16, 32, 64, 128, 256))
SEQ_LEN = Control("train.seq_len", "slider", _task_default("seq_len"), "lt.seq_len", lo=8, hi=32)
MLP = Control("train.mlp", "toggle", _task_default("with_mlp"), "lt.mlp")
SEED = seed_control("train.seed")
LR = Control("train.lr", "select_slider", _task_default("lr"), "lt.lr", "lt.lr_help", options=LRS, fmt="g")
WARMUP = Control("train.warmup", "slider", _task_default("warmup"), "lt.warmup", lo=0, hi=200, step=10)
TEMP_KIND = Control("train.temp_kind", "select", "constant", "lt.temp", "lt.temp_help",
                    options=TEMPERATURE_SCHEDULES, names="tempkind.")
TEMP_START = Control("train.temp_start", "select_slider", 1.0, "lt.start_temp", options=TEMPS)
TEMP_END = Control("train.temp_end", "select_slider", 1.0, "lt.end_temp", options=TEMPS)
ALL_HEADS = tuple(f"l{layer}h{head}" for layer in range(4) for head in range(8))     # the largest model's


def head_name(head: str) -> str:
    """How a head ("l1h0") reads in the pickers, the tables and the charts alike ("L1 H0")."""
    layer, number = _pair(head)
    return tr("fig.layer_head", layer=layer, head=number)


def _pair(name: str) -> tuple[int, int]:
    layer, head = name[1:].split("h")
    return int(layer), int(head)


ABLATE = Control("train.ablate", "multiselect", [], "lt.ablate", "lt.ablate_help", options=ALL_HEADS,
                 text=head_name)
ABLATE_HOW = Control("train.ablate_how", "select", "zero", "lt.ablate_how", "lt.ablate_how_help", options=HOW,
                     names="ablhow.")
CIRCUIT_HEAD = Control("train.circuit_head", "select", "l0h0", "lt.circuit_head", options=ALL_HEADS,
                       text=head_name)
CONTROLS = [TASK, LAYERS, HEADS, D_MODEL, SEQ_LEN, MLP, SEED, LR, WARMUP, TEMP_KIND, TEMP_START, TEMP_END, ABLATE,
            ABLATE_HOW, CIRCUIT_HEAD]
TASK_FIELDS = {LAYERS: "n_layers", HEADS: "n_heads", D_MODEL: "d_model", SEQ_LEN: "seq_len", MLP: "with_mlp",
               LR: "lr", WARMUP: "warmup"}
ARCH = (TASK, LAYERS, HEADS, D_MODEL, SEQ_LEN, MLP, SEED)     # a change builds a new model
FILE_NAME = ((TASK, "{}"), (LAYERS, "{}layers"), (HEADS, "{}heads"))     # in exported figures' file names


def draw_controls(where) -> None:
    """The settings, in four columns: task, architecture, data and seed, optimiser and temperature (folded into
    one expander in lecture mode, so that the buttons and the live charts get the screen)."""
    with where.expander(tr("lt.settings"), expanded=False) if lecture_mode() else where:
        _draw_controls()


def _draw_controls() -> None:
    c1, c2, c3, c4 = st.columns(4)
    TASK.draw(c1)
    c1.caption(tr(f"task.{TASK.value}"))
    for control, column in ((LAYERS, c2), (HEADS, c2), (D_MODEL, c2), (SEQ_LEN, c3), (MLP, c3), (SEED, c3),
                            (LR, c4), (WARMUP, c4), (TEMP_KIND, c4)):
        control.draw(column)
    t1, t2 = c4.columns(2)
    TEMP_START.draw(t1)
    TEMP_END.draw(t2, disabled=TEMP_KIND.value == "constant")


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
            lines.append(tr("lt.duplicate", layer=layer, sim=f"{value:.2f}"))
    text = lines[0] if len(lines) == 1 else "\n".join(f"- {line}" for line in lines)
    (st.warning if problem else st.info)(text)


def live_view(trainer: Trainer) -> None:
    """Metrics, warnings, the loss and entropy curves, the score table and the task's example, from one
    consistent read of the trainer."""
    advance(trainer)
    data = FIGURES["training_entropy"].compute(trainer=trainer)
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
        entropy = FIGURES["training_entropy"].draw(data, lang())
        loss = loss_figure(df, task.regression, lang=lang(), noise_floor=task.loss_floor())
        left, right = st.columns(2)
        if lecture_mode():           # the attention maps (the point of the lesson) on screen, beside the entropy
            with left:
                _maps(trainer, data, main=True)
            with right:
                show(entropy, key="entropy", main=LIVE_MAIN_HEIGHT)
            show(loss, key="loss", main=LIVE_MAIN_HEIGHT)
        else:
            with left:
                show(loss, key="loss")
            with right:
                show(entropy, key="entropy")
        if notes:                    # below the charts, in one box: several heads would push the charts off screen
            _head_notes(notes, task)
        baseline = _uniform_baseline(trainer)
        st.dataframe(lessons.score_table(df, cfg.n_layers, cfg.n_heads, lang(), scores=not task.regression,
                                         baseline=baseline), hide_index=True)
        if not task.regression:
            st.caption(tr("lt.scores_caption", u_prev=f"{baseline['prevtok']:.2f}",
                          u_ind=f"{baseline['induction']:.2f}",
                          rows=tr("lt.rows_first_copy" if task.map_block(trainer.example) is not None
                                  else "lt.rows_all")))
        if lecture_mode():
            return
    _maps(trainer, data, main=not rows)            # before the first step the maps are all there is to see


def _maps(trainer: Trainer, data: dict, main: bool) -> None:
    """The attention maps on the held-out example (and, in-context regression, the example's fit)."""
    if trainer.task.regression:
        _icl_example(trainer, data["maps"], main)
    else:
        show(FIGURES["training_head_maps"].draw(data, lang()), key="maps",
             main=main and (LIVE_MAIN_HEIGHT if trainer.history else LIVE_FIRST_HEIGHT))


def _icl_example(trainer: Trainer, maps, main: bool = False) -> None:
    """In-context regression: the attention over the context by x, the model's predictions and NW's."""
    icl = lessons.icl_view(trainer.example_predictions(), maps)
    show(attention_maps_figure(icl["maps"], lang=lang(), x_title=tr("fig.context_by_x")), key="maps",
         main=main and LIVE_MAIN_HEIGHT)
    show(icl_figure(icl["x"], icl["y"], icl["is_query"], icl["prediction"], DATASETS["sine_mix"].true_fn,
                    lang=lang(), nw_prediction=icl["nw_prediction"],
                    nw_label=tr("fig.nw_same_context", h=f"{icl['h']:.2g}")), key="icl")
    st.markdown(tr("lt.icl_text", mse=f"{icl['mse']:.3f}", nw_mse=f"{icl['nw_mse']:.3f}", h=f"{icl['h']:.2g}",
                   floor=f"{trainer.task.loss_floor():.2f}"))


def kv_cache_gap(trainer: Trainer) -> tuple[int, float] | None:
    """(tokens generated, largest logit difference) between generating with and without the KV cache from the
    example's first four tokens; None for a bidirectional model, which has no cache."""
    if not trainer.config.causal:
        return None
    prompt = trainer.example.inputs[:, :4]
    n_new = trainer.config.seq_len - 4
    _, with_cache = generate(trainer.model, prompt, n_new, use_cache=True)
    _, without = generate(trainer.model, prompt, n_new, use_cache=False)
    return n_new, float((with_cache - without).abs().max())


# ------------------------------------------------------------------------------------ testing the heads
EVAL_SEED, EVAL_SIZE = 2024, 128        # one fixed evaluation batch per model


def _heads(trainer: Trainer) -> list[str]:
    return [f"l{layer}h{head}" for layer in range(trainer.config.n_layers) for head in range(trainer.config.n_heads)]


def watch_text(trainer: Trainer) -> str:
    """What to watch for on the current task; on the induction task, with what models at its defaults do across
    seeds 0-9 (``lessons.INDUCTION_SEEDS``) against uniform attention's scores."""
    task = trainer.task.name
    if task != "induction":
        return tr(f"watch.{task}")
    seeds, base = lessons.INDUCTION_SEEDS, _uniform_baseline(trainer)
    return tr("watch.induction", prev_lo=f"{seeds['prev'][0]:.2f}", prev_hi=f"{seeds['prev'][1]:.2f}",
              ind_lo=f"{seeds['ind'][0]:.2f}", ind_hi=f"{seeds['ind'][1]:.2f}", u_prev=f"{base['prevtok']:.2f}",
              u_ind=f"{base['induction']:.2f}")


def eval_batch(trainer: Trainer):
    """The model's fixed evaluation batch (same tokens for every ablation and every step)."""
    key = ("train.eval_batch", id(trainer))
    if st.session_state.get("train.eval_key") != key:
        st.session_state["train.eval_key"] = key
        st.session_state["train.eval"] = trainer.task.batch(EVAL_SIZE, torch.Generator().manual_seed(EVAL_SEED)) \
            .to(trainer.device)
    return st.session_state["train.eval"]


def _uniform_baseline(trainer: Trainer) -> dict:
    """Entropy, prevtok and induction of uniform attention on the model's evaluation batch: what the head scores
    of the table and the chart are to be read against."""
    memo = st.session_state.get("train.uniform")
    if memo is None or memo[0] != id(trainer):
        scores = uniform_scores(trainer.task, eval_batch(trainer)) if not trainer.task.regression else \
            {"prevtok": math.nan, "induction": math.nan}
        memo = (id(trainer), {"entropy": trainer.task.entropy_ceiling(), **scores})
        st.session_state["train.uniform"] = memo
    return memo[1]


def _loss_and_accuracy(trainer: Trainer, out, batch) -> tuple[float, float]:
    loss = float(trainer.task.loss(out, batch))
    acc = trainer.task.accuracy(out, batch)
    return loss, (math.nan if acc is None else float(acc))


def test_the_heads(trainer: Trainer) -> None:
    """Ablation on the live model (evaluation only: the weights being trained are never touched), each head
    switched off in turn, the heads' scores over training, and the circuits read from the weights."""
    task, cfg = trainer.task, trainer.config
    heads = _heads(trainer)
    c1, c2 = st.columns([3, 1])
    chosen = ABLATE.draw(c1, options=heads)
    how = ABLATE_HOW.draw(c2)
    batch = eval_batch(trainer)
    with trainer.lock:
        intact = _loss_and_accuracy(trainer, ablate(trainer.model, batch.inputs, [], how, batch.attn_mask,
                                                    trainer.temperature), batch)
        off = _loss_and_accuracy(trainer, ablate(trainer.model, batch.inputs, [_pair(h) for h in chosen], how,
                                                 batch.attn_mask, trainer.temperature), batch)
        importance = _importance(trainer, batch, how)
        untrained = _untrained_loss(trainer, batch)
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(tr("lt.intact_loss"), compact(intact[0]))
    m2.metric(tr("lt.ablated_loss", n=len(chosen)), compact(off[0]), delta=f"{off[0] - intact[0]:+.3g}",
              delta_color="inverse")
    if not task.regression:
        m3.metric(tr("lt.intact_acc"), f"{intact[1]:.1%}")
        m4.metric(tr("lt.ablated_acc", n=len(chosen)), f"{off[1]:.1%}", delta=f"{(off[1] - intact[1]) * 100:+.1f} pp")
    ranked = sorted((k for k in importance if k != "intact"), key=lambda k: importance[k], reverse=True)
    top = ranked[0]
    pairs = [_pair(h) for h in heads]
    rise = importance[top] - importance["intact"]
    revealed = prediction("lt.head", tr("lt.predict_q"), [head_name(h) for h in heads], pairs.index(top),
                          tr("lt.predict_why", rise=f"{rise:.3g}"))
    show(importance_figure(importance, untrained, answer=top if revealed.shown else None, lang=lang()),
         key="importance")
    caption = tr("lt.importance_caption", head=head_name(f"l{top[0]}h{top[1]}"), rise=f"{rise:.3g}",
                 base=f"{importance['intact']:.3g}")
    if cfg.n_layers >= 2 and cfg.n_heads >= 2 and trainer.history:    # do the last layer's heads cover for each other?
        last = cfg.n_layers - 1
        with trainer.lock:
            together = _loss_and_accuracy(trainer, ablate(trainer.model, batch.inputs, [(last, h) for h in
                                                                                        range(cfg.n_heads)],
                                                          how, batch.attn_mask, trainer.temperature), batch)[0]
        c = lessons.cover([importance[(last, h)] - importance["intact"] for h in range(cfg.n_heads)],
                          together - importance["intact"], untrained - importance["intact"])
        caption += tr("punct.space") + tr("lt.cover" if c["covers"] else "lt.no_cover", layer=last,
                                          alone=f"{c['alone']:.0%}", together=f"{c['together']:.0%}")
    st.caption(caption)
    rows = trainer.history
    if rows and not task.regression and cfg.n_layers >= 2:
        show(scores_figure(pd.DataFrame(rows), cfg.n_layers, cfg.n_heads, lang=lang(),
                           baseline=_uniform_baseline(trainer)), key="scores")
    if not task.regression:
        _circuits(trainer, heads)


def _importance(trainer: Trainer, batch, how: str) -> dict:
    """Each head switched off in turn, recomputed only when the weights moved (a new step), the temperature or
    ``how`` changed: a rerun for another control does not pay for one forward pass per head again."""
    key = (id(trainer), trainer.step_count, trainer.temperature, how)
    memo = st.session_state.get("train.importance")
    if memo is None or memo[0] != key:
        memo = (key, head_importance(trainer.model, batch, trainer.task.loss, how, trainer.temperature))
        st.session_state["train.importance"] = memo
    return memo[1]


def _untrained_loss(trainer: Trainer, batch) -> float:
    """The evaluation loss of this model before any training (its initial weights rebuilt from its seed), once
    per model: the bars' shares are of the gap between it and the loss now."""
    memo = st.session_state.get("train.untrained")
    if memo is None or memo[0] != id(trainer):
        model = trainer.initial_model()
        memo = (id(trainer), float(trainer.task.loss(ablate(model, batch.inputs, [], "zero", batch.attn_mask), batch)))
        st.session_state["train.untrained"] = memo
    return memo[1]


def _composition(model, heads: list[str]) -> dict:
    """K-composition of every layer-0 head (writing) with every layer-1 head (keys reading)."""
    return {(a, b): k_composition(model, _pair(a), _pair(b))
            for a in heads for b in heads if _pair(a)[0] == 0 and _pair(b)[0] == 1}


def _initial_composition(trainer: Trainer, heads: list[str]) -> dict:
    """The same K-composition of the model's initial weights, once per model: random weights compose too, and a
    trained value means something only against it."""
    memo = st.session_state.get("train.kcomp_init")
    if memo is None or memo[0] != id(trainer):
        memo = (id(trainer), _composition(trainer.initial_model(), heads))
        st.session_state["train.kcomp_init"] = memo
    return memo[1]


def _circuits(trainer: Trainer, heads: list[str]) -> None:
    cfg = trainer.config
    st.markdown(tr("lt.circuits_text"))
    if cfg.with_mlp:
        st.caption(tr("lt.circuits_mlp"))
    layer, head = _pair(CIRCUIT_HEAD.draw(options=heads))
    with trainer.lock:
        qk = qk_circuit(trainer.model, layer, head)
        copying = {h: copying_score(ov_circuit(trainer.model, *_pair(h))) for h in heads}
        composition = _composition(trainer.model, heads)
    at_init = _initial_composition(trainer, heads)
    show(qk_figure(qk, layer, head, lang=lang()), key="qk")
    if trainer.task.map_block(trainer.example) is not None:       # the induction task: its heads should copy
        seeds = lessons.INDUCTION_SEEDS
        st.caption(tr("lt.circuits_induction", l1_lo=f"{seeds['l1_copy'][0]:.2f}", l1_hi=f"{seeds['l1_copy'][1]:.2f}",
                      l0_lo=f"{seeds['l0_copy'][0]:.2f}", l0_hi=f"{seeds['l0_copy'][1]:.2f}",
                      odd=tr("punct.list").join(f"{v:.2f}" for v in seeds["odd_copy"])))
    table = pd.DataFrame({tr("lt.col_head"): [head_name(h) for h in heads],
                          tr("lt.col_copying"): [round(copying[h], 3) for h in heads]})
    left, right = st.columns(2)
    left.dataframe(table, hide_index=True)
    if composition:
        later = sorted({b for _, b in composition})
        earlier = sorted({a for a, _ in composition})
        grid = pd.DataFrame([[tr("lt.kcomp_cell", now=f"{composition[(a, b)]:.2f}", init=f"{at_init[(a, b)]:.2f}")
                              for b in later] for a in earlier],
                            index=[head_name(a) for a in earlier], columns=[head_name(b) for b in later])
        right.caption(tr("lt.kcomp_caption", lo=f"{min(at_init.values()):.2f}", hi=f"{max(at_init.values()):.2f}"))
        right.dataframe(grid)
