"""Claims of the Scaling page, on its tables (n = 256 queries and keys per d) at several seeds."""

import math

import numpy as np
import pytest

from explorer.i18n import t
from explorer.scaling import key_norm_range, logit_stats, regime_vs_scale, scaling_summary
from tests.app.helpers import assert_clean, page

DS = [2 ** i for i in range(11)]


@pytest.fixture(scope="module", params=[0, 1, 2])
def tables(request):
    seed = request.param
    return logit_stats(DS, 256, False, seed), logit_stats(DS, 256, True, seed)


def test_question_and_first_notice_line(tables):
    """sc.question / sc.notice lines 1-2: unscaled std follows √d and rows sharpen with d; scaled std is 1."""
    un, sc = tables
    assert np.allclose(un["logit_std"], np.sqrt(DS), rtol=0.08)
    assert un.set_index("d").loc[128, "logit_std"] == pytest.approx(11.3, rel=0.03)
    assert np.allclose(sc["logit_std"], 1, atol=0.1)
    assert np.all(np.diff(un["max_weight"]) > -0.01) and un["max_weight"].iloc[-1] > 0.9
    s = scaling_summary(un, sc)
    assert s["d_half"] is not None and un.set_index("d").loc[s["d_half"], "max_weight"] > 0.5
    smaller = [d for d in DS if d < s["d_half"]]
    assert all(un.set_index("d").loc[d, "max_weight"] <= 0.5 for d in smaller)
    assert s["scaled_maxw"][1] - s["scaled_maxw"][0] < 0.03


def test_gradient_text(tables):
    """sc.grad_text: unscaled, the Jacobian norm rises to an interior peak and drops below the scaled one
    only from the quoted d; at d = 64 and 128 it is larger unscaled; scaled, entropy and max weight barely
    move with d."""
    un, sc = tables
    s = scaling_summary(un, sc)
    g_un, g_sc = un.set_index("d")["softmax_grad_norm"], sc.set_index("d")["softmax_grad_norm"]
    assert 1 < s["d_peak"] < 1024
    assert g_un[64] > g_sc[64] and g_un[128] > g_sc[128]
    assert s["d_cross"] is not None and all(g_un[d] >= g_sc[d] for d in DS if 1 < d < s["d_cross"])
    assert g_un[s["d_cross"]] < g_sc[s["d_cross"]]
    assert s["scaled_entropy"][1] - s["scaled_entropy"][0] < 0.2        # against 5 nats of change unscaled
    assert s["unscaled_entropy"][0] > 4 and s["unscaled_entropy"][1] < 0.5


def test_regime_depends_on_the_scale_alone():
    """sc.grad_text: near-uniform rows give about 1/√n; the curve rises then vanishes at large scale; each
    unscaled d sits on the curve at s = its logit std."""
    curve = regime_vs_scale(np.logspace(-1, 2, 61), 256, 0)
    g = curve["softmax_grad_norm"].to_numpy()
    assert g[0] == pytest.approx(1 / math.sqrt(256), rel=0.1)
    assert 0 < int(g.argmax()) < len(g) - 1 and g[-1] < 0.5 * g.max()
    un = logit_stats([16, 256], 256, False, 0)
    at_s = regime_vs_scale(un["logit_std"], 256, 1)
    assert np.allclose(at_s["softmax_grad_norm"], un["softmax_grad_norm"], rtol=0.15)


def test_kernel_reading_needs_equal_key_norms():
    """sc.notice line 3: the page's keys have N(0, I) entries, whose norms differ (so the Gaussian-kernel
    reading holds only up to the per-key bias)."""
    lo, hi = key_norm_range(128, 256, 0)
    assert hi / lo > 1.3 and lo < math.sqrt(128) < hi
    at = page("scaling")
    assert_clean(at)
    text = next(m.value for m in at.markdown if m.value.startswith("- Unscaled, the std"))
    assert f"from {lo:.1f} to {hi:.1f} at d = 128" in text
    assert "only when all keys have the same norm" in t("sc.notice", std128="", lo="", hi="", d_half="", mw="",
                                                        mw_lo="", mw_hi="", d="", kmin="", kmax="", sqrt_d="")
