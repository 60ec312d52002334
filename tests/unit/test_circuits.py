"""Ablation against a forward pass written out by hand, and the circuit scores on weights built by hand."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from explorer.training import (
    ModelConfig,
    TinyTransformer,
    ablate,
    copying_score,
    head_scores_steps,
    k_composition,
    ov_circuit,
    qk_circuit,
)
from explorer.training.tasks import Batch


def _model(causal=True, mlp=False, layers=2, heads=2, seed=0):
    cfg = ModelConfig(vocab=11, seq_len=9, n_layers=layers, n_heads=heads, d_model=32, with_mlp=mlp, causal=causal)
    model = TinyTransformer(cfg).init_weights(torch.Generator().manual_seed(seed))
    with torch.no_grad():                       # random, not tiny, weights: every head matters
        for p in model.parameters():
            p.mul_(20.0) if p.ndim == 2 else p.add_(0.1 * torch.randn(p.shape, generator=torch.Generator()))
    return model


def _by_hand(model, x, off=(), how="zero"):
    """The model's forward pass from its parameters with F primitives, the listed (layer, head) outputs replaced."""
    cfg, p = model.cfg, dict(model.named_parameters())
    B, T = x.shape
    C, H = cfg.d_model, cfg.n_heads
    D = C // H
    h = F.embedding(x, p["embed.weight"]) + p["pos.weight"][:T]
    for layer in range(cfg.n_layers):
        pre = f"blocks.{layer}."
        z = F.layer_norm(h, (C,), p[pre + "ln1.weight"], p[pre + "ln1.bias"])
        qkv = z @ p[pre + "attn.qkv.weight"].T + p[pre + "attn.qkv.bias"]
        q, k, v = (qkv[..., i * C:(i + 1) * C].reshape(B, T, H, D).permute(0, 2, 1, 3) for i in range(3))
        logits = q @ k.transpose(-1, -2) / math.sqrt(D)
        if cfg.causal:
            logits = logits.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), -math.inf)
        out = torch.softmax(logits, -1) @ v                                # (B, H, T, D)
        for ol, oh in off:
            if ol == layer:
                out[:, oh] = 0.0 if how == "zero" else out[:, oh].mean(0, keepdim=True)
        h = h + out.permute(0, 2, 1, 3).reshape(B, T, C) @ p[pre + "attn.proj.weight"].T + p[pre + "attn.proj.bias"]
        if cfg.with_mlp:
            z = F.layer_norm(h, (C,), p[pre + "ln2.weight"], p[pre + "ln2.bias"])
            h = h + F.linear(F.gelu(F.linear(z, p[pre + "mlp.0.weight"], p[pre + "mlp.0.bias"])),
                             p[pre + "mlp.2.weight"], p[pre + "mlp.2.bias"])
    h = F.layer_norm(h, (C,), p["ln_f.weight"], p["ln_f.bias"])
    return h @ p["head.weight"].T + p["head.bias"]


X = torch.randint(0, 11, (5, 9), generator=torch.Generator().manual_seed(3))


@pytest.mark.parametrize("causal, mlp", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("off", [[], [(0, 1)], [(1, 0)], [(0, 0), (1, 1)], [(0, 0), (0, 1), (1, 0), (1, 1)]])
@pytest.mark.parametrize("how", ["zero", "mean"])
def test_ablation_equals_the_forward_pass_with_those_heads_replaced_by_hand(causal, mlp, off, how):
    model = _model(causal, mlp)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    model.train()
    with torch.no_grad():
        expected = _by_hand(model, X, off, how)
    got = ablate(model, X, off, how)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    assert model.training and all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    if off:
        assert (got - ablate(model, X, [])).abs().max() > 1e-3            # switching a head off does something


def test_ablating_nothing_is_the_model_and_bad_heads_are_refused():
    model = _model()
    torch.testing.assert_close(ablate(model, X, []), model.eval()(X)[0].detach(), rtol=0, atol=0)
    with pytest.raises(ValueError, match="not in a 2-layer"):
        ablate(model, X, [(2, 0)])
    with pytest.raises(ValueError, match="how"):
        ablate(model, X, [(0, 0)], how="half")


def test_scores_on_hand_built_weights():
    """A head exactly on t-1 scores 1 for previous-token; a layer-1 head exactly on the position after the
    earlier occurrence of its own token scores 1 for induction; uniform heads score less."""
    T, B = 12, 3
    prefix = torch.stack([torch.randperm(20, generator=torch.Generator().manual_seed(b))[:6] for b in range(B)])
    x = torch.cat([prefix, prefix], dim=1)                                  # each sequence repeats its prefix
    prev = torch.zeros(T, T)
    prev[torch.arange(1, T), torch.arange(T - 1)] = 1.0
    prev[0, 0] = 1.0
    induction = torch.zeros(B, T, T)
    for b in range(B):
        for t in range(T):
            later = [j for j in range(1, t + 1) if x[b, j - 1] == x[b, t]]
            induction[b, t, later[0] if later else 0] = 1.0
    uniform = torch.ones(T, T).tril() / torch.arange(1, T + 1)[:, None]
    layer0 = torch.stack([prev.expand(B, T, T), uniform.expand(B, T, T)], dim=1)     # (B, H, T, T)
    layer1 = torch.stack([induction, uniform.expand(B, T, T)], dim=1)
    rows = torch.zeros(B, T, dtype=torch.bool)
    rows[:, 6:] = True
    batch = Batch(x, x, rows, ind_rows=rows)
    scores = head_scores_steps([[layer0, layer1]], [batch])[0]
    assert scores["prevtok_l0_h0"] == pytest.approx(1.0) and scores["induction_l1_h0"] == pytest.approx(1.0)
    assert scores["prevtok_l0_h1"] < 0.5 and scores["induction_l1_h1"] < 0.5


def test_copying_score_of_copying_and_anti_copying_matrices_and_against_numpy():
    assert copying_score(2.5 * np.eye(7)) == pytest.approx(1.0)
    assert copying_score(-0.3 * np.eye(7)) == pytest.approx(-1.0)
    rng = np.random.default_rng(0)
    m = rng.normal(size=(9, 9))
    assert copying_score(m) == pytest.approx(np.trace(m) / np.abs(np.linalg.eigvals(m)).sum())
    assert -1 <= copying_score(m) <= 1


def test_circuits_are_the_products_of_the_head_weights():
    """Built here from the state dict with reshapes instead of slices."""
    model = _model(layers=2, heads=4)
    sd = {k: v.double().numpy() for k, v in model.state_dict().items()}
    C, H = 32, 4
    D = C // H
    for layer, head in [(0, 0), (1, 3)]:
        w = sd[f"blocks.{layer}.attn.qkv.weight"].reshape(3, H, D, C)[:, head]          # q, k, v: (D, C) each
        wo = sd[f"blocks.{layer}.attn.proj.weight"].reshape(C, H, D)[:, head]           # (C, D)
        e, wu = sd["embed.weight"], sd["head.weight"]
        np.testing.assert_allclose(qk_circuit(model, layer, head), e @ w[0].T @ w[1] @ e.T, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(ov_circuit(model, layer, head), wu @ wo @ w[2] @ e.T, rtol=1e-10, atol=1e-10)


def test_k_composition_is_one_when_aligned_zero_when_orthogonal_and_at_most_one():
    model = _model(layers=2, heads=1)
    C = 32
    attn0, attn1 = model.blocks[0].attn, model.blocks[1].attn
    u, v, w = (torch.nn.functional.one_hot(torch.tensor(i), C).double() for i in (0, 1, 2))
    with torch.no_grad():
        attn1.qkv.weight.zero_()
        attn1.qkv.weight[0] = u.float()                  # W_Q = e_0 u^T: W_QK = W_Q^T W_K = u v^T
        attn1.qkv.weight[C] = v.float()
        attn0.qkv.weight[2 * C:] = 0.0
        attn0.qkv.weight[2 * C] = w.float()              # W_V row: reads w ...
        attn0.proj.weight.zero_()
        attn0.proj.weight[1, 0] = 1.0                    # ... W_O writes into v: W_OV = v w^T, what the keys read
    assert k_composition(model, (0, 0), (1, 0)) == pytest.approx(1.0)
    with torch.no_grad():
        attn0.proj.weight.zero_()
        attn0.proj.weight[5, 0] = 1.0                    # writes into a direction the keys ignore
    assert k_composition(model, (0, 0), (1, 0)) == pytest.approx(0.0)
    rand = _model(layers=2, heads=2, seed=4)
    assert 0 < k_composition(rand, (0, 1), (1, 0)) <= 1
    with pytest.raises(ValueError, match="earlier layer"):
        k_composition(rand, (1, 0), (1, 1))
