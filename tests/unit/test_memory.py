"""The server's caches in bytes (``explorer.ui.memory``): one budget across every cache, the least recently used
entry anywhere dropped first, an entry too large for the budget used and not kept, computed results handed out as
copies, sizes counted from the arrays a value holds."""

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from explorer.kernels import get_kernel
from explorer.ui import cache, figure, memory
from explorer.ui.figure import single_precision
from explorer.ui.memory import Budget, Kept


def test_the_budget_holds_across_caches_and_drops_the_least_recently_used_anywhere():
    budget = Budget(10_000)
    a, b = Kept("a", 100, budget), Kept("b", 100, budget)
    for i in range(30):                                         # 30 entries of 800 bytes into a 10,000-byte budget
        (a if i % 3 else b).get(i, lambda: np.zeros(100))
        assert budget.used == a.bytes + b.bytes <= budget.limit
    assert len(a) + len(b) == 12                                # 12 x 800 = 9,600: the last twelve
    assert set(a._kept) | set(b._kept) == set(range(18, 30))
    b.get(18, lambda: pytest.fail("kept, not rebuilt"))          # a use moves it to the back of the line
    a.get(99, lambda: np.zeros(100))
    assert 18 in b._kept and 19 not in a._kept and 99 in a._kept


def test_an_entry_over_its_share_of_the_budget_is_used_and_not_kept_and_counts_are_bounded_too():
    budget = Budget(10_000)
    kept = Kept("k", 3, budget)
    big = kept.get("big", lambda: np.zeros(400))                 # 3,200 bytes > 25 % of 10,000
    assert big.shape == (400,) and len(kept) == 0 and kept.too_big == 1 and budget.used == 0
    for i in range(5):
        kept.get(i, lambda: np.zeros(10))
    assert list(kept._kept) == [2, 3, 4] and budget.used == 3 * 80
    kept.clear()
    assert budget.used == 0 and len(kept) == 0


def test_a_computed_result_is_handed_out_as_a_copy_so_no_page_changes_anothers():
    calls = []

    @memory.memo(4)
    def compute(n):
        calls.append(n)
        return {"w": np.arange(n, dtype=float), "rows": [np.ones(2)], "label": "x"}

    first = compute(3)
    first["w"][0] = 99.0
    first["rows"][0][:] = 7.0
    again = compute(3)
    assert calls == [3] and again["w"][0] == 0.0 and again["rows"][0].tolist() == [1.0, 1.0]
    compute.clear()
    compute(3)
    assert calls == [3, 3]


def test_sizes_count_the_arrays_and_text_a_value_holds():
    w = np.zeros((100, 50))
    assert memory.nbytes(w) == 40_000
    assert memory.nbytes({"a": w, "b": w}) == 40_000 + 2 * (1 + 8)               # shared: counted once
    assert 40_000 <= memory.nbytes({"a": w, "t": "abc", "l": [1.5, 2.5]}) < 40_500
    fig = go.Figure(go.Heatmap(z=np.random.default_rng(0).normal(size=(200, 300))))
    drawn = memory.nbytes(fig)
    assert 480_000 <= drawn < 500_000                            # 60,000 float64 and a little layout
    ready = memory.nbytes(single_precision(fig))                 # the browser's copy: float32, base64 text
    assert 4 / 3 * 240_000 <= ready < 4 / 3 * 240_000 + 5_000


def test_every_cache_of_the_pages_is_in_the_servers_budget():
    memos = [f for f in vars(cache).values() if hasattr(f, "kept")]
    assert len(memos) >= 9
    budgeted = set(memory.BUDGET.caches)
    assert all(f.kept in budgeted for f in memos) and {figure.DRAWN, figure.FOLLOWED} <= budgeted


@pytest.mark.parametrize("value, ok", [("64", True), ("", True), ("0", False), ("lots", False), ("1e9", False)])
def test_the_budget_is_read_from_the_environment_or_refused_with_a_sentence(value, ok):
    if ok:
        assert memory.budget_bytes({"EXPLORER_CACHE_MB": value}) in (64 * 2**20, memory.DEFAULT_MB * 2**20)
    else:
        with pytest.raises(ValueError, match="EXPLORER_CACHE_MB must be a number of MiB from 16"):
            memory.budget_bytes({"EXPLORER_CACHE_MB": value})


def test_leave_one_out_scores_are_remembered_exactly_and_the_memo_is_bounded(monkeypatch):
    """``explorer._scores``: a remembered score equals a fresh one, another dataset or kernel is scored anew, and
    the memo holds at most ``MAX_SCORES``."""
    from explorer import _scores, bandwidth

    rng = np.random.default_rng(0)
    x, y = np.sort(rng.uniform(-3, 3, 300)), rng.normal(size=300)
    hs = [0.05, 0.2, 1.0]
    first = bandwidth.loo_cv_scores(x, y, "gaussian", hs).numpy()
    calls = []
    monkeypatch.setattr(bandwidth, "loo_predictions", lambda *a, **k: calls.append(a) or pytest.fail("recomputed"))
    np.testing.assert_array_equal(bandwidth.loo_cv_scores(x, y, "gaussian", hs).numpy(), first)
    monkeypatch.undo()
    fresh = [float(((bandwidth.loo_predictions(get_kernel("gaussian"), h, torch.as_tensor(x), torch.as_tensor(y))
                     - torch.as_tensor(y)) ** 2).mean()) for h in hs]
    np.testing.assert_allclose(first, fresh, rtol=0, atol=0)
    assert not np.array_equal(bandwidth.loo_cv_scores(x, y + 1e-3 * rng.normal(size=300), "gaussian", hs), first)
    monkeypatch.setattr(_scores, "MAX_SCORES", 5)
    bandwidth.loo_cv_scores(x, y, "laplace", [0.1 * (i + 1) for i in range(8)])
    assert len(_scores._SCORES) == 5


def test_a_full_collection_runs_once_the_process_has_grown_and_frees_what_cycles_held(monkeypatch):
    sizes = iter([100, 100 + memory.COLLECT_AFTER - 1, 100 + memory.COLLECT_AFTER, 50, 60])
    monkeypatch.setattr(memory, "rss_bytes", lambda: next(sizes))
    monkeypatch.setattr(memory, "_collected", {"rss": 0})

    class Cycle:
        def __init__(self):
            self.me, self.block = self, np.ones(1000)

    import gc
    import weakref

    gc.disable()                                     # (Python's own collector must not get there first)
    try:
        held = weakref.ref(Cycle().block)            # an array only a cycle of garbage holds
        assert memory.collect_if_grown() is False    # the first call notes the size
        assert memory.collect_if_grown() is False and held() is not None      # grown by less: nothing collected
        assert memory.collect_if_grown() is True and held() is None and memory._collected["rss"] == 50
        assert memory.collect_if_grown() is False    # 60 - 50: grown too little since
    finally:
        gc.enable()


def test_a_server_given_a_mistyped_budget_says_so_in_one_line_and_serves_nothing(tmp_path):
    """``streamlit run app.py`` imports app.py as the server; with ``EXPLORER_CACHE_MB=lots`` it stops with the
    sentence that names what is allowed, not a traceback."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    checkout = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", "import app"], cwd=checkout, capture_output=True, text=True,
                          env={**os.environ, "EXPLORER_CACHE_MB": "lots"}, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == ("error: EXPLORER_CACHE_MB must be a number of MiB from 16 to "
                                                    "1048576; it is 'lots'")
