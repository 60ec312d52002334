"""Claims of the Masking page: verdicts, captions and notes, over every input its controls allow: each mask kind,
the length, d and valid-length sliders at their ends and middle, and seeds 0-4. References: weights written out in
numpy, torch's own scaled_dot_product_attention, and perturbations measured here."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from explorer import masking as M
from explorer.attention import MASK_MODES, causal_mask, masked_attention
from explorer.i18n import t
from explorer.lessons import masking as MK
from tests.app.helpers import assert_clean, chart_data, page
from tests.lessons.sweep import SEEDS, ends

TOL = 1e-9


def _verdicts(at):
    return next(m.value for m in at.markdown if m.value.startswith("- **pre**"))


def _settings():
    """(length, d, kind, valid): each mask kind with the valid length at 0, the middle and the whole length, then
    the length and d sliders at their ends (the others at their defaults)."""
    out = []
    for kind in M.MASK_TYPES:
        for valid in (0, MK.LENGTH.default // 2, MK.LENGTH.default):
            out.append((MK.LENGTH.default, MK.D.default, kind, valid))
    for length in ends(MK.LENGTH):
        out += [(length, MK.D.default, "causal", length), (length, MK.D.default, "padding", length // 2)]
    out += [(MK.LENGTH.default, d, "causal", MK.LENGTH.default) for d in ends(MK.D)]
    return out


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


@pytest.mark.sweep
def test_every_verdict_quotes_the_weights_and_sdpa():
    """mk.v_rows / mk.v_mass / mk.v_sdpa / mk.v_sdpa_diff / mk.notice lines 1-3 / mk.predict_why: row sums, masked
    mass and the gap to SDPA in the report equal those of numpy weights and torch's SDPA; pre and post + renorm
    match SDPA (outputs and gradients), a fully masked row gives zeros in pre, never NaN; the causal triangle is 0
    in pre and filled by logits × mask; under post every row with a masked key sums to less than 1."""
    for (length, d, kind, valid), seed in ((c, seed) for c in _settings() for seed in SEEDS):
        q, k, v = M.example(length, d, seed)
        mask = M.make_mask(kind, length, valid)
        ref = F.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=mask[None])[0]
        ref = torch.nan_to_num(ref)                        # SDPA gives NaN on a fully masked row; pre gives 0
        report = M.report(q, k, v, mask).set_index("mode")
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
        whole, n_whole = MK.row_sums_answer(numpy_w["post"].sum(1))
        assert n_whole == int((~has_masked).sum()) and whole == (0 if not has_masked.any() else
                                                                 2 if has_masked.all() else 1)


@pytest.mark.sweep
def test_leak_probe_and_its_caption():
    """mk.v_leak / mk.v_no_leak / mk.leak_caption / mk.leak_which*: perturbing the last position's key or value
    moves the outputs of the queries that may not see it under exactly the modes the caption and verdicts name,
    measured here with numpy weights; pre and post + renorm never leak."""
    for (length, d, kind, valid), seed in ((c, seed) for c in _settings() for seed in SEEDS):
        q, k, v = M.example(length, d, seed)
        mask = M.make_mask(kind, length, valid)
        blind = ~mask.numpy()[:, -1]
        report = M.report(q, k, v, mask)
        named = MK.leak_modes(report)
        for channel in ("key", "value"):
            k2, v2 = k.clone(), v.clone()
            (k2 if channel == "key" else v2)[-1] += 5.0
            before, after = _numpy_modes(q, k, v, mask), _numpy_modes(q, k2, v2, mask)
            leaking = []
            for mode in MASK_MODES:
                moved = np.abs(after[mode] @ v2.numpy() - before[mode] @ v.numpy()).max(1)[blind]
                if moved.size and moved.max() > TOL:
                    leaking.append(mode)
            assert named[channel] == leaking, (length, kind, valid, seed, channel)
            assert "pre" not in leaking and "post_renorm" not in leaking
    at = page("masking")
    for seed in SEEDS:
        at.number_input(key="mask.seed").set_value(seed).run()
        assert_clean(at)
        caption = next(c.value for c in at.caption if c.value.startswith("Each bar"))
        assert caption.endswith(t("mk.leak_which", key_modes="“post”",
                                  value_modes=f"“{t('modename.multiply_logits')}”"))
    at.selectbox(key="mask.kind").set_value("padding").run()
    at.slider(key="mask.valid").set_value(MK.LENGTH.default).run()
    assert any(c.value.endswith(t("mk.leak_none_masked")) for c in at.caption)


@pytest.mark.sweep
def test_rows_text_over_the_sliders():
    """mk.rows_text / mk.rows_early / mk.rows_early_not / mk.rows_nothing_masked: under post each row's output is
    the correct one scaled by its row sum; the page says early rows lose most only for a mask that takes more keys
    from the first row than from the last, and quotes those row sums; changing a masked key changes the weights of
    the rows that may not see it."""
    for (length, d, kind, valid), seed in ((c, seed) for c in _settings() for seed in SEEDS):
        q, k, v = M.example(length, d, seed)
        mask = M.make_mask(kind, length, valid)
        w = _numpy_modes(q, k, v, mask)
        sums = w["post"].sum(1)
        np.testing.assert_allclose(w["post"] @ v.numpy(), (w["pre"] @ v.numpy()) * sums[:, None], atol=1e-12)
        lost = MK.rows_lost(sums, mask)
        masked_keys = (~mask.numpy()).sum(1)
        assert lost["kind"] == ("nothing" if masked_keys.max() == 0 else
                                "early" if masked_keys[0] > masked_keys[-1] else "same")
        hidden = np.flatnonzero((~mask.numpy()).any(0))
        if hidden.size and length > 1:
            j = int(hidden[-1])
            k2 = k.clone()
            k2[j] += 5.0
            rows = ~mask.numpy()[:, j] & mask.numpy().any(1)          # they mask j but see other keys
            assert not rows.any() or np.abs(_numpy_modes(q, k2, v, mask)["post"][rows] - w["post"][rows]).max() > 1e-6
    at = page("masking")
    for seed in SEEDS:
        at.number_input(key="mask.seed").set_value(seed).run()
        q, k, v = M.example(MK.LENGTH.default, MK.D.default, seed)
        sums = _numpy_modes(q, k, v, causal_mask(MK.LENGTH.default))["post"].sum(1)
        text = next(m.value for m in at.markdown if m.value.startswith("“post”"))
        assert t("mk.rows_early", first=sums[0], last=sums[-1]) in text


@pytest.mark.sweep
def test_gradient_text_and_notes():
    """mk.grad_text / mk.v_grad: the heatmap is ∂loss/∂logits of the chosen mode; pre and logits × mask put no
    gradient on masked logits, post does wherever a row has both masked and allowed keys, post + renorm equals pre;
    over the sweep (autograd on the numpy-checked weights). mk.grad_notes' underflow numbers."""
    for (length, d, kind, valid), seed in ((c, seed) for c in _settings() for seed in SEEDS):
        q, k, v = M.example(length, d, seed)
        mask = M.make_mask(kind, length, valid)
        g = M.gradients(q, k, v, mask)
        hidden = ~mask
        if hidden.any():
            assert float(g["pre"][hidden].abs().max()) == 0 and float(g["multiply_logits"][hidden].abs().max()) == 0
            mixed = hidden.any(1) & mask.any(1)
            if mixed.any():
                assert float(g["post"][hidden & mixed[:, None]].abs().max()) > 1e-6
        assert float((g["post_renorm"] - g["pre"]).abs().max()) < 1e-9
    at = page("masking")
    q, k, v = M.example(MK.LENGTH.default, MK.D.default, 0)
    z = chart_data(at, "grad_heatmap")[0]["z"]
    assert np.allclose(np.asarray(z, dtype=float), M.gradients(q, k, v, causal_mask(MK.LENGTH.default))["post"].numpy())
    demo = M.renorm_underflow()
    assert demo["pre"] == pytest.approx(1.0) and not demo["post_renorm"] > 0.5
    assert "rows sum to 1 while" in t("mk.grad_notes", pre=demo['pre'], renorm=demo['post_renorm'])


def test_verdict_sentences_at_valid_length_zero():
    at = page("masking")
    at.selectbox(key="mask.kind").set_value("padding").run()
    at.slider(key="mask.valid").set_value(0).run()
    assert_clean(at)
    text = _verdicts(at)
    line = next(s for s in text.splitlines() if s.startswith(f"- **{t('modename.multiply_logits')}**"))
    assert t("mk.v_rows", mean=1.0, low=1.0, correct=0.0) in line
    assert "rows sum to 0.00 on average" not in text
    renorm = f"- **{t('modename.post_renorm')}**: "
    at = page("masking")
    text = _verdicts(at)
    assert text.startswith("- **pre**: " + t("mk.v_sdpa")) and renorm + t("mk.v_sdpa") in text
    assert "- **pre**: matches SDPA; " + t("mk.v_no_leak") in text
