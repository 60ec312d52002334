"""The Live training page's widgets: its settings, the buttons, the live view and the heads' tests.

The model being trained and its lifecycle (built from the settings, started, paused, trained a chunk per tick, its
place in the server's training line) are ``explorer.training.live.LiveRun``, one per browser session, kept in the
session's state; what the page says is ``explorer.lessons.live_training``'s. This module draws them.
"""

from __future__ import annotations

import json
import uuid
from importlib.resources import files

import numpy as np
import pandas as pd
import streamlit as st

from ..lessons import live_training as L
from ..outside import Outside
from ..training import TASKS, Trainer
from ..training.live import ARCHITECTURE, HEADS_TICK, TICK, LiveRun, trained_with
from ..training.saved import from_bytes
from ..training.slots import SLOTS
from ..training.worker import POOL
from .control import ON_CHANGE, draw, stop_page, value, values
from .figure import show_spec
from .internals import charts_kept_by_key
from .layout import write
from .predict import prediction
from .state import lang, lecture_mode, say, tr

_update_charts = st.components.v2.component(
    "explorer_live_charts", js=(files("explorer.ui") / "web" / "live.mjs").read_text(encoding="utf-8"))

LIVE_MAIN_HEIGHT = 306          # px in lecture mode: the entropy under the step's numbers, on screen
LIVE_MAPS_HEIGHT = 392          # px in lecture mode: the maps under the buttons, beside the numbers and entropy
LIVE_FIRST_HEIGHT = 392         # px: the maps before the first step, when they are all there is under the buttons
RUN = "train.run"               # the session's LiveRun
MAPS_LAYER = "train.maps_layer"   # lecture mode: the layer whose heads the maps show


def _load_task_defaults() -> None:
    """Picking a task loads its own architecture and optimiser settings."""
    task = TASKS[st.session_state[L.TASK.key]]
    for param, field in L.TASK_FIELDS.items():
        st.session_state[param.key] = getattr(task.defaults, field)


ON_CHANGE[L.TASK] = _load_task_defaults


def head_name(head: str) -> str:
    return L.head_name(head, lang())


def draw_controls(where) -> None:
    """The settings, in four columns: task, architecture, data and seed, optimiser and temperature (folded into
    one expander in lecture mode, so that the buttons and the live charts get the screen)."""
    with where.expander(tr("lt.settings"), expanded=False) if lecture_mode() else where:
        c1, c2, c3, c4 = st.columns(4)
        draw(L.TASK, c1)
        c1.caption(tr(f"task.{value(L.TASK)}"))
        for param, column in ((L.LAYERS, c2), (L.HEADS, c2), (L.D_MODEL, c2), (L.SEQ_LEN, c3), (L.MLP, c3),
                              (L.SEED, c3), (L.LR, c4), (L.WARMUP, c4), (L.TEMP_KIND, c4)):
            draw(param, column)
        t1, t2 = c4.columns(2)
        draw(L.TEMP_START, t1)
        draw(L.TEMP_END, t2, disabled=value(L.TEMP_KIND) == "constant")
        draw_load()


# ------------------------------------------------------------------------------- a model trained elsewhere
LOAD_GENERATION = "train.load_generation"   # a new uploader key empties it once its file has been read
LOAD_SAID = "train.load_said"               # (tone, sentence, trainer) about the last file: loaded, or why not


def draw_load() -> None:
    """"Load a trained model": a file ``Trainer.save`` or ``explorer-train --save`` wrote (a long run trained before
    class) becomes this session's model, paused at the step it was saved at, and the settings above show what it
    was trained with. Read in the uploader's callback, before any control is drawn, so the controls can take the
    model's settings; at most ``server.maxUploadSize`` MB, parsed without running anything from the file."""
    state = st.session_state
    key = f"train.load.{state.setdefault(LOAD_GENERATION, 0)}"
    mb = st.get_option("server.maxUploadSize")
    st.file_uploader(tr("lt.load", mb=mb), type=["safetensors"], key=key, help=tr("lt.load_help", mb=mb),
                     on_change=_load_saved_model, args=(key,))
    said = state.get(LOAD_SAID)
    run = state.get(RUN)
    # a refusal stays until the next file; "loaded" only while the loaded model is the one on the page (not after
    # Reset or a new architecture); either in the language the page is in now
    if said and (said[0] == "error" or _still_loaded(run, said[2])):
        (st.success if said[0] == "success" else st.error)(said[1].in_lang(lang()))


def _still_loaded(run: LiveRun | None, loaded: Trainer | None) -> bool:
    """Whether the model a file brought is the one this run will show: not replaced by Reset or by a setting that
    builds a new model (the controls' values are read before the run syncs with them)."""
    if run is None or run.trainer is not loaded or run.architecture is None:
        return False
    settings = L.run_settings(values(L))
    return tuple(settings[k] for k in ARCHITECTURE) == run.architecture


def _page_values(trainer: Trainer) -> dict:
    """The page's settings that show ``trainer``'s, by key; ``ValueError`` (a sentence) naming the first setting the
    page cannot show, with what it offers."""
    if trainer.config.position != "learned":
        raise ValueError(tr("lt.load_position", position=trainer.config.position))
    got = trained_with(trainer)
    temperature = got.pop("temperature")
    wanted = {L.TASK: got["task"], L.LAYERS: got["n_layers"], L.HEADS: got["n_heads"], L.D_MODEL: got["d_model"],
              L.SEQ_LEN: got["seq_len"], L.MLP: got["with_mlp"], L.SEED: got["seed"], L.LR: got["lr"],
              L.WARMUP: got["warmup"], L.TEMP_KIND: temperature.kind, L.TEMP_START: temperature.start,
              L.TEMP_END: temperature.end}
    out = {}
    for param, v in wanted.items():
        try:
            out[param.key] = param.check(v)
            off_step = param.step and param.lo is not None and (v - param.lo) % param.step
            if off_step or (param.options is not None and out[param.key] != v):
                raise ValueError(v)
        except (ValueError, TypeError):
            first, last = param.range()
            offered = ", ".join(param.option_text(o, lang()) for o in param.options) if param.options else \
                f"{param.option_text(first, lang())} … {param.option_text(last, lang())}"
            raise ValueError(tr("lt.load_unfit", setting=tr(param.label), value=str(v), offered=offered)) from None
    return out


def _load_saved_model(key: str) -> None:
    state = st.session_state
    upload = state.get(key)
    if upload is None:
        return
    state[LOAD_GENERATION] += 1                    # the uploader empties: the file has been read
    try:
        trainer = from_bytes(Trainer, upload.getvalue())
    except ValueError as err:                      # the reason may quote the file: shown as text
        reason = Outside(str(err), limit=300)
        state[LOAD_SAID] = ("error", tr("lt.load_refused", file=Outside(upload.name), error=reason), None)
        return                                     # the model being trained stays as it was
    try:
        page = _page_values(trainer)
    except ValueError as err:                      # our own sentence (a Phrase: said in the page's language)
        state[LOAD_SAID] = ("error", tr("lt.load_refused", file=Outside(upload.name), error=err.args[0]), None)
        return
    run = state.get(RUN)
    if run is None:
        run = state[RUN] = LiveRun(uuid.uuid4().hex)
    run.adopt(trainer)
    state.update(page)
    state[LOAD_SAID] = ("success", tr("lt.loaded", file=Outside(upload.name), steps=trainer.step_count,
                                      task=tr(f"taskname.{trainer.task.name}")), trainer)


def session_run() -> LiveRun:
    """This session's run, in line with the settings: a new model (with a notice) when the architecture changed. A
    setting the trainer refuses stops the page with one sentence and keeps the previous model."""
    run = st.session_state.get(RUN)
    if run is None:
        run = st.session_state[RUN] = LiveRun(uuid.uuid4().hex)
        POOL.warm()                  # a trainer process starts now (seconds to import torch), not at Start
    # The notice's place is drawn on every run, empty or not: a notice that came and went would move every later
    # element of the page to another index, and a run cut short by the next (two slider steps) then left the
    # browser the old copies of the keyed parts beside the new ones (a test saw 7 charts where there are 5).
    notice = st.empty()
    try:
        if run.sync(**L.run_settings(values(L))):
            write(L.rebuilt(value(L.SEED)), notice)
    except ValueError as err:
        stop_page(say(L.kept(err)))
    return run


def draw_buttons(run: LiveRun) -> None:
    """Start, Pause, Step and Reset. While training has stopped (a non-finite loss until the learning rate changes,
    a divergence or a lost trainer process until Reset), Start and Step are off and say why: pressed, they would do
    nothing."""
    stopped = run.trainer.stopped is not None or run.lost is not None
    with st.container(horizontal=True, vertical_alignment="center"):     # a row that wraps; buttons fit labels
        st.button(tr("lt.start"), on_click=run.start, type="primary", disabled=run.running or stopped,
                  key="train.start", icon=":material/play_arrow:", help=tr("lt.stopped_help") if stopped else None)
        st.button(tr("lt.pause"), on_click=run.pause, disabled=not run.running, key="train.pause",
                  icon=":material/pause:")
        st.button(tr("lt.step"), on_click=run.step, help=tr("lt.stopped_help" if stopped else "lt.step_help"),
                  key="train.step", disabled=stopped)
        st.button(tr("lt.reset"), on_click=run.reset, help=tr("lt.reset_help"), key="train.reset")
        layers = run.trainer.config.n_layers
        if lecture_mode() and layers > 1 and not run.trainer.task.regression:    # the maps show one layer's row
            st.segmented_control(tr("lt.maps_layer"), list(range(layers)), default=layers - 1, key=MAPS_LAYER,
                                 format_func=lambda layer: tr("lt.layer_n", layer=layer), required=True,
                                 label_visibility="collapsed")          # (the row stays the buttons' height)
        if not run.trainer.history and not run.running:      # nothing trained yet: what to press, beside them
            write(L.press_start())


def running() -> bool:
    """Whether the session's model is training (the live view then redraws every ``TICK``)."""
    run = st.session_state.get(RUN)
    return bool(run and run.running)


def compact(number: float) -> str:
    """A metric tile's number: 4 decimals up to 10⁴, then 3 significant digits ("1.27e+09"), never a long row of
    digits; a non-finite value as a dash."""
    if not np.isfinite(number):
        return tr("lt.m_none")
    return f"{number:.4f}" if abs(number) < 1e4 else f"{number:.3g}"


def live_view() -> None:
    """A tick (what the session's trainer process has published since the last one), then the metrics, the
    notices, the loss and entropy curves, the score table and the task's example, from one consistent read of the
    session's trainer. Each chart keeps its element from tick to tick (``internals.charts_kept_by_key``): plotly.js
    updates it in place instead of drawing a new one into an empty box."""
    with charts_kept_by_key() as drawn:
        _live_view()
    figures = "{" + ",".join(f"{json.dumps(key)}:{figure}" for key, figure in drawn.items()) + "}"
    _update_charts(key="live-charts", data={"figures": figures}, height=0)


def _live_view() -> None:
    run: LiveRun = st.session_state[RUN]
    was_running = run.running
    place = run.tick()
    if place:
        write(L.queued(place, SLOTS.status()))
    trainer = run.trainer
    if was_running and not run.running:            # training stopped: the buttons outside this view follow
        st.rerun(scope="app")
    if run.lost or trainer.stopped:
        st.error(say(run.lost or trainer.stopped))
    specs = L.figures(values(L), trainer)
    data = specs["training_entropy"].data()
    rows = data["rows"]
    if not rows:                     # nothing trained yet (what to press is said beside the buttons): the maps
        _maps(trainer, specs, data, main=True)
        return
    if lecture_mode():           # the attention maps (the point of the lesson) as large as the screen allows, the
        left, right = st.columns([5, 4])     # step's numbers above the entropy beside them
        with left:
            _maps(trainer, specs, data, main=True)
        with right:
            with st.container(key="live-metrics"):           # (compact: lecture.css)
                _metrics(trainer, data)
            show_spec(specs["training_entropy"], data, key="entropy", main=LIVE_MAIN_HEIGHT)
        show_spec(specs["training_loss"], data, key="loss", main=LIVE_MAIN_HEIGHT)
    else:
        _metrics(trainer, data)
        left, right = st.columns(2)
        with left:
            show_spec(specs["training_loss"], data, key="loss")
        with right:
            show_spec(specs["training_entropy"], data, key="entropy")
    write(L.head_notes(trainer), join="\n")   # below the charts: several heads would push the charts off screen
    cfg, task = trainer.config, trainer.task
    st.dataframe(L.score_table(pd.DataFrame(rows), cfg.n_layers, cfg.n_heads, lang(), scores=not task.regression,
                               baseline=L.uniform_baseline(trainer)), hide_index=True)
    write(L.scores_caption(trainer))
    if not lecture_mode():
        _maps(trainer, specs, data, main=False)


def percent(share: float) -> str:
    """An accuracy in a tile: one decimal ("97.3%"), and "100%" for a perfect one (six characters cut a narrow
    tile)."""
    return "100%" if share >= 0.9995 else f"{share:.1%}"


def rate(lr: float) -> str:
    """A learning rate in a tile: two significant digits, as a power of ten below 0.01 ("9.9e-4", not "0.00099",
    which a narrow tile cuts)."""
    return f"{lr:.2g}" if lr >= 0.01 or lr == 0 else f"{lr:.1e}".replace("e-0", "e-")


def _metrics(trainer, data: dict) -> None:
    """Step, loss, accuracy, learning rate and temperature of the last step, in one row of tiles."""
    m1, m2, m3, m4, m5 = st.columns(5)
    last = data["rows"][-1]
    m1.metric(tr("lt.m_step"), data["step_count"])
    # after a stop, the tile shows the last step's loss and says so: a good one after a non-finite loss (the message
    # names the bad value), the diverged one after a divergence
    m2.metric(tr("lt.m_loss") if not trainer.stopped else tr("lt.m_loss_stopped")
              if trainer.stopped.key == "train.stopped_diverged" else tr("lt.m_loss_last"), compact(last["loss"]))
    m3.metric(tr("lt.m_acc"), tr("lt.m_none") if np.isnan(last["accuracy"]) else percent(last["accuracy"]))
    m4.metric(tr("lt.m_lr"), rate(last["lr"]))
    m5.metric(tr("lt.m_temp"), f"{last['temperature']:.2g}")


def _maps(trainer, specs: dict, data: dict, main: bool) -> None:
    """The attention maps on the held-out example (and, in-context regression, the example's fit); in lecture mode
    one layer's heads (``MAPS_LAYER``, picked beside the buttons), in one row that a projector shows large."""
    if "icl_maps" not in specs:
        layer = st.session_state.get(MAPS_LAYER) if main and trainer.config.n_layers > 1 else None
        if layer is not None and layer >= trainer.config.n_layers:        # (a smaller model since the pick)
            layer = trainer.config.n_layers - 1
        show_spec(specs["training_head_maps"], data, key="maps", layer=layer,
                  main=main and (LIVE_MAPS_HEIGHT if trainer.history else LIVE_FIRST_HEIGHT))
        return
    icl = show_spec(specs["icl_maps"], key="maps", main=main and LIVE_MAPS_HEIGHT)
    show_spec(specs["icl_fit"], icl, key="icl")
    write(L.icl_text(icl))


# ------------------------------------------------------------------------------------ testing the heads
def test_the_heads(trainer) -> None:
    """Ablation on the live model (evaluation only: the weights being trained are never touched), each head
    switched off in turn, the heads' scores over training, and the circuits read from the weights."""
    task = trainer.task
    heads = L.heads(trainer)
    c1, c2 = st.columns([3, 1])
    chosen = draw(L.ABLATE, c1, options=heads)
    result = L.ablation(trainer, chosen, draw(L.ABLATE_HOW, c2))
    intact, off = result["intact"], result["off"]
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(tr("lt.intact_loss"), compact(intact[0]))
    m2.metric(tr("lt.ablated_loss", n=len(chosen)), compact(off[0]), delta_color="inverse",
              delta=f"{off[0] - intact[0]:+.3g}" if chosen else None)      # (nothing off: no change to show)
    if not task.regression:
        m3.metric(tr("lt.intact_acc"), f"{intact[1]:.1%}")
        m4.metric(tr("lt.ablated_acc", n=len(chosen)), f"{off[1]:.1%}",
                  delta=tr("lt.pp_delta", pp=(off[1] - intact[1]) * 100) if chosen else None)
    top = None
    if L.ask_heads(result, trainer):
        question = L.question(result, heads)
        if prediction(question).shown:
            top = L.head_pair(heads[question.answer])
    else:
        write(L.question_later())
    specs = L.figures(values(L), trainer)
    show_spec(specs["head_importance"], {"importance": result["importance"], "untrained": result["untrained"]},
              key="importance", answer=top)
    write(L.importance_caption(result, trainer))
    if trainer.history and "head_scores" in specs:
        show_spec(specs["head_scores"], key="scores")
    if not task.regression:
        _circuits(trainer, heads)


def _circuits(trainer, heads: list[str]) -> None:
    text, *mlp = L.circuits_text(trainer)
    write(text)
    write(mlp)
    draw(L.CIRCUIT_HEAD, options=heads)
    read = show_spec(L.figures(values(L), trainer)["qk_circuit"], key="qk")
    write(L.circuits_induction(trainer))
    copying = read["copying"]
    table = pd.DataFrame({tr("lt.col_head"): [head_name(h) for h in heads],
                          tr("lt.col_copying"): [round(copying[h], 3) for h in heads]})
    left, right = st.columns(2)
    left.dataframe(table, hide_index=True)
    composition, at_init = read["composition"], read["at_init"]
    if composition:
        later = sorted({b for _, b in composition})
        earlier = sorted({a for a, _ in composition})
        grid = pd.DataFrame([[tr("lt.kcomp_cell", now=composition[(a, b)], init=at_init[(a, b)])
                              for b in later] for a in earlier],
                            index=[head_name(a) for a in earlier], columns=[head_name(b) for b in later])
        write(L.kcomp_caption(read), right)
        right.dataframe(grid)


__all__ = ["HEADS_TICK", "TICK", "draw_buttons", "draw_controls", "live_view", "running", "session_run",
           "test_the_heads"]
