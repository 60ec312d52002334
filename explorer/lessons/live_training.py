"""Live training: a small transformer learns a task while the page watches each head's attention and entropy.

Settings: the task (``explorer.training.TASKS``), whose own defaults set the architecture and the optimiser; the
heads an ablation switches off and the head whose circuits are shown. Figures: every head's entropy over training
(``MAIN``) and the attention maps, read from a trainer (not cached: the model changes under them). Numbers: the
head score table, what the induction models do across seeds, whether a layer's heads cover for each other, the
KV-cache summaries.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import pandas as pd

from ..data import DATASETS
from ..figures import training as tfig
from ..i18n import Joined, Message, t
from ..training import (
    COLLAPSE_NATS,
    COLLAPSE_STEPS,
    TASKS,
    TEMPERATURE_SCHEDULES,
    TemperatureSchedule,
    Trainer,
    head_warnings,
    metric_key,
)
from ..training.circuits import HOW
from ..training.probes import (  # noqa: F401  (EVAL_*, ablation, heads, kv_cache_gap: the page's; cover: the tests')
    COVER_ALONE,
    COVER_TOGETHER,
    EVAL_SEED,
    EVAL_SIZE,
    ablation,
    circuits,
    cover,
    eval_batch,
    head_importance_memo,
    head_pair,
    heads,
    icl_view,
    kv_cache_gap,
    local_distances,
    uniform_baseline,
    untrained_loss,
)
from ..training.timing import (  # noqa: F401  (kv_*: the tests read them here)
    cache_timing,
    generation_flops,
    kv_flops_summary,
    kv_summary,
    kv_timing_agrees,
)
from .base import Say, figure_table, flatten, says, specs
from .live_heads import (  # noqa: F401  (the page's: this lesson's second half, testing the heads and the KV cache)
    ABOUT,
    INDUCTION_SEEDS,
    RANGE_SLACK,
    ask_heads,
    chart_labels,
    circuits_induction,
    circuits_text,
    help_texts,
    importance_caption,
    kcomp_caption,
    kv_bidirectional,
    kv_flops_caption,
    kv_text,
    kv_timing_text,
    measured_shape,
    question,
    question_later,
    test_text,
)
from .params import Param, seed_param

# the useful range (1e-4 to 0.3) takes most of the slider; 1 and 1000 stay to show what "too high" does
LRS = (1e-4, 2e-4, 3e-4, 5e-4, 1e-3, 2e-3, 3e-3, 5e-3, 1e-2, 2e-2, 3e-2, 5e-2, 0.1, 0.3, 1.0, 1000.0)
TEMPS = (0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0)
DEFAULT_TASK = "reverse"
TRAINING_STEPS = 150            # the exported training figures show a model this far into training


def _task_default(field: str):
    """The default of a setting: what the chosen task declares (``Task.defaults``)."""
    return lambda values: getattr(TASKS[values.get(TASK.key, DEFAULT_TASK)].defaults, field)


def head_name(head: str, lang: str = "en") -> str:
    """How a head ("l1h0") reads in the pickers, the tables and the charts alike ("L1 H0")."""
    layer, number = head_pair(head)
    return t("fig.layer_head", lang, layer=layer, head=number)


TASK = Param("train.task", "select", DEFAULT_TASK, "lt.task", options=tuple(TASKS), names="taskname.")
LAYERS = Param("train.layers", "slider", _task_default("n_layers"), "lt.layers", lo=1, hi=4)
HEADS = Param("train.heads", "select_slider", _task_default("n_heads"), "lt.heads", options=(1, 2, 4, 8))
D_MODEL = Param("train.d_model", "select_slider", _task_default("d_model"), "lt.d_model",
                options=(16, 32, 64, 128, 256))
SEQ_LEN = Param("train.seq_len", "slider", _task_default("seq_len"), "lt.seq_len", lo=8, hi=32)
MLP = Param("train.mlp", "toggle", _task_default("with_mlp"), "lt.mlp")
SEED = seed_param("train.seed")
LR = Param("train.lr", "select_slider", _task_default("lr"), "lt.lr", "lt.lr_help", options=LRS, fmt="g")
WARMUP = Param("train.warmup", "slider", _task_default("warmup"), "lt.warmup", lo=0, hi=200, step=10)
TEMP_KIND = Param("train.temp_kind", "select", "constant", "lt.temp", "lt.temp_help",
                  options=TEMPERATURE_SCHEDULES, names="tempkind.")
TEMP_START = Param("train.temp_start", "select_slider", 1.0, "lt.start_temp", options=TEMPS)
TEMP_END = Param("train.temp_end", "select_slider", 1.0, "lt.end_temp", options=TEMPS)
ALL_HEADS = tuple(f"l{layer}h{head}" for layer in range(4) for head in range(8))     # the largest model's
ABLATE = Param("train.ablate", "multiselect", [], "lt.ablate", "lt.ablate_help", options=ALL_HEADS, text=head_name)
ABLATE_HOW = Param("train.ablate_how", "select", "zero", "lt.ablate_how", "lt.ablate_how_help", options=HOW,
                   names="ablhow.")
CIRCUIT_HEAD = Param("train.circuit_head", "select", "l0h0", "lt.circuit_head", options=ALL_HEADS, text=head_name)
PARAMS = (TASK, LAYERS, HEADS, D_MODEL, SEQ_LEN, MLP, SEED, LR, WARMUP, TEMP_KIND, TEMP_START, TEMP_END, ABLATE,
          ABLATE_HOW, CIRCUIT_HEAD)
TASK_FIELDS = {LAYERS: "n_layers", HEADS: "n_heads", D_MODEL: "d_model", SEQ_LEN: "seq_len", MLP: "with_mlp",
               LR: "lr", WARMUP: "warmup"}
ARCH = (TASK, LAYERS, HEADS, D_MODEL, SEQ_LEN, MLP, SEED)     # a change builds a new model
FILE_NAME = ((TASK, "{}"), (LAYERS, "{}layers"), (HEADS, "{}heads"))
MAIN = "training_entropy"
FIGURES, figure = figure_table()


# --------------------------------------------------------------------------- figures
def _trainer(trainer):
    """The trainer itself (the page's), or the export's, trained on first use."""
    return trainer.get() if isinstance(trainer, TrainedAtDefaults) else trainer


def _training(trainer) -> dict:
    """What the live figures read from a trainer, taken under its lock (another run may be mid-step)."""
    trainer = _trainer(trainer)
    with trainer.lock:
        rows, maps = list(trainer.history), [m.numpy() for m in trainer.attention_maps()]
        steps = trainer.step_count
    task = trainer.task
    return {"rows": rows, "maps": maps, "step_count": steps, "n_layers": trainer.config.n_layers,
            "n_heads": trainer.config.n_heads, "ceiling": task.entropy_ceiling(), "regression": task.regression,
            "floor": task.loss_floor(), "block": task.map_block(trainer.example)}


@figure("training_entropy", _training, cached=False)
def _draw_entropy(r: dict, lang: str):
    return tfig.entropy_figure(pd.DataFrame(r["rows"]), r["n_layers"], r["n_heads"], r["ceiling"], lang=lang)


@figure("training_head_maps", _training, cached=False, marks=("layer",))
def _draw_maps(r: dict, lang: str):
    """Mark ``layer``: that layer's heads only (lecture mode's one row)."""
    layer = r.get("layer")
    return tfig.attention_maps_figure(r["maps"], lang=lang, block=r.get("block"),
                                      layers=None if layer is None else [layer])





@figure("training_loss", _training, cached=False)
def _draw_loss(r: dict, lang: str):
    return tfig.loss_figure(pd.DataFrame(r["rows"]), r["regression"], lang=lang, noise_floor=r["floor"])


def _icl(trainer) -> dict:
    """In-context regression's example: the attention over the context sorted by x, the model's and NW's fits."""
    trainer = _trainer(trainer)
    with trainer.lock:
        maps = [m.numpy() for m in trainer.attention_maps()]
        example = trainer.example_predictions()
    view = icl_view(example, maps)
    return {**view, **local_distances(view), "floor": trainer.task.loss_floor()}


@figure("icl_maps", _icl, cached=False)
def _draw_icl_maps(r: dict, lang: str):
    return tfig.attention_maps_figure(r["maps"], lang=lang, x_title=t("fig.context_by_x", lang))


@figure("icl_fit", _icl, cached=False)
def _draw_icl_fit(r: dict, lang: str):
    return tfig.icl_figure(r["x"], r["y"], r["is_query"], r["prediction"], DATASETS["sine_mix"].true_fn, lang=lang,
                           nw_prediction=r["nw_prediction"], nw_label=t("fig.nw_same_context", lang, h=r["h"]))


def _importance(trainer, how: str) -> dict:
    """Each head switched off in turn (``how``) and the loss before training, on the evaluation batch."""
    trainer = _trainer(trainer)
    with trainer.lock:
        return {"importance": head_importance_memo(trainer, how), "untrained": untrained_loss(trainer)}


@figure("head_importance", _importance, marks=("answer",), cached=False)
def _draw_importance(r: dict, lang: str):
    """Mark ``answer``: the head whose removal costs the most, once the question is answered."""
    return tfig.importance_figure(r["importance"], r["untrained"], answer=r.get("answer"), lang=lang)


def _scores(trainer) -> dict:
    """Every head's previous-token and induction scores over training, with uniform attention's."""
    return {**_training(trainer), "baseline": uniform_baseline(_trainer(trainer))}


@figure("head_scores", _scores, cached=False)
def _draw_scores(r: dict, lang: str):
    return tfig.scores_figure(pd.DataFrame(r["rows"]), r["n_layers"], r["n_heads"], lang=lang,
                              baseline=r["baseline"])


def _circuit(trainer, head: str) -> dict:
    return {**circuits(_trainer(trainer), head), "head": head}


@figure("qk_circuit", _circuit, cached=False)
def _draw_qk(r: dict, lang: str):
    return tfig.qk_figure(r["qk"], *head_pair(r["head"]), lang=lang)


def _schedules(trainer) -> dict:
    trainer = _trainer(trainer)
    with trainer.lock:
        return {**trainer.schedules(), "current": trainer.step_count, "warmup": trainer.warmup,
                "total": trainer.total_steps, "lr0": trainer.lr}


@figure("schedules", _schedules, cached=False)
def _draw_schedules(r: dict, lang: str):
    return tfig.schedule_figure(r["step"], r["lr"], r["temperature"], r["current"], lang=lang)


KV_LENGTHS = (32, 64, 128, 256, 512)   # long enough that per-token work, not overhead, shows


def _kv_flops(lengths: tuple[int, ...]) -> dict:
    """FLOPs per generated token with and without the KV cache: counted, the same on every machine."""
    return {"rows": generation_flops(list(lengths))}


@figure("kv_flops", _kv_flops)
def _draw_kv_flops(r: dict, lang: str):
    return tfig.kv_flops_figure(r["rows"], lang=lang)


def _kv_timing(lengths: tuple[int, ...]) -> dict:
    """Time per generated token with and without the cache, on this machine now (measured when asked)."""
    return cache_timing(list(lengths))


@figure("kv_timing", _kv_timing, cached=False, exported=False)
def _draw_kv_timing(r: dict, lang: str):
    return tfig.kv_timing_figure(r["rows"], lang=lang)

class TrainedAtDefaults:
    """The trainer the exported figures show: ``task`` at its defaults after ``steps`` steps, trained once, when a
    figure first reads it (``get``)."""

    _done: ClassVar[dict] = {}      # (task, seed, steps) -> the trainer, once trained

    def __init__(self, task: str, seed: int, steps: int = TRAINING_STEPS):
        self.key = (task, seed, steps)

    def get(self):
        if self.key not in self._done:
            trainer = Trainer.for_task(self.key[0], seed=self.key[1])
            trainer.step(self.key[2])
            self._done[self.key] = trainer
        return self._done[self.key]

    def __repr__(self) -> str:
        task, seed, steps = self.key
        return f"{task} at its defaults, seed {seed}, {steps} steps"


def figures(values: Mapping[str, Any], trainer=None) -> dict:
    """The page's figures of ``trainer`` (the session's); without one, of a model at the settings' task and seed
    after ``TRAINING_STEPS`` steps (``TrainedAtDefaults``: what the export shows). The in-context regression task
    draws its example as a fit; the token tasks draw head scores (two layers or more) and circuits instead."""
    trainer = TrainedAtDefaults(values[TASK.key], values[SEED.key]) if trainer is None else trainer
    regression = TASKS[values[TASK.key]].regression
    one = {"trainer": trainer}
    chosen = {"training_entropy": one, "training_loss": one,
              **({"icl_maps": one, "icl_fit": one} if regression else {"training_head_maps": one}),
              "head_importance": {**one, "how": values[ABLATE_HOW.key]}, "schedules": one,
              "kv_flops": {"lengths": KV_LENGTHS}, "kv_timing": {"lengths": KV_LENGTHS}}
    if not regression:
        chosen["qk_circuit"] = {**one, "head": values[CIRCUIT_HEAD.key]}
        if values[LAYERS.key] >= 2:
            chosen["head_scores"] = one
    return specs(__name__.rsplit(".", 1)[-1], FIGURES, chosen)


# --------------------------------------------------------------------------- the numbers the page says
def causal_ceiling(T: int) -> float:
    """log(T!) / T: the mean entropy of uniform causal rows over T positions."""
    return math.lgamma(T + 1) / T


SCORE_WINDOW = 10     # the score table averages each head's metrics over the last 10 steps


def score_table(history, n_layers: int, n_heads: int, lang: str = "en", scores: bool = True,
                baseline: dict | None = None):
    """One row per head: mean entropy and (``scores``: token tasks) the previous-token and induction scores
    over the last steps; ``baseline`` (entropy, prevtok, induction of uniform attention) adds a last row for it."""
    tail = history.iloc[-SCORE_WINDOW:]
    rows = []
    for layer in range(n_layers):
        for h in range(n_heads):
            row = {t("lt.col_head", lang): t("fig.layer_head", lang, layer=layer, head=h),
                   t("lt.col_entropy", lang): round(float(tail[metric_key("entropy", layer, h)].mean()), 3)}
            if scores:
                row[t("lt.col_prevtok", lang)] = round(float(tail[metric_key("prevtok", layer, h)].mean()), 3)
                row[t("lt.col_induction", lang)] = round(float(tail[metric_key("induction", layer, h)].mean()), 3)
            rows.append(row)
    if baseline is not None:
        row = {t("lt.col_head", lang): t("lt.uniform_row", lang),
               t("lt.col_entropy", lang): round(float(baseline["entropy"]), 3)}
        if scores:
            row[t("lt.col_prevtok", lang)] = round(float(baseline["prevtok"]), 3)
            row[t("lt.col_induction", lang)] = round(float(baseline["induction"]), 3)
        rows.append(row)
    return pd.DataFrame(rows)




# --------------------------------------------------------------------------- what the page says
def run_settings(values: Mapping[str, Any]) -> dict:
    """The live run's settings (``explorer.training.live.LiveRun.sync``) from the page's."""
    kind = values[TEMP_KIND.key]
    end = values[TEMP_END.key] if kind != "constant" else values[TEMP_START.key]
    return {"task": values[TASK.key], "n_layers": values[LAYERS.key], "n_heads": values[HEADS.key],
            "d_model": values[D_MODEL.key], "seq_len": values[SEQ_LEN.key], "with_mlp": values[MLP.key],
            "seed": values[SEED.key], "lr": values[LR.key], "warmup": values[WARMUP.key],
            "temperature": TemperatureSchedule(kind, values[TEMP_START.key], end)}


@says("lt.rebuilt", fixed="said exactly when the architecture changed: the software, checked on the page")
def rebuilt(seed: int) -> Say:
    return Say("lt.rebuilt", tone="info", seed=seed)


@says("lt.kept", fixed="said when the trainer refuses a setting: the software, checked on the page")
def kept(error: Any) -> Say:
    """A setting the trainer refused (``error``: its sentence): the previous model stays."""
    return Say("lt.kept", tone="error", error=getattr(error, "message", error))


@says("lt.queued", fixed="the server's training line: the software, checked with a line of one slot")
def queued(place: int, slots: tuple[int, int, int]) -> Say:
    k, _, waiting = slots
    return Say("lt.queued", tone="info", place=place, waiting=waiting, k=k)


@says("lt.press_start", fixed="shown before the first step: the software")
def press_start() -> Say:
    return Say("lt.press_start", tone="caption")      # (one small line beside the buttons: the maps get the screen)


@says("lt.note", "lt.bullet", "lt.collapsed", "lt.collapsed_problem", "lt.duplicate")
def head_notes(trainer) -> list[Say]:
    """The heads' notices (collapsed, duplicate) as one box: a warning if any of them is a problem for this task,
    else an info; one line, or a list of them."""
    cfg, task = trainer.config, trainer.task
    notes = head_warnings(trainer.history, cfg.n_layers, cfg.n_heads, task.entropy_ceiling())
    lines, problem = [], False
    for kind, layer, value in notes:
        if kind == "collapsed":
            problem |= not task.sharp_heads_expected
            lines.append(Message("lt.collapsed" if task.sharp_heads_expected else "lt.collapsed_problem",
                                 layer=layer, head=value, nats=COLLAPSE_NATS, steps=COLLAPSE_STEPS))
        else:
            problem = True
            lines.append(Message("lt.duplicate", layer=layer, sim=value))
    tone = "warning" if problem else "info"
    if len(lines) == 1:
        return [Say("lt.note", tone=tone, line=lines[0])]
    return [Say("lt.bullet", tone=tone, line=line) for line in lines]


@says("lt.scores_caption", "lt.rows_first_copy", "lt.rows_all")
def scores_caption(trainer) -> Say | None:
    """Under the score table (token tasks): what prevtok and induction measure, and uniform attention's scores."""
    if trainer.task.regression:
        return None
    base = uniform_baseline(trainer)
    rows = "lt.rows_first_copy" if trainer.task.map_block(trainer.example) is not None else "lt.rows_all"
    return Say("lt.scores_caption", tone="caption", u_prev=base["prevtok"], u_ind=base["induction"],
               rows=Message(rows))


@says("lt.icl_text")
def icl_text(icl: Mapping) -> Say:
    """In-context regression, under the fit (redrawn with the maps): how near the query its best head's weight sits,
    and the model's error on its held-out example against NW's on the same context."""
    return Say("lt.icl_text", near=icl["near"], uniform=icl["uniform"], mse=icl["mse"], nw_mse=icl["nw_mse"],
               h=icl["h"], floor=icl["floor"])


@says("lt.watch", "watch.induction", "watch.induction_other", "watch.reverse", "watch.sort", "watch.sine_icl")
def watch(trainer) -> Say:
    """What to watch for on the current task; on the induction task, with what its models do across the seeds
    (``INDUCTION_SEEDS``) against uniform attention's scores."""
    task = trainer.task.name
    if task != "induction":
        return Say("lt.watch", task=Message(f"taskname.{task}"), text=Message(f"watch.{task}"))
    if not measured_shape(trainer):          # the seeds' facts are of the default shape: not said of another
        return Say("lt.watch", task=Message(f"taskname.{task}"), text=Message(
            "watch.induction_other", layers=trainer.config.n_layers, heads=trainer.config.n_heads))
    facts, base = INDUCTION_SEEDS, uniform_baseline(trainer)
    text = Message("watch.induction", textbook=len(facts["seeds"]) - len(facts["odd"]), first=facts["seeds"][0],
                   last=facts["seeds"][-1], steps=facts["steps"], odd=Joined([str(s) for s in facts["odd"]]),
                   prev_lo=facts["prev"][0], prev_hi=facts["prev"][1], ind_lo=facts["ind"][0],
                   ind_hi=facts["ind"][1], u_prev=base["prevtok"], u_ind=base["induction"])
    return Say("lt.watch", task=Message(f"taskname.{task}"), text=text)


@says("lt.formula_text", fixed="the entropy ceiling of a causal row: a formula")
def formula_text(trainer) -> Say:
    return Say("lt.formula_text", ceiling=trainer.task.entropy_ceiling())


@says("lt.schedule_text", fixed="the learning-rate schedule: a formula of the settings, checked at its ends")
def schedule_text(curves: Mapping) -> Say:
    return Say("lt.schedule_text", tone="caption", warmup=curves["warmup"], total=curves["total"],
               floor=curves["lr"][-1] / curves["lr0"])


def sentences(values: Mapping[str, Any], trainer=None) -> list[Say]:
    """Everything the page says at ``values`` about ``trainer`` (the session's; by default the export's model at the
    settings' task and seed) with no head switched off, in its order (the KV cache's on-demand timing aside)."""
    trainer = _trainer(TrainedAtDefaults(values[TASK.key], values[SEED.key]) if trainer is None else trainer)
    specs_ = figures(values, trainer)
    said = []
    if trainer.history:
        said += [head_notes(trainer), scores_caption(trainer)]
    if "icl_maps" in specs_:
        said.append(icl_text(specs_["icl_maps"].data()))
    result = ablation(trainer, [], values[ABLATE_HOW.key])
    asked = question(result, heads(trainer)).why if ask_heads(result, trainer) else question_later()
    said += [test_text(), asked, importance_caption(result, trainer)]
    if not trainer.task.regression:
        said += [circuits_text(trainer), circuits_induction(trainer), kcomp_caption(specs_["qk_circuit"].data())]
    said += [watch(trainer), formula_text(trainer), schedule_text(specs_["schedules"].data()), kv_text()]
    if kv_cache_gap(trainer) is None:
        said.append(kv_bidirectional())
    said.append(kv_flops_caption(specs_["kv_flops"].data()))
    return flatten(said)
