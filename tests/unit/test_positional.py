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


@pytest.mark.parametrize("d, base", [(2, 10000.0), (16, 10000.0), (64, 100.0)])
def test_the_sinusoidal_kernel_is_the_dot_product_of_the_tables_rows(d, base):
    """position_kernel("sinusoidal") at offset k against PE(i)·PE(i - k) from the table itself, for every i of a
    64-long table: one value per offset, whatever i."""
    from explorer.positional import position_kernel

    pe = sinusoidal(64, d, base, dtype=torch.float64)
    gram = pe @ pe.T
    for k in range(-20, 21):
        pairs = [float(gram[i, i - k]) for i in range(64) if 0 <= i - k < 64]
        assert max(abs(p - float(position_kernel("sinusoidal", [k], d=d, base=base))) for p in pairs) < 1e-9


@pytest.mark.parametrize("factor", [1.0, 4.0])
def test_the_rope_kernel_is_the_expected_score_of_a_random_query_with_itself(factor):
    """E[rope(q)_i · rope(q)_j] for q with independent N(0, 1) entries is the sum over the basis vectors e_a of
    rope(e_a)_i · rope(e_a)_j (E[q_a q_b] = 1 when a = b, else 0): computed with ``rope`` at positions i/factor and
    j/factor (position interpolation), it equals position_kernel("rope") at i - j; and a factor of 4 is the same
    curve 4 times wider."""
    from explorer.positional import position_kernel

    d = 16
    eye = torch.eye(d, dtype=torch.float64)
    for i, j in [(0, 0), (5, 2), (2, 5), (30, 1), (7, 40)]:
        at_i = rope(eye, torch.full((d,), i / factor, dtype=torch.float64))
        at_j = rope(eye, torch.full((d,), j / factor, dtype=torch.float64))
        expected = float((at_i * at_j).sum())
        assert abs(float(position_kernel("rope", [i - j], d=d, factor=factor)) - expected) < 1e-9
    wide = position_kernel("rope", [12.0, 40.0], d=d, factor=4.0)
    assert torch.allclose(wide, position_kernel("rope", [3.0, 10.0], d=d))


@pytest.mark.parametrize("n_heads", [1, 6, 8])
def test_the_alibi_kernel_is_the_factor_its_bias_puts_on_the_weights(n_heads):
    """exp of alibi_bias (both sides) at (i, j) equals position_kernel("alibi") at i - j, head by head: a Laplace
    kernel exp(-|i - j| / w) with w = 1/m_h."""
    from explorer.positional import position_kernel

    bias = alibi_bias(n_heads, 12, causal=False, dtype=torch.float64)
    kernel = position_kernel("alibi", range(-11, 12), n_heads=n_heads)
    for i in range(12):
        for j in range(12):
            assert torch.allclose(torch.exp(bias[:, i, j]), kernel[:, i - j + 11])
    widths = 1 / alibi_slopes(n_heads)
    assert torch.allclose(kernel[:, 11 + 3], torch.exp(-3 / widths))


def test_position_kernel_and_its_figure_refuse_what_they_cannot_draw():
    """An unknown scheme, an odd width and a non-finite offset are refused with a sentence; plot.positional draws
    exactly the kernel's values, one line per ALiBi head, with its axes titled."""
    from explorer import plot
    from explorer.positional import position_kernel

    for call, said in [(lambda: position_kernel("cosine", [0]), "one of"),
                       (lambda: position_kernel("rope", [0], d=7), "even"),
                       (lambda: position_kernel("sinusoidal", [float("nan")]), "finite"),
                       (lambda: plot.positional(scheme="xpos"), "one of"),
                       (lambda: plot.positional(scheme="rope", max_offset=0), "max_offset")]:
        with pytest.raises(ValueError, match=said):
            call()
    fig = plot.positional(scheme="rope", max_offset=10, d=32, factor=2.0, lang="zh")
    assert list(fig.data[0].x) == list(range(-10, 11))
    assert torch.allclose(torch.as_tensor(fig.data[0].y), position_kernel("rope", range(-10, 11), d=32, factor=2.0))
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text and "32" in fig.layout.title.text
    assert len(plot.positional(scheme="alibi", n_heads=6).data) == 6
