"""Claims of the Efficient attention page, checked on the data its figures draw at the page's defaults
(and over the settings a sentence covers)."""

import math

import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from explorer import lessons
from explorer.data import dataset_arrays
from explorer.efficient import linear_attention, online_softmax_attention, random_feature_map
from explorer.figures.registry import COMPUTES, COST_LENGTHS, DENSE_MAX, EMBED_D, FIGURES
from explorer.i18n import t
from explorer.ui.page_controls import EfficientAttention as C
from tests.app.helpers import assert_clean, chart_data, page

DATA = dataset_arrays("sine_mix", 200, 0.3, 0)          # the page's default dataset


def zoo(**changes):
    p = {"data": DATA, "h": C.H.default, "m": C.M.default, "kind": C.KIND.default, "orthogonal": C.ORTH.default,
         "seed": 0} | changes
    return FIGURES["efficient_zoo"].compute(**p)


@pytest.mark.parametrize("h", C.H.options)
def test_zoo_text_linear_attention_is_flat_and_equals_one_weighted_mean(h):
    """ef.zoo_text: with a 1-D map the weights do not depend on the query: every query gets the same
    φ(k)-weighted mean of y (computed here by hand)."""
    z = zoo(h=h)
    assert z["elu_spread"] < 1e-9
    phi = np.where(DATA["x"] / h > 0, DATA["x"] / h + 1, np.exp(DATA["x"] / h))       # elu(u) + 1
    assert np.allclose(z["elu"], (phi * DATA["y"]).sum() / phi.sum(), atol=1e-12)


def test_zoo_text_errors_are_those_of_the_drawn_weights():
    """ef.zoo_text quotes the L1 row error and the RMS fit error of the random-feature weights drawn."""
    z = zoo()
    from explorer.regression import nw_weights

    exact = nw_weights(DATA["x_grid"], DATA["x"], "gaussian", C.H.default).numpy()
    phi = random_feature_map(EMBED_D, C.M.default, C.KIND.default, C.ORTH.default, seed=0)
    q = torch.zeros(len(DATA["x_grid"]), EMBED_D, dtype=torch.float64)
    k = torch.zeros(len(DATA["x"]), EMBED_D, dtype=torch.float64)
    q[:, 0], k[:, 0] = torch.as_tensor(DATA["x_grid"]) / C.H.default, torch.as_tensor(DATA["x"]) / C.H.default
    # the Gaussian weights written out: exp(q·k - |k|²/2) = exp(-(x - x_i)²/(2h²)) x a factor of the query
    raw = phi(q) @ phi(k).T * torch.exp(-0.5 * k[:, 0] ** 2)[None, :]
    w = (raw / raw.sum(1, keepdim=True)).numpy()
    assert z["weight_error"] == pytest.approx(np.abs(w - exact).sum(1).mean(), rel=1e-9)
    assert z["fit_error"] == pytest.approx(np.sqrt(((w @ DATA["y"] - exact @ DATA["y"]) ** 2).mean()), rel=1e-9)
    assert 0 < z["weight_error"] < 0.5                       # the text's "differ by" is a small, real number


@pytest.mark.parametrize("h", [0.5, 1.0, 2.0])
def test_error_text_trig_features_follow_one_over_sqrt_m(h):
    """ef.error_text: from m = 64 on, the iid weight error falls with a log-log slope near -0.5."""
    e = FIGURES["efficient_error"].compute(data=DATA, h=h, kind="trig", seed=0)
    assert -0.65 < e["slope"] < -0.35, e["slope"]
    assert t("ef.error_text", "en", slope="-0.48", orth="0.1", iid="0.1").count("−0.5") == 1


def test_positive_text_positive_features_fall_more_slowly_here():
    """ef.positive_text: at the defaults the positive features' error falls more slowly than the trig ones',
    and |x|/h reaches the quoted value."""
    pos = FIGURES["efficient_error"].compute(data=DATA, h=C.H.default, kind="positive", seed=0)
    trig = FIGURES["efficient_error"].compute(data=DATA, h=C.H.default, kind="trig", seed=0)
    assert pos["slope"] > trig["slope"] + 0.15
    assert pos["weights_iid"][-1] > 3 * trig["weights_iid"][-1]
    assert pos["reach"] == pytest.approx(np.abs(DATA["x"]).max() / C.H.default) == pytest.approx(3.0, abs=0.05)


def test_orth_help_and_formula_text_random_features():
    """ef.orth_help: orthogonal directions come in blocks of 16 with Gaussian-vector lengths; ef.formula_text:
    E[φ(q)·φ(k)] = exp(q·k) for both kinds (mean of 300 maps within 4 standard errors)."""
    w = random_feature_map(EMBED_D, 64, "trig", orthogonal=True, seed=0).w
    for b in range(4):
        block = w[16 * b:16 * (b + 1)]
        unit = block / block.norm(dim=1, keepdim=True)
        assert torch.allclose(unit @ unit.T, torch.eye(16, dtype=torch.float64), atol=1e-12)
    q, k = torch.tensor([0.2, -0.1, 0.3]), torch.tensor([0.1, 0.25, -0.2])
    for kind in ("positive", "trig"):
        draws = torch.tensor([float(random_feature_map(3, 32, kind, seed=s)(q.double())
                                    @ random_feature_map(3, 32, kind, seed=s)(k.double())) for s in range(300)])
        se = draws.std() / math.sqrt(len(draws))
        assert abs(float(draws.mean()) - math.exp(float(q @ k))) < 4 * se


@pytest.mark.parametrize("block", C.BLOCK.options)
def test_online_text_running_values_and_final_equality(block):
    """ef.online_text: after block k the running max is the max of the logits read, the rescale factor is
    exp(m_old - m_new), the estimate from the blocks read is their softmax average; after the last block the
    result equals the full softmax to rounding; and the byte counts."""
    lo, hi = DATA["x_grid"][0], DATA["x_grid"][-1]
    x0 = lo + C.X0.default * (hi - lo)
    r = FIGURES["online_logits"].compute(data=DATA, h=C.H.default, x0=x0, block=block)
    s = r["logits"]
    prev = -math.inf
    for i, stop in enumerate(r["stops"]):
        assert r["max"][i] == s[:stop].max()
        assert r["rescale"][i] == pytest.approx(math.exp(prev - r["max"][i]) if prev > -math.inf else 0.0)
        w = np.exp(s[:stop] - s[:stop].max())
        assert r["estimate"][i] == pytest.approx((w * DATA["y"][:stop]).sum() / w.sum(), rel=1e-12)
        prev = r["max"][i]
    assert abs(r["final"] - r["exact"]) < 1e-12
    assert len(r["stops"]) == math.ceil(200 / block)
    # float64: 400 queries x 200 keys of weights, against one block of logits and 3 running sums per query
    assert r["n_queries"] == 400 and r["dense_bytes"] == 400 * 200 * 8
    assert r["stream_bytes"] == 400 * (min(block, 200) + 3) * 8
    assert (r["stream_bytes"] < r["dense_bytes"]) == (block < 200 - 3)   # "saves memory once a block holds
                                                                           # fewer than N - 3 of the keys"


def test_rnn_text_recurrence_equals_parallel_form_with_a_fixed_size_state():
    """ef.rnn_text: the state is d x d at every token, and recurrence and masked parallel form agree."""
    r = COMPUTES["_rnn"](length=12, d=4, seed=0)
    assert r["states"].shape == (12, 4, 4)
    assert r["max_diff"] < 1e-12
    assert np.allclose(r["rnn"], r["parallel"], atol=1e-12)


def test_cost_text_structure_flops_and_memory():
    """ef.cost_text / ef.notice: dense attention does work ∝ N², linear ∝ N (FLOPs counted by torch), the
    online softmax does the dense work (∝ N²) and gives the dense result, and two N × N float32 matrices
    at the largest N would take 2 GiB."""
    def flops(fn, n):
        g = torch.Generator().manual_seed(0)
        q, k, v = (torch.randn(n, 64, generator=g) for _ in range(3))
        with FlopCounterMode(display=False) as counter:
            fn(q, k, v)
        return counter.get_total_flops()

    def dense(q, k, v):
        return torch.softmax(q @ k.T / 8, -1) @ v

    def online(q, k, v):
        return online_softmax_attention(q, k, v, 128)[0]

    for fn, power in ((dense, 2), (online, 2), (linear_attention, 1)):
        assert flops(fn, 1024) / flops(fn, 512) == pytest.approx(2 ** power, rel=0.05), fn
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(512, 64, generator=g, dtype=torch.float64) for _ in range(3))
    assert torch.allclose(online(q, k, v), torch.softmax(q @ k.T / 8, -1) @ v, atol=1e-12)
    assert 2 * COST_LENGTHS[-1] ** 2 * 4 == 2 * 2 ** 30 and DENSE_MAX < COST_LENGTHS[-1]


def test_cost_text_numbers_come_from_the_measurement():
    """ef.cost_text / ef.cost_never: the crossover is the first length from which linear stays faster, and the
    quoted times are those at the largest length the dense run reached."""
    cost = {"n": np.array([32.0, 64, 128, 256]), "dense": np.array([1.0, 3.0, 2.0, np.nan]) * 1e-3,
            "linear": np.array([2.0, 1.0, 1.0, 2.0]) * 1e-3, "online": np.ones(4) * 1e-3,
            "dense_bytes": np.array([1.0, 2, 3, 4]) * 2 ** 20, "online_bytes": np.ones(4) * 2 ** 20}
    s = lessons.cost_summary(cost)
    assert s["cross"] == 64 and s["n_max"] == 128 and s["ratio"] == pytest.approx(2.0) and s["dense_mb"] == 3
    cost["linear"] = np.array([2.0, 4.0, 3.0, 1.0]) * 1e-3
    assert lessons.cost_summary(cost) is None
    assert "not faster" in t("ef.cost_never", "en", dense_max="8,192")
    assert "32 to 16,384" in t("ef.measure_help", "en") and COST_LENGTHS[0] == 32


def test_notice_the_page_at_its_defaults_shows_every_figure_and_its_numbers():
    """ef.notice: the flat line and the rounding-level difference it mentions are on the page at its defaults."""
    at = page("efficient_attention", timeout=180)
    assert_clean(at)
    fit = chart_data(at, "efficient_zoo")
    flat = next(tr for tr in fit if tr.get("name", "").startswith("linear, elu"))
    y = np.asarray(flat["y"], dtype=float)
    assert np.ptp(y) < 1e-9
    text = " ".join(m.value for m in at.markdown)
    after = text.split("differs from the full softmax by")[1]
    assert float(after.split()[0].rstrip(".")) < 1e-12
    assert t("ef.notice", "en").count("rounding") == 1
