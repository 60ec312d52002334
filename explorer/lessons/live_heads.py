"""Live training, its second half: what the page says when the viewer tests the heads (switching them off, their
circuits), about the KV cache, and the facts its help texts and chart labels state. ``explorer.lessons.live_training``
is the lesson; it imports these.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib.resources import files

from ..i18n import Joined, Message
from ..training.probes import cover, head_pair
from ..training.tasks import make_task
from ..training.timing import kv_flops_summary, kv_summary, kv_timing_agrees
from .base import Question, Say, says


def _induction_facts() -> dict:
    """What the induction task's models do at its defaults after 600 steps (``explorer/assets/induction_seeds.json``:
    the seeds, which of them reach the loss another way, and ranges of their scores). The file says how it was made;
    ``tests/lessons/test_live_training.py`` trains the same models and checks every number in it, so a number quoted
    on the page is one a test has measured. Each range holds every value and sits within ``RANGE_SLACK`` of the
    extremes (the exact scores move by a few hundredths with the CPU's vector unit and the thread count)."""
    return json.loads((files("explorer") / "assets" / "induction_seeds.json").read_text(encoding="utf-8"))


INDUCTION_SEEDS = _induction_facts()
RANGE_SLACK, ABOUT = 0.05, 0.03


def measured_shape(trainer) -> bool:
    """Whether ``trainer``'s model has the shape ``INDUCTION_SEEDS`` was measured on (the induction task's defaults:
    layers, heads, width, MLP, length, learned positions). The seeds' facts are said only of such a model: another
    shape (one layer, eight heads) has other heads, or no layer 1 at all."""
    return trainer.task.name == "induction" and trainer.config == make_task("induction").model_config()


@says("lt.predict_why")
def question(result: Mapping, heads_: list[str]) -> Question:
    """"Switched off one at a time, which head raises the loss the most right now?", from the ablation drawn."""
    importance = result["importance"]
    top = max((k for k in importance if k != "intact"), key=lambda k: importance[k])
    return Question("lt.head", Say("lt.predict_q"),
                    tuple(Say("fig.layer_head", layer=head_pair(h)[0], head=head_pair(h)[1]) for h in heads_),
                    [head_pair(h) for h in heads_].index(top),
                    Say("lt.predict_why", rise=importance[top] - importance["intact"]))


def ask_heads(result: Mapping, trainer) -> bool:
    """Whether the head question has an answer to find: the model has trained, and switching some head off raises
    the loss (before the first step, or while every head is noise, the "top" head is a coin toss: both bars once
    fell, and the answer read "the loss rises by -0.00113")."""
    importance = result["importance"]
    return bool(trainer.history) and max(v for k, v in importance.items() if k != "intact") > importance["intact"]


@says("lt.predict_later", fixed="said in place of the head question while no head raises the loss when switched off "
                                "(before training): the rule is ask_heads, tested")
def question_later() -> Say:
    return Say("lt.predict_later", tone="caption")


@says("lt.caption", "lt.importance_caption", "lt.cover", "lt.no_cover")
def importance_caption(result: Mapping, trainer) -> Say:
    """Which head matters most now, and whether the last layer's heads cover for each other."""
    importance, cfg = result["importance"], trainer.config
    top = max((k for k in importance if k != "intact"), key=lambda k: importance[k])
    first = Message("lt.importance_caption", head=Message("fig.layer_head", layer=top[0], head=top[1]),
                    rise=importance[top] - importance["intact"], base=importance["intact"])
    if result["together"] is None:
        return Say("lt.caption", tone="caption", text=Joined([first], "punct.space"))
    last = cfg.n_layers - 1
    c = cover([importance[(last, h)] - importance["intact"] for h in range(cfg.n_heads)],
              result["together"] - importance["intact"], result["untrained"] - importance["intact"])
    second = Message("lt.cover" if c["covers"] else "lt.no_cover", layer=last, alone=c["alone"],
                     together=c["together"])
    return Say("lt.caption", tone="caption", text=Joined([first, second], "punct.space"))


@says("lt.circuits_text", fixed="what the QK and OV circuits are: definitions, checked against a forward pass")
def circuits_text(trainer) -> list[Say]:
    out = [Say("lt.circuits_text")]
    if trainer.config.with_mlp:
        out.append(Say("lt.circuits_mlp", tone="caption"))
    return out


@says("lt.circuits_induction", "lt.circuits_induction_other")
def circuits_induction(trainer) -> Say | None:
    """On the induction task: the copying scores its models reach across the seeds (``INDUCTION_SEEDS``)."""
    if trainer.task.map_block(trainer.example) is None:
        return None
    if not measured_shape(trainer):
        return Say("lt.circuits_induction_other", tone="caption", layers=trainer.config.n_layers,
                   heads=trainer.config.n_heads)
    facts = INDUCTION_SEEDS
    return Say("lt.circuits_induction", tone="caption", textbook=len(facts["seeds"]) - len(facts["odd"]),
               first=facts["seeds"][0], last=facts["seeds"][-1], steps=facts["steps"],
               odd=Joined([str(s) for s in facts["odd"]]), l1_lo=facts["l1_copy"][0], l1_hi=facts["l1_copy"][1],
               l0_lo=facts["l0_copy"][0], l0_hi=facts["l0_copy"][1],
               odd_copy=Joined([f"{v:.2f}" for v in facts["odd_copy"]]))


@says("lt.kcomp_caption")
def kcomp_caption(read: Mapping) -> Say | None:
    at_init = read["at_init"]
    if not read["composition"]:
        return None
    return Say("lt.kcomp_caption", tone="caption", lo=min(at_init.values()), hi=max(at_init.values()))


@says("lt.test_text", fixed="what switching heads off does to the weights (nothing): the software, checked on the page")
def test_text() -> Say:
    return Say("lt.test_text")


@says("lt.kv_text", fixed="the cost of a step with and without a cache: counted by the FLOP counter at three lengths")
def kv_text() -> Say:
    return Say("lt.kv_text")


@says("lt.kv_bidirectional", fixed="said when the task is bidirectional: the software")
def kv_bidirectional() -> Say:
    return Say("lt.kv_bidirectional", tone="caption")


@says("lt.kv_flops_caption", fixed="FLOPs from the layers' shapes (torch's FLOP counter agrees on the model: "
                                   "tests/unit/test_training.py), the same at every seed and on every machine")
def kv_flops_caption(flops: Mapping) -> Say:
    return Say("lt.kv_flops_caption", tone="caption", **kv_flops_summary(flops["rows"]))


@says("lt.kv_caption", "lt.kv_noisy", fixed="this machine's timings: shown as measured when they settled and agree "
                                          "with the counts, else called noise (checked on made-up rows)")
def kv_timing_text(timing: Mapping) -> Say:
    if kv_timing_agrees(timing):
        return Say("lt.kv_caption", tone="caption", rounds=timing["rounds"], **kv_summary(timing["rows"]))
    return Say("lt.kv_noisy", tone="warning", rounds=timing["rounds"], spread=timing["spread"])


@says("lt.ablate_help", "lt.ablate_how_help", "lt.lr_help", fixed="what switching a head off, by zero or mean "
      "ablation, does: checked against a forward pass by hand; what the learning-rate slider offers: its options")
def help_texts() -> list[Say]:
    """The help texts of this lesson's controls that state a fact (shown with the widgets, from their ``Param``)."""
    return [Say("lt.ablate_help"), Say("lt.ablate_how_help"), Say("lt.lr_help")]


@says("fig.ceiling", "fig.noise_floor", fixed="the entropy ceiling of a row (log of the number of keys it may see) and "
                                            "the sine_icl task's noise variance, 0.09: constants drawn on the charts")
def chart_labels(trainer) -> list[Say]:
    """The labels the live charts draw on their reference lines."""
    return [Say("fig.ceiling", value=trainer.task.entropy_ceiling()), Say("fig.noise_floor", value=0.09)]
