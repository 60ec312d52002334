import csv
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from explorer.attention import entropy
from explorer.training import (
    TASKS,
    ModelConfig,
    TemperatureSchedule,
    TinyTransformer,
    Trainer,
    generate,
    head_metrics,
    head_metrics_steps,
    learning_rate,
    make_task,
)
from tests.conftest import ROOT


def model(**kw):
    cfg = ModelConfig(**{"vocab": 11, "seq_len": 10, "n_layers": 2, "n_heads": 4, "d_model": 32, **kw})
    return TinyTransformer(cfg).init_weights(torch.Generator().manual_seed(0))


def test_shapes_and_rows_sum_to_one():
    m = model(with_mlp=True)
    x = torch.randint(0, 11, (3, 10))
    out, weights = m(x)
    assert out.shape == (3, 10, 11) and len(weights) == 2
    for w in weights:
        assert w.shape == (3, 4, 10, 10)
        torch.testing.assert_close(w.sum(-1), torch.ones(3, 4, 10))


def test_causal_heads_have_exactly_zero_upper_triangles():
    _, weights = model(causal=True)(torch.randint(0, 11, (2, 10)))
    upper = torch.ones(10, 10, dtype=torch.bool).triu(1)
    for w in weights:
        assert torch.all(w[..., upper] == 0)


def test_attention_matches_sdpa_per_head():
    """The explicit attention equals torch's SDPA on the same q, k, v (bidirectional and causal)."""
    for causal in (False, True):
        m = model(causal=causal, n_layers=1)
        x = m.embed(torch.randint(0, 11, (2, 10))) + m.pos(torch.arange(10))
        attn = m.blocks[0].attn
        h = m.blocks[0].ln1(x)
        y, _ = attn(h, 1.0)
        q, k, v = attn.qkv(h).split(32, dim=2)
        q, k, v = (t.view(2, 10, 4, 8).transpose(1, 2) for t in (q, k, v))
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        torch.testing.assert_close(y, attn.proj(ref.transpose(1, 2).reshape(2, 10, 32)), atol=1e-6, rtol=1e-5)


def test_short_cpu_run_on_reverse_halves_the_loss():
    task = make_task("reverse")
    rows = Trainer(task.model_config(n_heads=2, d_model=64), task, lr=3e-3, seed=0).step(150)
    assert rows[-1]["loss"] < 0.5 * rows[0]["loss"]
    assert rows[-1]["accuracy"] > 0.9


def test_entropy_columns_equal_a_direct_computation():
    task = make_task("reverse")
    tr = Trainer(task.model_config(n_layers=2, n_heads=2, d_model=32), task, seed=3, batch_size=4)
    gen_state = tr.data_gen.get_state()
    row = tr.step(1)[0]
    # recompute the same batch with the weights as they were: rebuild the trainer
    tr2 = Trainer(task.model_config(n_layers=2, n_heads=2, d_model=32), task, seed=3, batch_size=4)
    tr2.data_gen.set_state(gen_state)
    batch = task.batch(4, tr2.data_gen)
    _, weights = tr2.model(batch.inputs, temperature=row["temperature"])
    for layer, w in enumerate(weights):
        for h in range(2):
            direct = float(entropy(w[:, h].detach()).mean())
            assert row[f"entropy_l{layer}_h{h}"] == pytest.approx(direct, rel=1e-5)
            assert row[f"maxw_l{layer}_h{h}"] == pytest.approx(float(w[:, h].detach().amax(-1).mean()), rel=1e-5)


def test_head_similarity_is_one_for_duplicate_heads():
    w = torch.softmax(torch.randn(2, 1, 5, 5), -1).expand(2, 3, 5, 5)
    assert head_metrics([w])["headsim_l0"] == pytest.approx(1.0)
    assert math.isnan(head_metrics([w[:, :1]])["headsim_l0"])


def test_batched_head_metrics_match_each_step_alone():
    gen = torch.Generator().manual_seed(1)
    steps = [[torch.softmax(torch.randn(3, 2, 5, 5, generator=gen), -1),
              torch.softmax(torch.randn(3, 2, 5, 5, generator=gen), -1)] for _ in range(4)]
    together = head_metrics_steps(steps)
    for step_weights, row in zip(steps, together, strict=True):
        for layer, w in enumerate(step_weights):
            for h in range(2):
                brute = float(-(w[:, h] * w[:, h].log()).sum(-1).mean())
                assert row[f"entropy_l{layer}_h{h}"] == pytest.approx(brute, rel=1e-5)
                assert row[f"maxw_l{layer}_h{h}"] == pytest.approx(float(w[:, h].amax(-1).mean()), rel=1e-6)
        assert row == pytest.approx(head_metrics(step_weights), rel=1e-6)


def test_steps_before_an_error_are_kept(monkeypatch):
    task = make_task("reverse")
    tr = Trainer(task.model_config(n_heads=2, d_model=32), task, seed=1, batch_size=4)
    calls, loss = [0], task.loss

    def failing_loss(out, batch):
        calls[0] += 1
        if calls[0] == 4:
            raise RuntimeError("interrupted")
        return loss(out, batch)

    monkeypatch.setattr(task, "loss", failing_loss)
    with pytest.raises(RuntimeError, match="interrupted"):
        tr.step(10)
    assert tr.step_count == len(tr.history) == 3
    assert all("entropy_l0_h1" in row for row in tr.history)


def test_trainer_history_does_not_depend_on_how_metrics_are_batched():
    task = make_task("reverse")
    cfg = task.model_config(n_heads=2, d_model=32)
    a, b = Trainer(cfg, task, seed=5, batch_size=4), Trainer(cfg, task, seed=5, batch_size=4)
    b.METRICS_BATCH_CELLS = 1                   # a metrics pass after every step
    rows_a, rows_b = a.step(7), b.step(7)
    assert len(rows_a) == len(rows_b) == len(a.history) == 7
    for ra, rb in zip(rows_a, rows_b, strict=True):
        assert ra == pytest.approx(rb, rel=1e-6)


def test_concurrent_runs_step_one_at_a_time():
    # a Streamlit session can run two script runs at once; the trainer's lock must serialise them
    import threading

    task = make_task("reverse")
    cfg = task.model_config(n_heads=2, d_model=32)
    shared, alone = Trainer(cfg, task, seed=2, batch_size=8), Trainer(cfg, task, seed=2, batch_size=8)
    seen = []

    def read():
        for _ in range(200):
            with shared.lock:
                seen.append((shared.step_count, len(shared.history)))

    threads = [threading.Thread(target=shared.step, args=(15,)) for _ in range(2)] + [threading.Thread(target=read)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    alone.step(30)
    assert [r["step"] for r in shared.history] == list(range(30))
    assert [r["loss"] for r in shared.history] == pytest.approx([r["loss"] for r in alone.history], rel=1e-6)
    assert all(count == length for count, length in seen)


def test_head_similarity_is_the_largest_pairwise_cosine():
    w = torch.softmax(torch.randn(4, 3, 6, 6, generator=torch.Generator().manual_seed(0)), -1)
    pairs = [float(torch.nn.functional.cosine_similarity(w[:, a].flatten(), w[:, b].flatten(), dim=0))
             for a in range(3) for b in range(3) if a < b]
    assert head_metrics([w])["headsim_l0"] == pytest.approx(max(pairs), rel=1e-6)


def test_schedules_at_start_and_end():
    assert learning_rate(0, 1.0, 10, 100, "cosine") == pytest.approx(0.1)
    assert learning_rate(10, 1.0, 10, 100, "cosine") == pytest.approx(1.0)
    assert learning_rate(100, 1.0, 10, 100, "cosine") == pytest.approx(0.1)
    assert learning_rate(50, 1.0, 0, 100, "constant") == 1.0
    lin = TemperatureSchedule("linear", 2.0, 0.5)
    cos = TemperatureSchedule("cosine", 2.0, 0.5)
    assert lin.at(0, 100) == 2.0 and lin.at(100, 100) == 0.5 and lin.at(50, 100) == pytest.approx(1.25)
    assert cos.at(0, 100) == pytest.approx(2.0) and cos.at(100, 100) == pytest.approx(0.5)
    assert TemperatureSchedule("constant", 1.5, 9.0).at(70, 100) == 1.5
    with pytest.raises(ValueError, match="temperature schedule"):
        TemperatureSchedule("exp")


def test_non_finite_loss_stops_without_crashing():
    task = make_task("reverse")
    tr = Trainer(task.model_config(n_heads=2, d_model=32), task, lr=1e3, warmup=0, schedule="constant", seed=0)
    rows = tr.step(200)
    assert tr.stopped and "Lower the learning rate" in tr.stopped
    assert len(rows) < 200
    assert all(math.isfinite(r["loss"]) for r in rows)
    assert all(torch.isfinite(p).all() for p in tr.model.parameters())
    assert tr.step(5) == []


def test_determinism_on_cpu():
    task = make_task("induction")
    cfg = task.model_config(n_heads=2, d_model=32)
    a = Trainer(cfg, task, seed=7).step(5)
    b = Trainer(cfg, task, seed=7).step(5)
    c = Trainer(cfg, task, seed=8).step(5)
    assert a == b and a != c


def test_kv_cache_gives_the_same_logits():
    m = model(causal=True, seq_len=24, vocab=11)
    prompt = torch.randint(0, 11, (2, 5), generator=torch.Generator().manual_seed(0))
    tok_a, logits_a = generate(m, prompt, 15, use_cache=True)
    tok_b, logits_b = generate(m, prompt, 15, use_cache=False)
    assert torch.equal(tok_a, tok_b)
    assert (logits_a - logits_b).abs().max() <= 1e-5
    with pytest.raises(ValueError, match="causal"):
        generate(model(causal=False), prompt, 2)


def test_evaluation_builds_no_autograd_graph_and_training_still_learns():
    m = model(causal=True, seq_len=24, vocab=11)
    prompt = torch.randint(0, 11, (2, 5), generator=torch.Generator().manual_seed(0))
    _, logits = generate(m, prompt, 3)
    assert logits.is_inference() and not logits.requires_grad          # torch.inference_mode, not only no_grad
    trainer = Trainer.for_task("induction", seed=0)
    maps = trainer.attention_maps()
    assert all(w.is_inference() for w in maps)
    first = trainer.step(1)[0]["loss"]
    assert math.isfinite(first) and trainer.model.head.weight.grad is not None   # the training step has its graph


def test_a_trainer_is_placed_where_get_device_says(monkeypatch):
    monkeypatch.setenv("EXPLORER_DEVICE", "cpu")
    assert Trainer.for_task("induction").device == torch.device("cpu")
    assert Trainer.for_task("induction", device="cpu").model.head.weight.device.type == "cpu"
    monkeypatch.setenv("EXPLORER_DEVICE", "tpu")
    with pytest.raises(ValueError, match="EXPLORER_DEVICE"):                 # the default goes through get_device
        Trainer.for_task("induction")


@pytest.mark.parametrize("name", ["induction", "sort", "sine_icl"])
def test_every_task_trains_a_few_steps(name):
    task = make_task(name)
    rows = Trainer(task.model_config(n_heads=2, d_model=32), task, seed=0, batch_size=8).step(3)
    assert len(rows) == 3 and all(math.isfinite(r["loss"]) for r in rows)


def test_induction_repeats_at_varying_offsets():
    task = make_task("induction")
    b = task.batch(64, torch.Generator().manual_seed(0))
    starts = {int(row.nonzero()[0]) for row in b.loss_mask}
    assert len(starts) > 5                       # not a fixed offset


@pytest.mark.parametrize("kwargs", [dict(n_layers=5), dict(n_heads=3, d_model=32), dict(d_model=8)])
def test_bad_config(kwargs):
    with pytest.raises(ValueError):
        ModelConfig(**kwargs)


def run_cli(*args, command=None, env=None):
    """The installed ``explorer-train`` console script (``command`` replaces it, e.g. a ``python -m`` form), with
    ``env`` added to this process's environment."""
    command = command or [str(Path(sys.executable).with_name("explorer-train"))]
    return subprocess.run([*command, *args], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_cli_writes_the_metric_columns(tmp_path):
    out = tmp_path / "run.csv"
    res = run_cli("--task", "reverse", "--steps", "30", "--seed", "0", "--out", str(out), "--heads", "2",
                  "--d-model", "32")
    assert res.returncode == 0, res.stderr
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 30
    assert {"step", "loss", "accuracy", "lr", "temperature", "entropy_l0_h0", "entropy_l0_h1", "maxw_l0_h1",
            "headsim_l0"} <= set(rows[0])
    assert "steps/s" in res.stderr


@pytest.mark.parametrize("module", ["explorer.training", "explorer.train"])
def test_cli_python_m_forms_take_the_same_arguments(tmp_path, module):
    out = tmp_path / "run.csv"
    res = run_cli("--task", "sort", "--steps", "3", "--out", str(out), command=[sys.executable, "-m", module])
    assert res.returncode == 0, res.stderr
    assert len(list(csv.DictReader(out.open()))) == 3


@pytest.mark.parametrize("args, fragment", [
    (["--task", "nope"], "invalid choice"),
    (["--heads", "3", "--d-model", "32"], "multiple of n_heads"),
    (["--steps", "0"], "--steps"),
    (["--layers", "9"], "n_layers"),
    (["--eval-lengths", "12,x", "--eval-out", "e.csv"], "whole numbers"),
    (["--eval-lengths", "24"], "--eval-out"),
    (["--task", "induction", "--eval-lengths", "32,128", "--eval-out", "e.csv"], "distinct tokens"),
    (["--position", "rope", "--heads", "4", "--d-model", "20"], "even"),
])
def test_cli_bad_arguments_exit_with_one_line(tmp_path, capsys, args, fragment):
    """Each bad argument, to the command's ``main`` in this process (a process of its own spends a second and a
    half importing torch); the installed command, with the whole of what it prints, in the test below."""
    from explorer.training.cli import main

    try:                                   # (argparse's refusals exit; the command's own checks return)
        code = main(["--out", str(tmp_path / "x.csv"), *args])
    except SystemExit as exit_:
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2
    assert fragment in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_the_installed_command_says_a_bad_argument_in_one_line_and_nothing_else(tmp_path):
    res = run_cli("--out", str(tmp_path / "x.csv"), "--heads", "3", "--d-model", "32")
    assert res.returncode == 2
    assert "multiple of n_heads" in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_training_on_cuda():
    task = make_task("reverse")
    tr = Trainer(task.model_config(n_heads=2, d_model=64), task, seed=0, device="cuda")
    rows = tr.step(100)
    assert next(tr.model.parameters()).device.type == "cuda"
    assert rows[-1]["loss"] < 0.5 * rows[0]["loss"]


def test_head_warnings_flag_collapse_and_duplicates_only_when_due():
    from explorer.training import COLLAPSE_STEPS, head_warnings

    calm = {"entropy_l0_h0": 1.2, "entropy_l0_h1": 0.01, "headsim_l0": 0.3}
    rows = [dict(calm) for _ in range(COLLAPSE_STEPS)]
    assert head_warnings(rows, 1, 2) == [("collapsed", 0, 1)]
    assert head_warnings(rows[:-1], 1, 2) == []                       # not yet for long enough
    rows[-1]["headsim_l0"] = 0.99
    assert ("duplicate", 0, 0.99) in head_warnings(rows, 1, 2)
    rows[10]["entropy_l0_h1"] = 0.5                                   # one spread-out step breaks the run
    assert ("collapsed", 0, 1) not in head_warnings(rows, 1, 2)


def test_reverse_training_ends_with_the_redundancy_warning():
    from explorer.training import head_warnings

    task = make_task("reverse")
    tr = Trainer(task.model_config(n_heads=2, d_model=64), task, seed=0)
    tr.step(200)
    kinds = {w[0] for w in head_warnings(tr.history, 1, 2)}
    assert "duplicate" in kinds


def test_cache_timing_rows_agree_on_logits():
    from explorer.training.timing import cache_timing

    timing = cache_timing([8, 24], d_model=16, n_layers=1, n_heads=2, max_rounds=3)
    rows = timing["rows"]
    assert [r[0] for r in rows] == [8, 24] and timing["rounds"] <= 3
    assert all(r[1] > 0 and r[2] > 0 and r[3] <= 1e-5 for r in rows)


class _Clock:
    """A fake clock whose every timed run lasts the next of ``durations`` (in seconds)."""

    def __init__(self, durations):
        self.durations, self.now, self.started = list(durations), 0.0, False

    def __call__(self):
        if self.started:
            self.now += self.durations.pop(0)
        self.started = not self.started
        return self.now


def test_cache_timing_repeats_until_the_best_times_settle_or_says_they_did_not():
    from explorer.training.timing import cache_timing

    steady = _Clock([0.01] * 4 * 9)                  # 2 lengths x 2 modes per round: settles after 3 rounds
    timing = cache_timing([8, 16], d_model=16, n_layers=1, n_heads=2, clock=steady)
    assert timing["stable"] and timing["rounds"] == 3 and timing["spread"] == pytest.approx(0, abs=1e-9)
    falling = _Clock([0.1 * 0.5 ** r for r in range(9) for _ in range(4)])    # every round halves every time
    timing = cache_timing([8, 16], d_model=16, n_layers=1, n_heads=2, clock=falling)
    assert not timing["stable"] and timing["rounds"] == 9 and timing["spread"] > 1


def test_cache_timing_times_the_step_generation_flops_counts():
    """The timed work, read through a clock that counts FLOPs instead of seconds, is per step exactly what
    generation_flops counts for the token at position S, with the cache and without it."""
    from torch.utils.flop_counter import FlopCounterMode

    from explorer.training.timing import cache_timing, generation_flops

    counter = FlopCounterMode(display=False)
    with counter:
        timing = cache_timing([8, 24], d_model=16, n_layers=1, n_heads=2, max_rounds=3, repeats=2,
                              clock=lambda: counter.get_total_flops() / 1000)       # "ms" = FLOPs / 1000
    counted = generation_flops([8, 24], d_model=16, n_layers=1)
    for (length, with_cache, without, _), want in zip(timing["rows"], counted, strict=True):
        assert length == want["length"]
        assert with_cache == pytest.approx(want["cache_attention"] + want["cache_other"], rel=1e-12)
        assert without == pytest.approx(want["no_cache_attention"] + want["no_cache_other"], rel=1e-12)


def test_the_kv_theory_lines_follow_every_measured_point():
    """kv_theory recovers a + b·S and a + c·S² from exact rows, and on a timing measured on the development machine
    (the page's lengths, growing faster than S² from 256 to 512) its lines stay within 25 % of every point: a fit on
    the absolute error put the quadratic line at 0.06x the point at S = 32."""
    from explorer.figures.training import kv_theory

    s = np.array([32, 64, 128, 256, 512.0])
    exact = kv_theory(s, 0.3 + 0.001 * s, 0.4 + 2e-5 * s ** 2)
    assert exact["cache_coef"] == pytest.approx([0.3, 0.001]) and exact["no_cache_coef"] == pytest.approx([0.4, 2e-5])
    cache = np.array([0.415, 0.343, 0.360, 0.536, 0.644])
    no_cache = np.array([0.417, 0.681, 1.651, 4.993, 25.942])
    fit = kv_theory(s, cache, no_cache)
    for name, measured in (("cache", cache), ("no_cache", no_cache)):
        ratio = fit[name] / measured
        assert np.all((ratio > 0.75) & (ratio < 1.25)), (name, ratio.round(2))


def _counted_by_torch(lengths, d_model, n_layers, n_heads):
    """generation_flops' rows as torch's FlopCounterMode counts them on the causal model itself: the cache filled with
    the first S - 1 tokens, then the step that feeds token S, and the full forward over S tokens."""
    from torch.utils.flop_counter import FlopCounterMode

    from explorer.training.timing import VOCAB

    cfg = ModelConfig(vocab=VOCAB, seq_len=max(lengths), n_layers=n_layers, n_heads=n_heads, d_model=d_model,
                      causal=True)
    model = TinyTransformer(cfg).init_weights(torch.Generator().manual_seed(0)).eval()
    tokens = torch.randint(0, VOCAB, (1, max(lengths)), generator=torch.Generator().manual_seed(0))

    def counted(fn):
        with FlopCounterMode(display=False) as counter:
            fn()
        attention = {str(op): n for op, n in counter.get_flop_counts()["Global"].items()}.get("aten.bmm", 0)
        return attention, counter.get_total_flops() - attention

    rows = []
    with torch.no_grad():
        for n in lengths:
            caches = [{} for _ in model.blocks]
            model(tokens[:, :n - 1], kv_caches=caches)
            cache = counted(lambda n=n, caches=caches: model(tokens[:, n - 1:n], kv_caches=caches, start_pos=n - 1))
            full = counted(lambda n=n: model(tokens[:, :n]))
            rows.append({"length": n, "cache_attention": cache[0], "cache_other": cache[1],
                         "no_cache_attention": full[0], "no_cache_other": full[1]})
    return rows


@pytest.mark.parametrize("lengths, d_model, n_layers, n_heads", [
    ((32, 64, 128, 256, 512), 64, 2, 4),           # the lesson's
    ((2, 8, 16, 64), 32, 2, 4), ((5, 24), 16, 1, 1), ((12,), 48, 3, 6)])
def test_generation_flops_are_what_torchs_flop_counter_counts_on_the_model(lengths, d_model, n_layers, n_heads):
    """Per generated token at position S (C = d_model, L layers, V vocabulary): attention 4·S·C·L with the cache and
    4·S²·C·L without; the linear layers 2·4C²·L + 2·C·V per position computed (1 with the cache, S without): the
    lesson's numbers, written out, against torch's FlopCounterMode on the model itself."""
    from explorer.training.timing import generation_flops

    assert generation_flops(list(lengths), d_model=d_model, n_layers=n_layers) == \
        _counted_by_torch(lengths, d_model, n_layers, n_heads)


def test_the_flop_counter_reaches_the_mlp():
    """The counter the test above leans on counts the MLP's layers too (the lesson's model has none)."""
    from torch.utils.flop_counter import FlopCounterMode

    from explorer.training.timing import VOCAB

    c, layers = 32, 2
    cfg = ModelConfig(vocab=VOCAB, seq_len=16, n_layers=layers, n_heads=2, d_model=c, causal=True, with_mlp=True)
    model = TinyTransformer(cfg).init_weights(torch.Generator().manual_seed(0)).eval()
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(torch.zeros(1, 16, dtype=torch.long))
    assert counter.get_total_flops() == 4 * 16 * 16 * c * layers + 16 * (2 * 12 * c * c * layers + 2 * c * VOCAB)


@pytest.mark.parametrize("causal, tau", [(False, 1.0), (True, 1.0), (True, 0.3), (False, 4.0)])
def test_model_attention_is_sdpa_with_the_temperature_in_the_scale(causal, tau):
    """The model's attention layer equals torch's SDPA (mask before softmax) at scale 1 / (sqrt(D) * tau);
    the temperature is an argument, so the same weights and inputs give the same output every call."""
    import torch.nn.functional as F

    from explorer.training.model import ModelConfig, TinyTransformer

    cfg = ModelConfig(vocab=11, seq_len=10, n_heads=2, d_model=32, causal=causal)
    m = TinyTransformer(cfg).init_weights(torch.Generator().manual_seed(0)).eval()
    m.blocks[0].attn.qkv.weight.data.mul_(20)    # logits of order 1, so the temperature visibly matters
    x = torch.randn(3, 10, 32, generator=torch.Generator().manual_seed(1))
    attn = m.blocks[0].attn
    _, att = attn(x, tau)
    q, k, v = (t.view(3, 10, 2, 16).transpose(1, 2) for t in attn.qkv(x).split(32, dim=2))
    mask = torch.ones(10, 10, dtype=torch.bool).tril() if causal else None
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=1 / (16 ** 0.5 * tau))
    torch.testing.assert_close(att @ v, ref, atol=1e-5, rtol=1e-5)
    tokens = torch.randint(0, 11, (2, 10), generator=torch.Generator().manual_seed(2))
    first, second = m(tokens, temperature=tau)[0], m(tokens, temperature=tau)[0]
    assert torch.equal(first, second)
    assert not torch.allclose(m(tokens, temperature=tau)[0], m(tokens, temperature=tau * 3)[0])


def test_cli_writes_the_per_head_table(tmp_path):
    """--heads-out: one row per head; each ablated loss equals explorer.training.ablate on the same batch."""
    import csv as _csv

    from explorer.training import ablate
    from explorer.training.cli import main

    out, heads = tmp_path / "run.csv", tmp_path / "heads.csv"
    assert main(["--task", "induction", "--steps", "30", "--out", str(out), "--heads-out", str(heads)]) == 0
    rows = list(_csv.DictReader(heads.open()))
    assert [(int(r["layer"]), int(r["head"])) for r in rows] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert {"kcomp_l0_h0", "kcomp_l0_h1", "ov_copying", "prevtok", "induction"} <= set(rows[0])
    trainer = Trainer.for_task("induction", seed=0, total_steps=30)
    trainer.step(30)
    batch = trainer.task.batch(128, torch.Generator().manual_seed(2024))
    for r in rows:
        pair = (int(r["layer"]), int(r["head"]))
        expected = float(trainer.task.loss(ablate(trainer.model, batch.inputs, [pair], "zero", batch.attn_mask), batch))
        assert float(r["loss_zero"]) == pytest.approx(expected, rel=1e-5)


def test_cli_writes_the_icl_bandwidth_table(tmp_path, capsys):
    """--task icl_bandwidth: one row per L of the lesson's grid; the window is 1/√w, the softmax and linear errors
    are those the lesson's own grid point trains to at the same steps, and bad settings get one line, status 2
    (those three through ``main`` in this process: the console script's start-up, 2 s each, is the first run's)."""
    from explorer import incontext
    from explorer.lessons import icl_bandwidth
    from explorer.training.cli import main

    out = tmp_path / "icl.csv"
    res = run_cli("--task", "icl_bandwidth", "--steps", "4", "--noise", "0.6", "--context", "16", "--seed", "1",
                  "--out", str(out))
    assert res.returncode == 0, res.stderr
    rows = list(csv.DictReader(out.open()))
    assert [float(r["L"]) for r in rows] == list(icl_bandwidth.LIPSCHITZ)
    for r in rows:
        assert float(r["window"]) == pytest.approx(1 / float(r["w"]) ** 0.5)
        assert (float(r["noise"]), int(r["n"]), int(r["seed"]), int(r["steps"])) == (0.6, 16, 1, 4)
        assert -1 <= float(r["direction_alignment"]) <= 1
    again = incontext.grid_point(4.0, 0.6, 16, 1, steps=4)
    assert float(rows[3]["softmax_error"]) == pytest.approx(again["softmax_error"], rel=1e-9)
    assert float(rows[3]["linear_error"]) == pytest.approx(again["linear_error"], rel=1e-9)
    for bad, fragment in ((["--noise", "5"], "--noise must be from 0 to 2"), (["--context", "1"], "--context"),
                          (["--steps", "0"], "--steps")):
        capsys.readouterr()
        status = main(["--task", "icl_bandwidth", *bad, "--out", str(tmp_path / "x.csv")])
        err = capsys.readouterr().err
        assert status == 2 and err.count("\n") == 1 and fragment in err and not (tmp_path / "x.csv").exists(), err


def test_cli_writes_the_table_of_lengths_past_the_training_length(tmp_path):
    """--position and --eval-lengths: one row per length; the loss at each is the task's cross-entropy on fresh
    batches of that length, recomputed here from the model's logits; learned positions get a note past their
    table instead of a number."""
    from explorer.training import evaluate_lengths
    from explorer.training.cli import main

    out, table = tmp_path / "run.csv", tmp_path / "lengths.csv"
    assert main(["--task", "reverse", "--steps", "20", "--position", "alibi", "--out", str(out),
                 "--eval-lengths", "12,24", "--eval-out", str(table)]) == 0
    rows = list(csv.DictReader(table.open()))
    assert [(r["position"], r["train_length"], r["eval_length"]) for r in rows] == [("alibi", "12", "12"),
                                                                                 ("alibi", "12", "24")]
    assert all(math.isfinite(float(r["loss"])) and 0 <= float(r["accuracy"]) <= 1 for r in rows)
    for position in ("learned", "rope"):
        trainer = Trainer.for_task("reverse", seed=0, position=position)
        trainer.step(5)
        got = evaluate_lengths(trainer, [12, 24], size=16)
        batch = make_task("reverse", 12).batch(16, torch.Generator().manual_seed(2024))
        with torch.no_grad():
            logits, _ = trainer.model(batch.inputs)
        expected = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.targets.reshape(-1))
        assert got[0]["loss"] == pytest.approx(float(expected), rel=1e-5)
        if position == "learned":
            assert got[1]["loss"] == "" and "learned positions end at 12" in got[1]["note"]
        else:
            assert math.isfinite(got[1]["loss"]) and got[1]["note"] == ""


def test_each_tasks_length_cap_is_the_longest_length_its_vocabulary_allows():
    """length_cap against a scan of every length from 2 to 1024: the largest at which the task keeps the vocabulary
    it trains with, and the vocabulary never comes back after it grows."""
    from explorer.training import length_cap

    for name in TASKS:
        vocab = make_task(name).vocab
        same = [n for n in range(2, 1025) if make_task(name, n).vocab == vocab]
        assert length_cap(name) == max(same) and same == list(range(2, max(same) + 1)), name
    assert length_cap("induction") == 64


def test_evaluate_lengths_refuses_a_length_past_the_cap_and_leaves_the_model_as_it_was():
    """A length past the task's cap, a length below 2 and no lengths at all are each refused with a sentence that
    says what is allowed; evaluating leaves the model in the mode it was in and its weights untouched."""
    from explorer.training import evaluate_lengths

    trainer = Trainer.for_task("induction", seed=0)
    with pytest.raises(ValueError, match="up to 64"):
        evaluate_lengths(trainer, [32, 65])
    with pytest.raises(ValueError, match="length"):
        evaluate_lengths(trainer, [1])
    with pytest.raises(ValueError, match="at least one length"):
        evaluate_lengths(trainer, [])
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    trainer.model.train()
    rows = evaluate_lengths(trainer, [32, 64], size=4)
    assert trainer.model.training and [r["eval_length"] for r in rows] == [32, 64]
    assert all(torch.equal(v, trainer.model.state_dict()[k]) for k, v in before.items())
