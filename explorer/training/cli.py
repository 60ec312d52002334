"""Headless training: ``explorer-train --task reverse --steps 500 --seed 0 --out run.csv`` (also
``python -m explorer.training``).

Writes one CSV row per step with the columns of ``Trainer.step`` (step, loss, accuracy, lr,
temperature, entropy_l{l}_h{h}, maxw_l{l}_h{h}, prevtok_l{l}_h{h}, induction_l{l}_h{h}, headsim_l{l}).
Settings not given take the task's own defaults (``Task.defaults``). ``--heads-out FILE`` also writes,
after training, one CSV row per head: the evaluation loss with that head switched off (zero and mean), the
intact loss, its previous-token and induction scores and OV copying score (token tasks), and its
K-composition with each layer-0 head (layer-1 heads). ``--position`` picks how the model sees positions (none,
learned, sinusoidal, rope, alibi); ``--eval-lengths 32,64,128 --eval-out FILE`` then writes the trained model's
loss and accuracy on its task at each length (``evaluate_lengths``: does the scheme work past the training length?).
``--save FILE`` writes the trained model (and its optimiser, data generator and history) to FILE, a safetensors
file: ``Trainer.load(FILE)`` brings it back in Python, and the Live training page loads it (a long run trained
before class). Progress goes to stderr. Bad arguments print one line and exit with status 2.

``--task icl_bandwidth`` trains the "Attention learns its bandwidth" lesson's table instead (``explorer.incontext``):
one CSV row per L of the lesson's grid at ``--noise``, ``--context`` and ``--seed`` (``--steps``, default 120, per
training run): the learned w and window 1/√w, the leave-one-out and oracle bandwidths, the softmax, linear and
oracle in-context errors, and the full matrix's alignment with bbᵀ and its error against the best M = w·I on the
8-dimensional direction tasks.
"""

from __future__ import annotations

import csv
import sys
import time
from pathlib import Path

import torch

from .. import incontext, incontext_direction
from ..cli import Parser, progress
from . import ALL_TASKS, Trainer
from .circuits import copying_score, head_importance, k_composition, ov_circuit
from .heads import head_scores, metric_key
from .lengths import MAX_LENGTH, check_lengths, evaluate_lengths
from .model import POSITIONS


def _parser() -> Parser:
    p = Parser(prog="explorer-train", description="Train the tiny transformer and log metrics.")
    p.add_argument("--task", choices=[*ALL_TASKS, ICL_TASK], default="reverse")
    p.add_argument("--steps", type=int, default=None, help="default: 500 (icl_bandwidth: 120 per training run)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="CSV file to write")
    p.add_argument("--layers", type=int, default=None, help="1 to 4 (default: the task's)")
    p.add_argument("--heads", type=int, default=None, help="1 to 8 (default: the task's)")
    p.add_argument("--d-model", type=int, default=None, help="16 to 256, a multiple of --heads (default: the task's)")
    p.add_argument("--lr", type=float, default=None, help="default: the task's")
    p.add_argument("--warmup", type=int, default=None, help="default: the task's")
    p.add_argument("--seq-len", type=int, default=None)
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--heads-out", default=None, help="CSV file for the per-head ablation and circuit numbers")
    p.add_argument("--save", default=None, metavar="FILE",
                   help="after training, save the trainer to FILE (safetensors): Trainer.load(FILE) in Python, or "
                        "'Load a trained model' on the Live training page")
    p.add_argument("--position", choices=POSITIONS, default=None,
                   help="how the model sees positions (default: learned)")
    p.add_argument("--eval-lengths", default=None,
                   help="after training, evaluate at these sequence lengths, e.g. 32,64,128 (needs --eval-out)")
    p.add_argument("--eval-out", default=None, help="CSV file for the loss and accuracy at each --eval-lengths")
    p.add_argument("--noise", type=float, default=0.3, help="icl_bandwidth: label noise σ, 0 to 2")
    p.add_argument("--context", type=int, default=32, help="icl_bandwidth: context size n, 2 to 512")
    return p


ICL_TASK = "icl_bandwidth"


def icl_table(noise: float, n: int, seed: int, steps: int, report=None) -> list[dict]:
    """One row per L of the lesson's grid (module docstring); ``report(i, of, row)`` after each."""
    rows = []
    for i, lip in enumerate(incontext.LIPSCHITZ):
        row = incontext.grid_point(lip, noise, n, seed, steps)
        direction = incontext_direction.train_direction(lip, noise, n, seed, steps=steps)
        rows.append({**row, "steps": steps, "direction_alignment": direction["alignment"],
                     "direction_error": direction["error"], "single_window_error": direction["isotropic_error"]})
        if report:
            report(i + 1, len(incontext.LIPSCHITZ), rows[-1])
    return rows


def _icl(args) -> int:
    steps = incontext.STEPS if args.steps is None else args.steps
    try:
        if not 1 <= steps <= 100_000:
            raise ValueError(f"--steps must be from 1 to 100000 for {ICL_TASK}, got {steps}.")
        if not 0 <= args.noise <= 2:
            raise ValueError(f"--noise must be from 0 to 2, got {args.noise:g}.")
        if not 2 <= args.context <= 512:
            raise ValueError(f"--context must be from 2 to 512, got {args.context}.")
        out = open(args.out, "w", newline="")
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    with out:
        def report(i, of, r):
            progress(i, of, f"L = {r['L']:g}  window {r['window']:.3f}  oracle {r['oracle']:.3f}")
        rows = icl_table(args.noise, args.context, args.seed, steps, report)
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    sys.stderr.write("\n")
    return 0


def head_table(trainer: Trainer, eval_seed: int = 2024, size: int = 128) -> list[dict]:
    """One row per head of the trained model (see the module docstring), on a fixed evaluation batch."""
    batch = trainer.task.batch(size, torch.Generator().manual_seed(eval_seed)).to(trainer.device)
    zero = head_importance(trainer.model, batch, trainer.task.loss, "zero", trainer.temperature)
    mean = head_importance(trainer.model, batch, trainer.task.loss, "mean", trainer.temperature)
    tokens = not trainer.config.input_dim
    scores = head_scores(trainer.model, batch, trainer.temperature) if tokens else {}
    cfg, rows = trainer.config, []
    for layer in range(cfg.n_layers):
        for head in range(cfg.n_heads):
            row = {"layer": layer, "head": head, "loss_intact": zero["intact"], "loss_zero": zero[(layer, head)],
                   "loss_mean": mean[(layer, head)]}
            if tokens:
                row |= {"prevtok": scores[metric_key("prevtok", layer, head)],
                        "induction": scores[metric_key("induction", layer, head)],
                        "ov_copying": copying_score(ov_circuit(trainer.model, layer, head))}
                if layer == 1:
                    row |= {f"kcomp_l0_h{a}": k_composition(trainer.model, (0, a), (1, head))
                            for a in range(cfg.n_heads)}
            rows.append(row)
    return rows


def eval_lengths(text: str | None, task: str) -> list[int]:
    """``--eval-lengths`` read as lengths the task can be made at with its training vocabulary (a sentence for
    anything else: ``lengths.check_lengths``)."""
    if text is None:
        return []
    try:
        lengths = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"--eval-lengths must be whole numbers separated by commas, got {text!r}.") from None
    if not lengths or any(not 2 <= n <= MAX_LENGTH for n in lengths):
        raise ValueError(f"--eval-lengths must be from 2 to {MAX_LENGTH}, got {text!r}.")
    return check_lengths(task, lengths)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.task == ICL_TASK:
        return _icl(args)
    args.steps = 500 if args.steps is None else args.steps
    try:
        if args.steps < 1 or args.steps > 1_000_000:
            raise ValueError(f"--steps must be from 1 to 1000000, got {args.steps}.")
        if args.device == "cuda" and not torch.cuda.is_available():
            raise ValueError("--device cuda was asked for, but torch sees no CUDA GPU here.")
        lengths = eval_lengths(args.eval_lengths, args.task)
        if lengths and not args.eval_out:
            raise ValueError("--eval-lengths needs --eval-out, the CSV file to write the table to.")
        given = {"n_layers": args.layers, "n_heads": args.heads, "d_model": args.d_model, "lr": args.lr,
                 "warmup": args.warmup, "seq_len": args.seq_len, "position": args.position}
        trainer = Trainer.for_task(args.task, seed=args.seed, device=args.device, total_steps=args.steps,
                                   **{k: v for k, v in given.items() if v is not None})
        if args.save and not Path(args.save).resolve().parent.is_dir():
            raise ValueError(f"--save {args.save}: the folder {Path(args.save).parent} does not exist.")
        out = open(args.out, "w", newline="")
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    start, writer = time.time(), None
    with out:
        while trainer.step_count < args.steps and not trainer.stopped:
            rows = trainer.step(min(25, args.steps - trainer.step_count))
            if rows and writer is None:
                writer = csv.DictWriter(out, fieldnames=list(rows[0]))
                writer.writeheader()
            if writer:
                writer.writerows(rows)
            if rows:
                rate = trainer.step_count / max(time.time() - start, 1e-9)
                progress(trainer.step_count, args.steps, f"steps  loss {rows[-1]['loss']:.4f}  {rate:.0f} steps/s")
    sys.stderr.write("\n")
    if args.save:
        trainer.save(args.save)          # a stopped run too: its weights are the last good step's
    if trainer.stopped:
        print(f"error: {trainer.stopped}", file=sys.stderr)
        return 1
    for path, table in ((args.heads_out, head_table), (args.eval_out if lengths else None,
                                                        lambda t: evaluate_lengths(t, lengths))):
        if path:
            rows = table(trainer)
            with open(path, "w", newline="") as fh:
                writer = csv.DictWriter(fh, fieldnames=list(dict.fromkeys(k for r in rows for k in r)))
                writer.writeheader()
                writer.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
