"""Guards for choices made for speed: figures built without validation (what the landing page imports is
tests/app/test_landing_and_navigation.py)."""

import ast
import subprocess

from tests.conftest import ROOT


def loaded_after(code: str, modules=("torch._dynamo", "sympy")) -> list[str]:
    """Which of ``modules`` a fresh interpreter has loaded after running ``code`` (which must not fail)."""
    import sys

    probe = f"{code}\nimport sys\nprint(sorted(m for m in {tuple(modules)!r} if m in sys.modules))\n"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert " failed" not in out.stderr, out.stderr[-2000:]          # (the warm-up logs a lesson it could not draw)
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])


def test_figures_are_validated_under_test():
    # pages skip plotly's validation for speed; the suite turns it on so misspelt properties fail here
    import pytest

    from explorer.figures import style

    assert style.VALIDATE
    with pytest.raises(ValueError, match="lin"):
        style.figure([{"type": "scatter", "x": [1], "y": [1], "lin": {"width": 2}}], "t", "x", "y")


def test_the_attention_functions_never_load_sympy():
    """torch.broadcast_shapes imports torch's symbolic-shape machinery and sympy on its first call (1.7 s, in every
    server, export and notebook that draws an attention figure): the package broadcasts with numpy's rule instead
    (explorer._checks.broadcast_shapes). In a fresh interpreter, top-k, masked, online-softmax and causal linear
    attention run, broadcasting batch dimensions, and sympy is still not loaded."""
    code = """
import sys, torch
from explorer.attention import masked_attention, topk_attention, causal_mask
from explorer.online import online_softmax_attention
from explorer.efficient import linear_attention
q, k, v = torch.randn(2, 1, 5, 4), torch.randn(1, 3, 6, 4), torch.randn(1, 3, 6, 2)
out, w = topk_attention(q, k, v, k_top=2)
assert out.shape == (2, 3, 5, 2), out.shape
masked_attention(q, k, v, mask=torch.ones(5, 6, dtype=torch.bool))
online_softmax_attention(q, k, v, block_size=2)
linear_attention(torch.randn(2, 1, 6, 4), k, v, causal=True)
"""
    assert loaded_after(code, ("sympy", "torch.fx.experimental.symbolic_shapes")) == []


def test_the_packages_broadcast_is_torchs():
    """explorer._checks.broadcast_shapes against torch.broadcast_shapes: the same shape, and an error where torch
    raises one."""
    import pytest
    import torch

    from explorer._checks import broadcast_shapes

    for shapes in [((2, 1, 4), (3, 1)), ((5,), (1,)), ((), (2, 3)), ((1, 1), (4, 1), (1, 7)), (torch.Size([2, 3]),)]:
        assert broadcast_shapes(*shapes) == tuple(torch.broadcast_shapes(*shapes)), shapes
    for shapes in [((2, 3), (4, 3)), ((5, 6), (5, 5))]:
        with pytest.raises(RuntimeError):
            torch.broadcast_shapes(*shapes)
        with pytest.raises(RuntimeError):
            broadcast_shapes(*shapes)


def test_a_servers_warm_up_never_loads_torchs_compiler():
    """A server's warm-up computes every lesson's default figures. torch's compiler (torch._dynamo, sympy among it:
    3.5 s of CPU) is imported by the first torch.optim optimizer and the first FlopCounterMode a process makes: the
    lessons train with explorer._adam and write the KV cache's FLOPs out from the layers' shapes, so a fresh
    interpreter runs the warm-up of the two lessons that made them, each without a failure, and never loads it
    (fails with either)."""
    assert loaded_after("from explorer.lessons import lesson\n"
                        "from explorer.ui import warmup\n"
                        "warmup.run([lesson('softmax_kernel'), lesson('live_training')])") == []


def test_training_never_loads_torchs_compiler():
    """A trainer, a parametric fit and an in-context grid point in a fresh interpreter train with explorer._adam:
    torch._dynamo is never loaded (it is with torch.optim's optimizers)."""
    assert loaded_after("import torch\n"
                        "from explorer.training import Trainer\n"
                        "Trainer.for_task('sort', seed=0).step(2)\n"
                        "from explorer.learned import fit_parametric_attention\n"
                        "x = torch.linspace(0, 1, 20, dtype=torch.float64)\n"
                        "fit_parametric_attention(x, torch.sin(6 * x), steps=2)\n"
                        "from explorer.incontext import train\n"
                        "train(2.0, 0.3, 16, seed=0, steps=2)") == []


def test_two_apptests_in_one_process_scan_the_installed_distributions_once(monkeypatch):
    """tests/conftest.py keeps the answer of Streamlit's search for components among the installed distributions
    (made on each new AppTest's first run): two AppTests read the distributions' list once, not twice. Fails if a
    Streamlit release moves the search so that the kept answer is no longer used."""
    import importlib.metadata

    from streamlit.components.v2 import manifest_scanner
    from streamlit.testing.v1 import AppTest

    listed = []
    real = importlib.metadata.distributions
    monkeypatch.setattr(importlib.metadata, "distributions", lambda *a, **k: listed.append(1) or real(*a, **k))
    getattr(manifest_scanner.scan_component_manifests, "cache_clear", lambda: None)()     # (scan afresh here)

    def page():
        import streamlit as st

        st.write("one")

    for _ in range(2):
        assert not AppTest.from_function(page).run().exception
    assert len(listed) == 1


def test_make_test_hands_out_the_files_longest_first():
    """pytest-xdist hands out the files with the most tests first unless told not to (--no-loadscope-reorder), which
    undoes tests/conftest.py's order (the longest files first) and leaves a browser file, long but with few tests,
    to be the run's tail: both make test and make test-fast pass the option."""
    for target in ("test", "test-fast"):
        dry = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        pytest_lines = [line for line in dry.splitlines() if " -m pytest " in line]
        assert pytest_lines and all("--dist loadfile --no-loadscope-reorder" in line for line in pytest_lines), dry
