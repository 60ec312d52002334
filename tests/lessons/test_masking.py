"""Claims of the Masking page: verdicts, captions and notes, on every input its controls allow."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from explorer import masking as M
from explorer.attention import MASK_MODES, causal_mask, masked_attention
from explorer.i18n import t
from tests.app.helpers import assert_clean, chart_data, page

TOL = 1e-9


def _verdicts(at):
    return next(m.value for m in at.markdown if m.value.startswith("- **pre**"))


@pytest.mark.parametrize("kind", M.MASK_TYPES)
@pytest.mark.parametrize("valid", [0, 1, 4, 8])
def test_row_sum_verdicts_are_right_on_every_input(kind, valid):
    """mk.v_rows / mk.v_mass: the row sums a verdict quotes are those of the weights, and a mode gets the
    verdict exactly when its rows differ from the correct ones (valid length 0: rows of 0)."""
    q, k, v = M.example(8, 16, 0)
    mask = M.make_mask(kind, 8, valid)
    report = M.report(q, k, v, mask).set_index("mode")
    for mode in MASK_MODES:
        _, w = masked_attention(q, k, v, mask, mode)
        assert report.loc[mode, "mean_row_sum"] == pytest.approx(float(w.sum(-1).mean()))
        assert report.loc[mode, "mass_on_masked"] == pytest.approx(float(w[~mask].sum()))
    if valid == 0 and kind != "causal":
        # every key is padding: the correct rows are all zero, multiply_logits puts all weight on masked keys
        assert report.loc["pre", "correct_row_sum"] == 0
        assert report.loc["multiply_logits", "mean_row_sum"] == pytest.approx(1.0)
        assert report.loc["multiply_logits", "row_sum_error"] > 0.5


def test_verdict_sentences_at_valid_length_zero():
    at = page("masking")
    at.selectbox(key="mask.kind").set_value("padding").run()
    at.slider(key="mask.valid").set_value(0).run()
    assert_clean(at)
    text = _verdicts(at)
    line = next(s for s in text.splitlines() if s.startswith(f"- **{t('modename.multiply_logits')}**"))
    assert t("mk.v_rows", mean="1.00", low="1.00", correct="0.00") in line
    assert "rows sum to 0.00 on average" not in text


def test_sdpa_verdicts_and_the_notice():
    """mk.v_sdpa / mk.v_sdpa_diff / mk.notice line 1: pre and post_renorm both match SDPA (outputs and
    gradients); post and multiply_logits do not. Line 2: a fully masked row gives zeros, never NaN."""
    for kind in M.MASK_TYPES:
        for valid in (1, 5, 8):
            q, k, v = M.example(8, 16, 0)
            mask = M.make_mask(kind, 8, valid)
            ref = F.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=mask[None])[0]
            r = M.report(q, k, v, mask).set_index("mode")
            for mode in ("pre", "post_renorm"):
                out, _ = masked_attention(q, k, v, mask, mode)
                assert float((out - ref).abs().max()) < 1e-12
                assert r.loc[mode, "grad_diff_vs_pre"] < 1e-12
            if valid < 8 or kind != "padding":
                assert r.loc["post", "max_diff_vs_sdpa"] > 1e-3
    q, k, v = M.example(8, 16, 0)
    out, w = masked_attention(q, k, v, M.make_mask("padding", 8, 0), "pre")
    assert torch.equal(out, torch.zeros_like(out)) and torch.equal(w, torch.zeros_like(w))
    at = page("masking")
    text = _verdicts(at)
    renorm = f"- **{t('modename.post_renorm')}**: "
    assert text.startswith("- **pre**: " + t("mk.v_sdpa")) and renorm + t("mk.v_sdpa") in text
    assert t("mk.v_sdpa_diff", diff="0.58") in text or "differs from SDPA" in text
    # the causal upper triangle: exactly 0 in pre, filled by multiply_logits
    causal = causal_mask(8)
    assert float(masked_attention(q, k, v, causal, "pre")[1][~causal].abs().max()) == 0
    assert float(masked_attention(q, k, v, causal, "multiply_logits")[1][~causal].min()) > 0


def test_leak_channels():
    """mk.v_leak / mk.v_no_leak / mk.leak_caption: post leaks through the masked key only, multiply_logits
    through the masked value only, pre and post_renorm through neither."""
    q, k, v = M.example(8, 16, 0)
    mask = causal_mask(8)
    key, value = (M.leakage(q, k, v, mask, channel=c) for c in ("key", "value"))
    assert key["post"] > 0.1 and value["post"] < TOL
    assert value["multiply_logits"] > 0.1 and key["multiply_logits"] < TOL
    for mode in ("pre", "post_renorm"):
        assert key[mode] < TOL and value[mode] < TOL
    at = page("masking")
    mode_of = {t(f"modename.{m}"): m for m in ("pre", "post", "post_renorm", "multiply_logits")}    # bar labels
    bars = {tr["name"]: {mode_of[x]: y for x, y in zip(tr["x"], tr["y"], strict=True)}
            for tr in chart_data(at, "leak")}
    assert bars[t("fig.leak_key")]["post"] > 0.1 and bars[t("fig.leak_key")]["multiply_logits"] == 0
    assert bars[t("fig.leak_value")]["multiply_logits"] > 0.1 and bars[t("fig.leak_value")]["post"] == 0
    assert bars[t("fig.leak_key")]["pre"] == 0 == bars[t("fig.leak_value")]["pre"]
    text = _verdicts(at)
    assert t("mk.v_leak", channel=t("mk.channel_key"), leak=f"{key['post']:.2g}") in text
    assert t("mk.v_leak", channel=t("mk.channel_value"), leak=f"{value['multiply_logits']:.2g}") in text
    assert "- **pre**: matches SDPA; " + t("mk.v_no_leak") in text
    # mk.v_grad: only post sends gradient into the masked logits, and the verdict quotes how much
    g = M.gradients(q, k, v, mask)
    assert t("mk.v_grad", g=f"{float(g['post'][~mask].abs().max()):.2g}") in text
    assert text.count("gradient reaches masked logits") == 1


def test_rows_text():
    """mk.rows_text: under "post" every row with masked keys sums to < 1, early causal rows shrink most,
    and a future key changes the past's weights."""
    q, k, v = M.example(8, 16, 0)
    mask = causal_mask(8)
    out_post, w_post = masked_attention(q, k, v, mask, "post")
    out_pre, _ = masked_attention(q, k, v, mask, "pre")
    sums = w_post.sum(-1)
    has_masked = (~mask).any(-1)
    assert bool((sums[has_masked] < 1).all()) and float(sums[~has_masked][0]) == pytest.approx(1)
    shrink = (out_post.norm(dim=-1) / out_pre.norm(dim=-1)).numpy()
    assert np.corrcoef(np.arange(8), shrink)[0, 1] > 0.7
    k2 = k.clone()
    k2[-1] += 5
    assert float((masked_attention(q, k2, v, mask, "post")[1][0] - w_post[0]).abs().max()) > 1e-3


def test_gradient_text_and_notes():
    """mk.grad_text: the heatmap is ∂loss/∂logits of the chosen mode. mk.grad_notes: pre and
    multiply_logits put no gradient on masked logits, post does, post_renorm equals pre; the underflow
    numbers it quotes."""
    q, k, v = M.example(8, 16, 0)
    mask = causal_mask(8)
    g = M.gradients(q, k, v, mask)
    assert float(g["pre"][~mask].abs().max()) == 0 and float(g["multiply_logits"][~mask].abs().max()) == 0
    assert float(g["post"][~mask].abs().max()) > 1e-3
    assert float((g["post_renorm"] - g["pre"]).abs().max()) < 1e-12
    at = page("masking")
    z = chart_data(at, "grad_heatmap")[0]["z"]
    assert np.allclose(np.asarray(z, dtype=float), g["post"].numpy())
    demo = M.renorm_underflow()
    assert demo["pre"] == pytest.approx(1.0) and not demo["post_renorm"] > 0.5
    assert "rows sum to 1 while" in t("mk.grad_notes", pre=f"{demo['pre']:.0f}", renorm=f"{demo['post_renorm']:.0f}")
