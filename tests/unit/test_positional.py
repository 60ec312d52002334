"""Position schemes (explorer.positional) against their papers' formulas written out here, and the tiny transformer
with each scheme against the same model computed by hand."""

import cmath
import math

import pytest
import torch
import torch.nn.functional as F

from explorer.positional import alibi_bias, alibi_slopes, rope, sinusoidal
from explorer.training.model import POSITIONS, ModelConfig, TinyTransformer, generate


# ------------------------------------------------------------------------------------------------ the formulas
@pytest.mark.parametrize("length, d, base", [(12, 8, 10000.0), (5, 7, 100.0), (30, 2, 10.0)])
def test_sinusoidal_is_vaswanis_table_entry_by_entry(length, d, base):
    pe = sinusoidal(length, d, base, dtype=torch.float64)
    for p in range(length):
        for c in range(d):
            angle = p / base ** (2 * (c // 2) / d)
            assert pe[p, c].item() == pytest.approx(math.sin(angle) if c % 2 == 0 else math.cos(angle), abs=1e-12)


def test_sinusoidal_dot_products_depend_on_the_distance_only_and_oscillate():
    """PE(i)·PE(j) = Σ_k cos((i - j) ω_k): the same along every diagonal of the Gram matrix, and not monotone in
    |i - j| (it rises again after falling: no decay)."""
    d, base = 16, 10000.0
    pe = sinusoidal(200, d, base, dtype=torch.float64)
    gram = pe @ pe.T
    for delta in (0, 1, 7, 50):
        diagonal = torch.diagonal(gram, offset=delta)
        expected = sum(math.cos(delta / base ** (2 * k / d)) for k in range(d // 2))
        assert torch.allclose(diagonal, torch.full_like(diagonal, expected), atol=1e-9)
    profile = gram[0, :].numpy()
    falls_then_rises = any(profile[a] < profile[b] for a in range(1, 100) for b in range(a + 1, 100))
    assert falls_then_rises


def _rope_by_complex_numbers(x: torch.Tensor, positions, base: float) -> torch.Tensor:
    """Su et al.'s view: each pair (x_2k, x_2k+1) is the complex number x_2k + i·x_2k+1, multiplied by e^(i·p·ω_k)."""
    T, d = x.shape
    out = torch.empty_like(x)
    for t in range(T):
        for k in range(d // 2):
            z = complex(x[t, 2 * k].item(), x[t, 2 * k + 1].item()) * cmath.exp(1j * float(positions[t]) *
                                                                                 base ** (-2 * k / d))
            out[t, 2 * k], out[t, 2 * k + 1] = z.real, z.imag
    return out


@pytest.mark.parametrize("base", [10.0, 10000.0])
def test_rope_is_a_rotation_of_each_pair_by_position_times_frequency(base):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(6, 8, generator=gen, dtype=torch.float64)
    positions = torch.tensor([0, 1, 2, 5, 11, 40])
    assert torch.allclose(rope(x, positions, base), _rope_by_complex_numbers(x, positions, base), atol=1e-12)
    assert torch.allclose(rope(x, base=base), _rope_by_complex_numbers(x, range(6), base), atol=1e-12)
    assert torch.allclose(rope(x, positions, base).norm(dim=-1), x.norm(dim=-1))          # a rotation keeps length


def test_rope_scores_depend_on_i_minus_j_and_interpolation_widens_the_kernel():
    gen = torch.Generator().manual_seed(1)
    q, k = torch.randn(1, 16, generator=gen, dtype=torch.float64), torch.randn(1, 16, generator=gen,
                                                                                  dtype=torch.float64)

    def score(i, j, scale=1.0):
        return float(rope(q, torch.tensor([i / scale])) @ rope(k, torch.tensor([j / scale])).T)

    for i, j in ((3, 1), (20, 3), (100, 0)):
        assert score(i, j) == pytest.approx(score(i + 17, j + 17), rel=1e-9, abs=1e-12)
        assert score(4 * i, 4 * j, scale=4.0) == pytest.approx(score(i, j), rel=1e-9, abs=1e-12)   # 4 times as wide


def _press_slopes(n: int) -> list[float]:
    """The slope rule of Press et al.'s released code, written out: start = 2^(-2^-(log2(n) - 3)), ratio = start."""
    def power(m):
        start = 2 ** (-(2 ** -(math.log2(m) - 3)))
        return [start * start ** i for i in range(m)]
    if math.log2(n).is_integer():
        return power(n)
    closest = 2 ** math.floor(math.log2(n))
    return power(closest) + _press_slopes(2 * closest)[0::2][: n - closest]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 8, 12, 16])
def test_alibi_slopes_follow_press_et_al(n):
    assert alibi_slopes(n).tolist() == pytest.approx(_press_slopes(n), rel=1e-12)


@pytest.mark.parametrize("causal", [True, False])
def test_alibi_bias_entry_by_entry_and_its_softmax_is_a_laplace_kernel(causal):
    H, T = 4, 9
    bias = alibi_bias(H, T, causal, dtype=torch.float64)
    slopes = alibi_slopes(H)
    for h in range(H):
        for i in range(T):
            for j in range(T):
                if causal and j > i:
                    assert bias[h, i, j] == float("-inf")
                else:
                    assert bias[h, i, j].item() == pytest.approx(-slopes[h].item() * abs(i - j), abs=1e-15)
    logits = torch.randn(H, T, T, dtype=torch.float64)
    weights = torch.softmax(logits + bias, dim=-1)
    kernel = torch.exp(logits) * torch.exp(-slopes[:, None, None] * (torch.arange(T)[:, None] -
                                                                      torch.arange(T)[None, :]).abs())
    if causal:
        kernel = kernel.tril()
    assert torch.allclose(weights, kernel / kernel.sum(-1, keepdim=True), atol=1e-12)


@pytest.mark.parametrize("call, says", [
    (lambda: rope(torch.zeros(3, 5)), "even"),
    (lambda: sinusoidal(0, 4), "length"),
    (lambda: alibi_slopes(0), "n_heads"),
    (lambda: alibi_bias(2, 0), "length"),
    (lambda: rope(torch.zeros(3, 4), torch.arange(4)), "shape"),
    (lambda: ModelConfig(position="rotary"), "position"),
    (lambda: ModelConfig(position="rope", d_model=20, n_heads=4), "even"),
])
def test_bad_arguments_are_refused_with_a_sentence(call, says):
    with pytest.raises(ValueError, match=says):
        call()


# ------------------------------------------------------------------------------------- the model with each scheme
def _by_hand(model: TinyTransformer, tokens: torch.Tensor) -> torch.Tensor:
    """A one-layer TinyTransformer's output computed from its parameters, each scheme written out here."""
    cfg, p = model.cfg, dict(model.named_parameters())
    B, T = tokens.shape
    H, D = cfg.n_heads, cfg.d_model // cfg.n_heads
    x = p["embed.weight"][tokens]
    if cfg.position == "learned":
        x = x + p["pos.weight"][:T]
    elif cfg.position == "sinusoidal":
        x = x + torch.tensor([[math.sin(t / 10000 ** (2 * (c // 2) / cfg.d_model)) if c % 2 == 0 else
                               math.cos(t / 10000 ** (2 * (c // 2) / cfg.d_model)) for c in range(cfg.d_model)]
                              for t in range(T)], dtype=x.dtype)
    h = F.layer_norm(x, (cfg.d_model,), p["blocks.0.ln1.weight"], p["blocks.0.ln1.bias"])
    q, k, v = (h @ p["blocks.0.attn.qkv.weight"].T + p["blocks.0.attn.qkv.bias"]).split(cfg.d_model, dim=-1)
    out = torch.zeros_like(q)
    slopes = _press_slopes(H)
    for b in range(B):
        for head in range(H):
            cols = slice(head * D, (head + 1) * D)
            qh, kh, vh = q[b, :, cols], k[b, :, cols], v[b, :, cols]
            if cfg.position == "rope":
                qh = _rope_by_complex_numbers(qh.double(), range(T), 10000.0).to(qh.dtype)
                kh = _rope_by_complex_numbers(kh.double(), range(T), 10000.0).to(kh.dtype)
            for i in range(T):
                scores = []
                for j in range(T):
                    s = float(qh[i] @ kh[j]) / math.sqrt(D)
                    if cfg.position == "alibi":
                        s -= slopes[head] * abs(i - j)
                    scores.append(s if (j <= i or not cfg.causal) else -math.inf)
                w = torch.softmax(torch.tensor(scores, dtype=torch.float64), dim=0).to(q.dtype)
                out[b, i, cols] = w @ vh
    x = x + out @ p["blocks.0.attn.proj.weight"].T + p["blocks.0.attn.proj.bias"]
    x = F.layer_norm(x, (cfg.d_model,), p["ln_f.weight"], p["ln_f.bias"])
    return x @ p["head.weight"].T + p["head.bias"]


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("position", POSITIONS)
def test_each_scheme_matches_the_model_written_out_by_hand(position, causal):
    cfg = ModelConfig(vocab=11, seq_len=8, n_layers=1, n_heads=2, d_model=16, causal=causal, position=position)
    model = TinyTransformer(cfg).init_weights(torch.Generator().manual_seed(3))
    with torch.no_grad():
        for prm in model.parameters():                     # weights large enough that position matters
            if prm.ndim > 1:
                prm.mul_(40.0)
    tokens = torch.randint(0, 11, (2, 8), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        out, _ = model(tokens)
        assert torch.allclose(out, _by_hand(model, tokens), atol=2e-4), position


def test_the_schemes_without_a_table_run_past_the_training_length_and_learned_refuses():
    for position in POSITIONS:
        model = TinyTransformer(ModelConfig(vocab=11, seq_len=8, position=position, causal=True))
        model.init_weights(torch.Generator().manual_seed(0))
        tokens = torch.randint(0, 11, (1, 32), generator=torch.Generator().manual_seed(1))
        if position == "learned":
            with pytest.raises(ValueError, match="learned positions"):
                model(tokens)
        else:
            out, _ = model(tokens)
            assert out.shape == (1, 32, 11) and torch.isfinite(out).all()


@pytest.mark.parametrize("position", ["rope", "alibi", "sinusoidal"])
def test_decoding_with_the_cache_equals_decoding_without_it(position):
    """Keys rotated (RoPE) or distances measured (ALiBi) from absolute positions: the cached keys of earlier steps
    and the new query agree with the whole sequence recomputed."""
    model = TinyTransformer(ModelConfig(vocab=11, seq_len=24, causal=True, position=position, n_layers=2))
    model.init_weights(torch.Generator().manual_seed(5))
    prompt = torch.randint(0, 11, (2, 5), generator=torch.Generator().manual_seed(6))
    with_cache, logits_cached = generate(model, prompt, 10, use_cache=True)
    without, logits_full = generate(model, prompt, 10, use_cache=False)
    assert torch.equal(with_cache, without)
    assert torch.allclose(logits_cached, logits_full, atol=1e-5)


def test_without_positions_a_bidirectional_model_sees_a_set():
    """No position: permuting the tokens permutes the outputs (and nothing else); with RoPE it does not."""
    tokens = torch.randint(0, 11, (1, 8), generator=torch.Generator().manual_seed(7))
    perm = torch.randperm(8, generator=torch.Generator().manual_seed(8))
    for position, equivariant in (("none", True), ("rope", False)):
        model = TinyTransformer(ModelConfig(vocab=11, seq_len=8, position=position))
        model.init_weights(torch.Generator().manual_seed(9))
        with torch.no_grad():
            for prm in model.parameters():
                if prm.ndim > 1:
                    prm.mul_(40.0)
            out, _ = model(tokens)
            permuted, _ = model(tokens[:, perm])
        assert torch.allclose(permuted, out[:, perm], atol=1e-5) == equivariant, position
