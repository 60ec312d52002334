"""What each lesson puts in its offline file (``explorer.offline``, ``explorer-export --interactive``): the
control that becomes the file's slider, the values it takes, and the page's main figure with what the page says
beside it at each value, computed by the lesson's own functions. Live training's file is a recorded run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..training import Trainer
from .base import flatten
from .params import Param


@dataclass(frozen=True)
class Recipe:
    """How one lesson becomes a file: ``control`` (and ``second``, a choice beside it) are what the viewer moves,
    ``states`` the control's values that are precomputed, ``view`` the page's main figure and what the page says
    with it, at the settings ``values`` (its data computed through the third argument, a memo): (spec, its data,
    what it says: one item per paragraph or box the page writes, a ``Say`` or a list of them, question or None).
    ``control`` "step" is a recorded run: ``view(lesson, values)`` then yields (step, [(spec, data), ...], what it
    says, question) at each recorded step."""
    intro: str                                   # the UI text that opens the page (its question)
    control: str
    states: Callable[[Param], tuple]
    view: Callable[[Any, dict, Callable], tuple]
    second: str | None = None


def _options(every: int = 1, keep: tuple = ()) -> Callable[[Param], tuple]:
    """Every ``every``-th option of a select slider, its ends and ``keep`` included."""
    def pick(param: Param) -> tuple:
        opts = param.options
        chosen = set(opts[::every]) | {opts[0], opts[-1], *(v for v in keep if v in opts)}
        return tuple(v for v in opts if v in chosen)
    return pick


def _range(*values) -> Callable[[Param], tuple]:
    return lambda param: values


def computed_once() -> Callable:
    """Data of a spec, computed once per inputs within one lesson's states (the same inputs recur across states;
    dropped with them, so nothing is kept between exports)."""
    done: dict = {}

    def data(spec):
        key = (spec.lesson, spec.name, repr(sorted(spec.inputs.items())))
        if key not in done:
            done[key] = spec.data()
        return done[key]
    return data



def _kernel_regression(L, values, computed):
    spec = L.figures(values)["fit"]
    fit = computed(spec)
    data = L.data_of(values)
    loo = computed(L.figures(values)["loo_cv"])
    kernel = values[L.KERNEL.key]
    presets = tuple(L.presets(values[L.DATASET.key]).values())
    asked = L.loo_question(data["x"], data["y"], kernel, loo["optimum"], presets)
    return spec, fit, flatten(L.readouts(fit)), L.question(asked, kernel, L.is_clean(data, values[L.NOISE.key]))


def _attention_heatmap(L, values, computed):
    spec = L.figures(values)["weights_heatmap"]
    res = computed(spec)
    data = L.data_of(values)
    ends = L.regimes_of(data, values[L.KERNEL.key], values[L.N_QUERIES.key])
    return spec, res, [L.size_caption(res)], L.question(ends, len(data["x"]), values[L.KERNEL.key])


def _softmax_kernel(L, values, computed):
    spec = L.figures(values)["softmax_vs_kernel"]
    res = computed(spec)
    d, spread = values[L.D.key], values[L.SPREAD.key]
    said = [L.explain(d, L.temperature(values)), L.identity_text(res, d, spread)]
    return spec, res, said, L.question(res, spread)


def _masking(L, values, computed):
    spec = L.figures(values)["masking"]
    ex = computed(spec)
    return spec, ex, [L.rows_text(ex), L.verdicts(ex)], L.question(ex, values[L.KIND.key])


def _scaling(L, values, computed):
    specs = L.figures(values)
    tables = computed(specs["logit_std"])
    return specs["logit_std"], tables, [L.notice(tables, values[L.D.key])], L.question(tables, values[L.D.key])


def _efficient_attention(L, values, computed):
    specs = L.figures(values)
    zoo = computed(specs["efficient_zoo"])
    err = computed(specs["efficient_error"])
    return specs["efficient_zoo"], zoo, [L.zoo_text(zoo)], L.question(err, values[L.KIND.key])


def _icl_bandwidth(L, values, computed):
    spec = L.figures(values)["learned_window"]
    sweep = computed(spec)
    return spec, sweep, [L.window_text(sweep)], L.question(sweep, values[L.L.key], values[L.NOISE.key])


def _positional(L, values, computed):
    specs = L.figures(values)
    kernel = computed(specs["position_kernel"])
    return specs["position_kernel"], kernel, [L.kernel_text(kernel)], L.question(computed(specs["lengths"]))


RECORDED_STEPS = (5, 10, 20, 30, 40, 50, 75, 100, 150, 200, 300)     # Live training's recorded run


def _recorded(L, values):
    """Live training at its defaults, recorded: at each of ``RECORDED_STEPS``, the step, the figures the page draws
    beside each other (per-head entropy, the attention maps, the loss) with their data, what the page says under
    them (the heads' notes, what to watch for) and the heads' question once it has an answer."""
    trainer = Trainer.for_task(values[L.TASK.key], seed=values[L.SEED.key])
    done = 0
    for step in RECORDED_STEPS:
        trainer.step(step - done)
        done = step
        specs_ = L.figures(values, trainer)
        names = ["training_entropy", "icl_maps" if "icl_maps" in specs_ else "training_head_maps", "training_loss"]
        drawn = [(specs_[n], specs_[n].data()) for n in names]
        result = L.ablation(trainer, [], values[L.ABLATE_HOW.key])
        question = L.question(result, L.heads(trainer)) if L.ask_heads(result, trainer) else None
        yield step, drawn, [L.head_notes(trainer), L.watch(trainer)], question


RECIPES: dict[str, Recipe] = {
    "kernel_regression": Recipe("kr.question", "BANDWIDTH", _options(10, keep=(0.2,)), _kernel_regression,
                                second="KERNEL"),
    "attention_heatmap": Recipe("ah.question", "BANDWIDTH", _options(16, keep=(0.2,)), _attention_heatmap),
    "softmax_kernel": Recipe("sk.question", "D", _range(1, 2, 4, 8, 16, 32, 64, 128, 256), _softmax_kernel),
    "icl_bandwidth": Recipe("ib.question", "L", _options(), _icl_bandwidth),
    "masking": Recipe("mk.question", "VALID", _range(*range(0, 9)), _masking, second="KIND"),
    "scaling": Recipe("sc.question", "D", _options(), _scaling),
    "positional": Recipe("ps.question", "LENGTH", _options(), _positional, second="SCHEME"),
    "efficient_attention": Recipe("ef.question", "M", _options(), _efficient_attention),
    "live_training": Recipe("lt.question", "step", _range(*RECORDED_STEPS), _recorded),
}
