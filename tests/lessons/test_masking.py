"""Claims of the Masking page: verdicts, captions and notes, over every setting its controls allow (the sweep of the
lesson's settings: each mask kind with the valid length at its ends and middle, the length and d sliders at their
ends and middle, each wrong mode, seeds 0-4). References: weights written out in numpy, torch's own
scaled_dot_product_attention, and perturbations measured here. Headless: the lesson's own functions, no page."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from explorer import masking as M
from explorer.attention import MASK_MODES, causal_mask, masked_attention
from explorer.i18n import t
from explorer.lessons import masking as MK
from explorer.lessons.params import defaults
from tests.lessons.sweep import checks

TOL = 1e-9
SWEEP = {"together": (MK.KIND, MK.VALID)}       # every mask kind at every valid length, besides one at a time


def _example(values):
    """The example the page draws at ``values``: (q, k, v, mask, the lesson's data of its figures)."""
    length, d, seed = values[MK.LENGTH.key], values[MK.D.key], values[MK.SEED.key]
    q, k, v = M.example(length, d, seed)
    mask = M.make_mask(values[MK.KIND.key], length, MK.valid_length(values))
    return q, k, v, mask, MK.figures(values)["masking"].data()


def _numpy_modes(q, k, v, mask):
    """The four modes' weights written out in numpy: pre (−∞ before the softmax, all-masked rows 0), post (softmax,
    then zero), post + renorm (then renormalise), logits × mask."""
    s = (q @ k.T / np.sqrt(q.shape[1])).numpy()
    m = mask.numpy()

    def soft(z):
        e = np.exp(z - z.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)
    full = soft(s)
    pre = np.where(m, np.exp(s - np.where(m, s, -np.inf).max(1, keepdims=True, initial=-np.inf)), 0)
    pre = np.divide(pre, pre.sum(1, keepdims=True), out=np.zeros_like(pre), where=pre.sum(1, keepdims=True) > 0)
    post = full * m
    renorm = np.divide(post, post.sum(1, keepdims=True), out=np.zeros_like(post), where=post.sum(1, keepdims=True) > 0)
    return {"pre": pre, "post": post, "post_renorm": renorm, "multiply_logits": soft(s * m)}


@checks(MK.verdicts, MK.question, MK.notice, **SWEEP)
def test_every_verdict_quotes_the_weights_and_sdpa(settings):
    """mk.v_rows / mk.v_mass / mk.v_sdpa / mk.v_sdpa_diff / mk.notice lines 1-3 / mk.predict_why: row sums, masked
    mass and the gap to SDPA in the report equal those of numpy weights and torch's SDPA, and each verdict says what
    they show; pre and post + renorm match SDPA (outputs and gradients), a fully masked row gives zeros in pre, never
    NaN; the causal triangle is 0 in pre and filled by logits × mask; under post every row with a masked key sums to
    less than 1, and the question's answer counts the rows that still sum to 1."""
    for values in settings:
        q, k, v, mask, ex = _example(values)
        kind, length = values[MK.KIND.key], values[MK.LENGTH.key]
        ref = F.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=mask[None])[0]
        ref = torch.nan_to_num(ref)                        # SDPA gives NaN on a fully masked row; pre gives 0
        report = ex["report"].set_index("mode")
        numpy_w = _numpy_modes(q, k, v, mask)
        for mode in MASK_MODES:
            out, w = masked_attention(q, k, v, mask, mode)
            np.testing.assert_allclose(w.numpy(), numpy_w[mode], atol=1e-12)
            assert report.loc[mode, "mean_row_sum"] == pytest.approx(numpy_w[mode].sum(1).mean(), abs=1e-12)
            assert report.loc[mode, "mass_on_masked"] == pytest.approx(numpy_w[mode][~mask.numpy()].sum(), abs=1e-12)
            assert report.loc[mode, "max_diff_vs_sdpa"] == pytest.approx(float((out - ref).abs().max()), abs=1e-12)
        for mode in ("pre", "post_renorm"):
            assert report.loc[mode, "max_diff_vs_sdpa"] < 1e-12 and report.loc[mode, "grad_diff_vs_pre"] < 1e-9
        assert not np.isnan(numpy_w["pre"]).any()
        empty = ~mask.numpy().any(1)
        assert (numpy_w["pre"][empty] == 0).all()
        if kind != "padding":
            upper = ~causal_mask(length).numpy()
            assert (numpy_w["pre"][upper] == 0).all() and (numpy_w["multiply_logits"][upper] > 0).all()
        has_masked = (~mask.numpy()).any(1)
        assert (numpy_w["post"].sum(1)[has_masked] < 1).all()
        question = MK.question(ex, kind)
        expected = 0 if not has_masked.any() else 2 if has_masked.all() else 1
        assert question.answer == expected and question.why.values["whole"] == int((~has_masked).sum())
        lines = MK.verdicts(ex)
        for mode, line in zip(MASK_MODES, lines, strict=True):
            parts = [p.key for p in line.values["parts"].parts]
            wrong_sums = np.abs(numpy_w[mode].sum(1) - numpy_w["pre"].sum(1)).max() > TOL
            assert ("mk.v_rows" in parts) == wrong_sums, (values, mode, parts)
            assert ("mk.v_mass" in parts) == (numpy_w[mode][~mask.numpy()].sum() > TOL), (values, mode)
            gap = float((masked_attention(q, k, v, mask, mode)[0] - ref).abs().max())
            assert ("mk.v_sdpa" in parts) == (gap < TOL), (values, mode, gap)
        assert MK.notice().key == "mk.notice" and length >= 2


@checks(MK.leak_caption, MK.verdicts, **SWEEP)
def test_leak_probe_and_its_caption(settings):
    """mk.v_leak / mk.v_no_leak / mk.leak_caption / mk.leak_which*: perturbing the last position's key or value
    moves the outputs of the queries that may not see it under exactly the modes the caption and verdicts name,
    measured here with numpy weights; pre and post + renorm never leak; with nothing masked at the last position
    the caption says so."""
    for values in settings:
        q, k, v, mask, ex = _example(values)
        blind = ~mask.numpy()[:, -1]
        named = MK.leak_modes(ex["report"])
        for channel in ("key", "value"):
            k2, v2 = k.clone(), v.clone()
            (k2 if channel == "key" else v2)[-1] += 5.0
            before, after = _numpy_modes(q, k, v, mask), _numpy_modes(q, k2, v2, mask)
            leaking = []
            for mode in MASK_MODES:
                moved = np.abs(after[mode] @ v2.numpy() - before[mode] @ v.numpy()).max(1)[blind]
                if moved.size and moved.max() > TOL:
                    leaking.append(mode)
            assert named[channel] == leaking, (values, channel)
            assert "pre" not in leaking and "post_renorm" not in leaking
        which = MK.leak_caption(ex).values["which"]
        if not blind.any():
            assert which.key == "mk.leak_none_masked"
        else:
            quoted = {c: [p.values["mode"].key.split(".")[1] for p in which.values[f"{c}_modes"].parts]
                      for c in ("key", "value")}
            assert quoted == {c: named[c] for c in ("key", "value")}, (values, quoted)
        for mode, line in zip(MASK_MODES, MK.verdicts(ex), strict=True):
            parts = [p.key for p in line.values["parts"].parts]
            assert ("mk.v_leak" in parts) == (mode in named["key"] or mode in named["value"]), (values, mode)


def test_the_default_leak_caption_names_post_and_logits_times_mask():
    ex = MK.figures(defaults(MK.PARAMS))["masking"].data()
    assert str(MK.leak_caption(ex)).endswith(t("mk.leak_which", key_modes="“post”",
                                              value_modes=f"“{t('modename.multiply_logits')}”"))


@checks(MK.rows_text, **SWEEP)
def test_rows_text_over_the_sliders(settings):
    """mk.rows_text / mk.rows_early / mk.rows_early_not / mk.rows_nothing_masked: under post each row's output is
    the correct one scaled by its row sum; the page says early rows lose most only for a mask that takes more keys
    from the first row than from the last, and quotes those row sums (numpy's); changing a masked key changes the
    weights of the rows that may not see it."""
    for values in settings:
        q, k, v, mask, ex = _example(values)
        w = _numpy_modes(q, k, v, mask)
        sums = w["post"].sum(1)
        np.testing.assert_allclose(w["post"] @ v.numpy(), (w["pre"] @ v.numpy()) * sums[:, None], atol=1e-12)
        masked_keys = (~mask.numpy()).sum(1)
        said = MK.rows_text(ex)
        if masked_keys.max() == 0:
            assert said.key == "mk.rows_nothing_masked"
        else:
            early = said.values["early"]
            assert early.key == ("mk.rows_early" if masked_keys[0] > masked_keys[-1] else "mk.rows_early_not")
            assert early.values["first"] == pytest.approx(sums[0], abs=1e-12)
            assert early.values["last"] == pytest.approx(sums[-1], abs=1e-12)
        hidden = np.flatnonzero((~mask.numpy()).any(0))
        if hidden.size and len(sums) > 1:
            j = int(hidden[-1])
            k2 = k.clone()
            k2[j] += 5.0
            rows = ~mask.numpy()[:, j] & mask.numpy().any(1)          # they mask j but see other keys
            assert not rows.any() or np.abs(_numpy_modes(q, k2, v, mask)["post"][rows] - w["post"][rows]).max() > 1e-6


@checks(MK.grad_text, MK.grad_notes, **SWEEP)
def test_gradient_text_and_notes(settings):
    """mk.grad_text / mk.v_grad: the heatmap is ∂loss/∂logits of the chosen mode (the lesson's data against autograd
    here); pre and logits × mask put no gradient on masked logits, post does wherever a row has both masked and
    allowed keys, post + renorm equals pre; over the sweep. mk.grad_notes' underflow numbers."""
    for values in settings:
        q, k, v, mask, ex = _example(values)
        g = M.gradients(q, k, v, mask)
        wrong = values[MK.WRONG.key]
        np.testing.assert_allclose(ex["grads"][wrong], g[wrong].numpy(), atol=1e-12)
        hidden = ~mask
        if hidden.any():
            assert float(g["pre"][hidden].abs().max()) == 0 and float(g["multiply_logits"][hidden].abs().max()) == 0
            mixed = hidden.any(1) & mask.any(1)
            if mixed.any():
                assert float(g["post"][hidden & mixed[:, None]].abs().max()) > 1e-6
        assert float((g["post_renorm"] - g["pre"]).abs().max()) < 1e-9
        assert MK.grad_text().key == "mk.grad_text"
    demo = M.renorm_underflow()
    assert demo["pre"] == pytest.approx(1.0) and not demo["post_renorm"] > 0.5
    assert MK.grad_notes().values == {"pre": demo["pre"], "renorm": demo["post_renorm"]}
    assert "rows sum to 1 while" in str(MK.grad_notes())


def test_verdict_sentences_at_valid_length_zero():
    values = {**defaults(MK.PARAMS), MK.KIND.key: "padding", MK.VALID.key: 0}
    text = "\n".join(MK.verdicts(MK.figures(values)["masking"].data()))
    line = next(s for s in text.splitlines() if s.startswith(f"- **{t('modename.multiply_logits')}**"))
    assert t("mk.v_rows", mean=1.0, low=1.0, correct=0.0) in line
    assert "rows sum to 0.00 on average" not in text
    renorm = f"- **{t('modename.post_renorm')}**: "
    text = "\n".join(MK.verdicts(MK.figures(defaults(MK.PARAMS))["masking"].data()))
    assert text.startswith("- **pre**: " + t("mk.v_sdpa")) and renorm + t("mk.v_sdpa") in text
    assert "- **pre**: matches SDPA; " + t("mk.v_no_leak") in text
