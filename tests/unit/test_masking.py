"""Masked attention against torch's SDPA and direct definitions."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import attention as A
from explorer import masking as M


def qkv(lq=6, lk=6, d=8, dv=3, seed=0, batch=()):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(*batch, n, m, generator=g, dtype=torch.float64)
                 for n, m in ((lq, d), (lk, d), (lk, dv)))


def test_pre_equals_sdpa_with_a_bool_mask_including_a_fully_masked_row():
    q, k, v = qkv(batch=(2, 3))
    mask = torch.rand(2, 3, 6, 6, generator=torch.Generator().manual_seed(1)) > 0.4
    mask[0, 1, 2] = False                       # a fully masked row
    out, w = A.masked_attention(q, k, v, mask, "pre")
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(out, ref)
    assert torch.all(w[0, 1, 2] == 0) and torch.all(out[0, 1, 2] == 0)
    assert not torch.isnan(out).any() and not torch.isnan(w).any()


def test_pre_equals_sdpa_is_causal():
    q, k, v = qkv(lq=9, lk=9, batch=(2,))
    out, w = A.masked_attention(q, k, v, A.causal_mask(9), "pre")
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    upper = torch.ones(9, 9, dtype=torch.bool).triu(1)
    assert torch.all(w[..., upper] == 0)


def test_post_row_sums_equal_the_unmasked_softmax_mass():
    q, k, v = qkv()
    mask = A.causal_mask(6)
    _, w = A.masked_attention(q, k, v, mask, "post")
    full = torch.softmax(q @ k.T / math.sqrt(8), -1)
    torch.testing.assert_close(w.sum(-1), (full * mask).sum(-1))
    assert torch.all(w.sum(-1)[:-1] < 1)        # every row but the last loses some mass


def test_post_renorm_equals_pre_forward():
    q, k, v = qkv(seed=3)
    for mask in (A.causal_mask(6), M.make_mask("causal + padding", 6, 4)):
        pre = A.masked_attention(q, k, v, mask, "pre")
        renorm = A.masked_attention(q, k, v, mask, "post_renorm")
        torch.testing.assert_close(renorm[0], pre[0])
        torch.testing.assert_close(renorm[1], pre[1])


def test_multiply_logits_gives_masked_keys_weight():
    q, k, v = qkv(seed=4)
    _, w = A.masked_attention(q, k, v, A.causal_mask(6), "multiply_logits")
    assert float(w[~A.causal_mask(6)].min()) > 0


def test_leakage_is_detected_for_post_and_absent_for_pre():
    q, k, v = M.example(8, 16, seed=0)
    leaks = M.leakage(q, k, v, A.causal_mask(8))
    assert leaks["pre"] == 0.0
    assert leaks["post_renorm"] < 1e-12
    assert leaks["post"] > 1e-3 and leaks["multiply_logits"] > 1e-3


def test_leakage_probe_by_brute_force_for_pre():
    """Independent check: recompute 'pre' with the last key deleted altogether."""
    q, k, v = M.example(7, 8, seed=2)
    mask = A.causal_mask(7)
    out, _ = A.masked_attention(q, k, v, mask, "pre")
    for i in range(6):                          # query i sees keys 0..i only
        ref, _ = A.dot_product_attention(q[i:i + 1], k[: i + 1], v[: i + 1])
        torch.testing.assert_close(out[i], ref[0])


def test_gradients_never_reach_masked_logits_in_pre():
    q, k, v = M.example(8, 16, seed=1)
    grads = M.gradients(q, k, v, A.causal_mask(8))
    mask = A.causal_mask(8)
    assert torch.all(grads["pre"][~mask] == 0)
    assert grads["post"][~mask].abs().max() > 1e-3
    torch.testing.assert_close(grads["post_renorm"], grads["pre"], atol=1e-12, rtol=0)


def test_renorm_underflow_demo():
    sums = M.renorm_underflow()
    assert sums["pre"] == pytest.approx(1.0) and sums["post_renorm"] == 0.0


def test_masks():
    c = A.causal_mask(4)
    assert c.dtype == torch.bool and torch.equal(c, torch.tril(torch.ones(4, 4)).bool())
    p = A.padding_mask([2, 4, 0], 4)
    assert p.tolist() == [[True, True, False, False], [True] * 4, [False] * 4]
    both = c & p[:, None, :]
    assert both.shape == (3, 4, 4) and not both[2].any()
    with pytest.raises(ValueError, match="lengths"):
        A.padding_mask([5], 4)


@pytest.mark.parametrize("kwargs, message", [
    (dict(mode="after"), "mode must be one of"),
    (dict(mask=torch.ones(6, 6)), "boolean"),
    (dict(mask=torch.ones(5, 6, dtype=torch.bool)), "does not broadcast"),
    (dict(scale=0), "scale"),
])
def test_bad_masking_input(kwargs, message):
    q, k, v = qkv()
    with pytest.raises(ValueError, match=message):
        A.masked_attention(q, k, v, **kwargs)


@settings(max_examples=100, deadline=None)
@given(lq=st.integers(1, 7), lk=st.integers(1, 7), d=st.integers(1, 5),
       scale=st.floats(1e-4, 1e4), seed=st.integers(0, 10_000), mode=st.sampled_from(list(A.MASK_MODES)))
def test_every_mode_is_finite_and_pre_is_a_proper_average(lq, lk, d, scale, seed, mode):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(lq, d, generator=g, dtype=torch.float64) * 100
    k = torch.randn(lk, d, generator=g, dtype=torch.float64) * 100
    v = torch.randn(lk, 2, generator=g, dtype=torch.float64)
    mask = torch.rand(lq, lk, generator=g) > 0.5
    out, w = A.masked_attention(q, k, v, mask, mode, scale=scale)
    assert torch.isfinite(out).all() and torch.isfinite(w).all() and (w >= 0).all()
    if mode == "pre":
        assert torch.all(w[~mask] == 0)
        sums = w.sum(-1)
        expected = mask.any(-1).to(sums.dtype)
        torch.testing.assert_close(sums, expected)
        h = A.entropy(w)
        assert torch.all(h >= 0) and torch.all(h <= math.log(lk) + 1e-9)


def test_integer_positions_get_integer_ticks_at_the_shortest_length():
    """Masking at length 2: every figure over positions ticks at 0 and 1 only (plotly's own ticks were -0.5, 0.5,
    1.5, and the two heatmaps' labels ran together)."""
    from explorer.lessons import masking as M
    from explorer.lessons.params import defaults

    specs = M.figures({**defaults(M.PARAMS), M.LENGTH.key: 2})
    for name in ("masking", "row_sums", "output_norms", "grad_heatmap"):
        layout = specs[name].figure("en").layout
        axes = [k for k in layout.to_plotly_json() if k.startswith("xaxis")]
        assert axes and all(layout[k].dtick == 1 and layout[k].tick0 in (0, None) for k in axes), name
