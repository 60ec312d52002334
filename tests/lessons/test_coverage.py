"""Every claim on screen has a lesson test, and the test checks it wherever a lecturer can move the page: over
seeds 0-4 and the range of the controls the sentence depends on (``tests/lessons/sweep.py``). A new sentence cannot
ship unchecked, and a claim checked at the default seed only fails here."""

import ast
import re
from pathlib import Path

from explorer.i18n import CLAIMS, EN, ZH, is_claim

HERE = Path(__file__).parent
KEY = re.compile(r"(?<=[\"'\s(])([a-z_]+\.[a-z0-9_.+-]+?)(?=[\"'\s:/),])")

# Claims whose truth does not depend on the data, the seed or a control: what they say is fixed by the maths or by
# the software (the reason is given), so a test at one setting is a test at all of them.
FIXED = {
    "ib.predict_why_widens": "gives the two windows and no reason: said only when the answer is 'widens', which none "
                             "of the 25 settings of σ and n gave at seed 0 (test_the_reason_follows_the_answer)",
    "kr.formula_text": "the Gaussian NW weights are a softmax: an identity, tested on random data",
    "kr.same_width_help": "what the toggle does: h × δ_K / δ of the chosen kernel, a formula",
    "kr.width_text": "the kernels' standard deviations and canonical bandwidths: constants, checked by integration",
    "kr.snap": "the slider's grid: no data involved",
    "ah.query_x_help": "which query is drawn: the nearest one, checked at five x",
    "sk.nw_form_help": "what the switch does to the layer: its architecture",
    "lt.kv_text": "the cost of a step with and without a cache: counted by the FLOP counter at three lengths",
    "lt.formula_text": "the entropy ceiling of a causal row: a formula",
    "lt.ablate_help": "what switching a head off does: checked against a forward pass by hand",
    "lt.ablate_how_help": "what zero and mean ablation do: checked against a forward pass by hand",
    "lt.lr_help": "what the learning-rate slider offers: its options",
    "ui.predict_help": "when the switch is on: the settings, not the data",
    "ui.reset_page_help": "what Reset page does: the settings, not the data",
    "ui.reset_all_help": "what Reset all does: the settings, not the data",
    "ef.formula_text": "the random-feature identity E[φ(q)·φ(k)] = exp(q·k): a formula, checked by Monte Carlo",
    "ef.measure_help": "what the button measures and where: the software",
    "fig.ceiling": "the entropy ceiling of a row: log of the number of keys it may see",
    "mk.grad_notes": "the underflow demo: fixed logits, no setting involved",
    "nw.presets_upload": "an upload has no true function, so no preset is labelled: true of every upload",
    "kr.notice_first_upload": "an upload has no seed: the optimum quoted is checked on an uploaded file",
    "ef.orth_help": "how orthogonal directions are drawn: blocks of 16 with Gaussian lengths, checked on the map",
    "lt.schedule_text": "the learning-rate schedule: a formula of the settings, checked at its ends",
    "lt.test_text": "what switching heads off does to the weights (nothing): the software, checked on the page",
    "lt.kv_flops_caption": "FLOPs are counted on the model, the same at every seed and on every machine",
    "lt.kv_caption": "this machine's timings: shown only when they settled and agree with the counts (made-up rows)",
    "lt.kv_noisy": "this machine's timings: shown when they did not settle or contradict the counts (made-up rows)",
    "fig.noise_floor": "the sine_icl task's noise variance: a constant of the task, 0.09",
    "ef.cost_text": "this machine's timings: the crossover and times are those measured (checked on made-up rows)",
    "ib.formula_text": "the unit on unit vectors is Gaussian NW with h = 1/√w: an identity, checked at three w",
    "ib.lipschitz_help": "every task's largest slope is L by construction: checked by finite differences",
}


def _tests() -> list[tuple[str, bool, bool, str]]:
    """(name, marked, swept, source) of every lesson test function: marked ``@pytest.mark.sweep``, and swept when it
    is marked and goes through the seeds (it names ``SEEDS``)."""
    out = []
    for path in HERE.glob("test_*.py"):
        if path.name == "test_coverage.py":
            continue
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                marks = [ast.unparse(d) for d in node.decorator_list]
                source = ast.get_source_segment(text, node) or ""
                marked = any(m.startswith("pytest.mark.sweep") for m in marks)
                out.append((f"{path.name}::{node.name}", marked, marked and "SEEDS" in source, source))
    return out


def _named(swept_only: bool) -> set[str]:
    return {key for _, _, swept, source in _tests() if swept or not swept_only for key in KEY.findall(source)}


def test_every_claim_is_named_by_a_lesson_test():
    named = _named(swept_only=False)
    missing = sorted(k for k in CLAIMS if k not in named)
    assert not missing, f"claims with no lesson test in tests/lessons/: {missing}"


def test_every_claim_is_checked_over_the_seeds_and_the_controls_it_depends_on():
    swept = _named(swept_only=True)
    unswept = sorted(k for k in CLAIMS if k not in FIXED and k not in swept)
    assert not unswept, ("claims that no @pytest.mark.sweep test over SEEDS names (check them over seeds 0-4 and "
                         f"the controls' ranges, or give the reason they are fixed in FIXED): {unswept}")


def test_a_swept_test_is_marked_and_goes_through_the_seeds():
    """The sweep marker is only honoured on a test that iterates ``SEEDS``: marking a default-seed test does not
    count (the check above would pass it otherwise)."""
    marked_only = [name for name, marked, swept, _ in _tests() if marked and not swept]
    assert not marked_only, f"marked as a sweep but never goes through SEEDS: {marked_only}"


def test_claims_are_found_by_their_names():
    # the rule that decides what a claim is catches the kinds of sentence that assert things
    for key in ("kr.notice", "ah.notice", "sk.explain", "mk.v_rows", "lt.collapsed", "watch.induction",
                "nw.presets", "mk.leak_caption", "kr.predict_why", "kr.width_optima"):
        assert is_claim(key) and key in CLAIMS
    assert not is_claim("fig.x") and not is_claim("ui.what_to_notice")
    assert all(k in CLAIMS for k in FIXED), [k for k in FIXED if k not in CLAIMS]


def test_each_claim_exists_in_both_languages():
    assert all(k in EN and k in ZH for k in CLAIMS)
