"""Past the training length: which position scheme still finds the token two places back in sequences longer than
any it was trained on (the "Position is a kernel" lesson, ``explorer.lessons.positional``).

The experiment: the ``lookback`` task (each position's target is the token ``BACK`` = 2 places before it, tokens
drawn with replacement, so no vocabulary bounds the length), one small model per position scheme (``POSITIONS``:
none, learned, sinusoidal, RoPE, ALiBi; one layer, two heads, width 32) and seed 0-4, trained at length
``TRAIN_LENGTH`` = 16 for ``STEPS`` steps, then evaluated at 16, 32, 64 and 128 (``evaluate_lengths``, 256 fresh
sequences per length). The 25 models take about a minute on one CPU thread, so pages do not train them: they read
what ``python -m explorer.training.extrapolation`` wrote into ``explorer/assets/extrapolation/``, ``table.json``
(one row per scheme, seed and length, with the settings and torch version that made it) and ``models.safetensors``
(each scheme's seed-0 weights, tensors only, for attention maps at any length). ``tests/unit/test_extrapolation.py``
retrains seed 0 of every scheme and compares its rows with the file.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import save_file

from .._checks import integer_in, one_of
from ..cli import Parser, progress
from .lengths import evaluate_lengths
from .model import POSITIONS, ModelConfig, TinyTransformer
from .tasks import Lookback, held_out_example, make_task
from .trainer import Trainer

TASK = Lookback.name
BACK = Lookback.BACK
TRAIN_LENGTH = 16
LENGTHS = (16, 32, 64, 128)            # L, 2L, 4L, 8L
SEEDS = (0, 1, 2, 3, 4)
STEPS = 800
EVAL_SIZE = 256
WORKS = 0.75                           # a scheme "works" at a length when at least 3 answers in 4 are right there
FOLDER = Path(__file__).resolve().parents[1] / "assets" / "extrapolation"
EXAMPLE_SEED = 12345                   # the sequence whose attention maps are drawn (``held_out_example``)

__all__ = ["LENGTHS", "SEEDS", "TRAIN_LENGTH", "WORKS", "attention_maps", "load_models", "load_table", "summary",
           "train", "working", "write"]


def train(scheme: str, seed: int, steps: int = STEPS) -> Trainer:
    """One model of the experiment: ``lookback`` at length 16, position ``scheme``, trained ``steps`` steps.

    Parameters
    ----------
    scheme : str
        One of ``POSITIONS``.
    seed : int
        Seeds the weights and the batches.
    steps : int
        Steps of AdamW (the task's learning rate and warmup, a cosine schedule over ``steps``).

    Returns
    -------
    Trainer

    Examples
    --------
    >>> trainer = train("rope", 0, steps=5)
    >>> trainer.config.position, trainer.task.seq_len, trainer.step_count
    ('rope', 16, 5)
    """
    one_of(scheme, POSITIONS, "scheme")
    steps = integer_in(steps, "steps", 1, 100_000)
    trainer = Trainer.for_task(TASK, seed=seed, position=scheme, seq_len=TRAIN_LENGTH, total_steps=steps)
    trainer.step(steps)
    return trainer


def run(seeds=SEEDS, steps: int = STEPS, schemes=POSITIONS, show_progress: bool = False) \
        -> tuple[list[dict], dict[str, Trainer]]:
    """Train every (scheme, seed) and evaluate each at ``LENGTHS``: the rows (``evaluate_lengths``' plus ``seed``)
    and each scheme's model of the first seed."""
    rows, first, done = [], {}, 0
    for scheme in schemes:
        for seed in seeds:
            trainer = train(scheme, seed, steps)
            rows += [{**row, "seed": seed} for row in evaluate_lengths(trainer, LENGTHS, size=EVAL_SIZE)]
            first.setdefault(scheme, trainer)
            done += 1
            if show_progress:
                progress(done, len(schemes) * len(seeds), f"{scheme}, seed {seed}")
    return rows, first


def write(folder: str | Path = FOLDER, seeds=SEEDS, steps: int = STEPS, show_progress: bool = False) -> Path:
    """Run the experiment and write ``table.json`` and ``models.safetensors`` into ``folder``.

    Parameters
    ----------
    folder : str or pathlib.Path
        Created if missing (default: the package's own ``explorer/assets/extrapolation``).
    seeds : sequence of int
        One model per scheme and seed; the first seed's models are the ones saved.
    steps : int
    show_progress : bool
        A progress bar on stderr.

    Returns
    -------
    pathlib.Path
        The folder.

    Examples
    --------
    Trains and evaluates a model per scheme and seed (``tests/unit/test_extrapolation.py`` runs the command):

    >>> folder = write("run", seeds=(0,), steps=1)                                     # doctest: +SKIP
    >>> sorted(p.name for p in folder.iterdir()), len(load_table(folder)[1])          # doctest: +SKIP
    (['models.safetensors', 'table.json'], 20)
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rows, first = run(seeds, steps, show_progress=show_progress)
    settings = {"task": TASK, "back": BACK, "train_length": TRAIN_LENGTH, "lengths": list(LENGTHS), "steps": steps,
                "eval_size": EVAL_SIZE, "seeds": list(seeds), "torch": torch.__version__}
    (folder / "table.json").write_text(json.dumps({"settings": settings, "rows": rows}, indent=1) + "\n")
    tensors = {f"{scheme}.{name}": value.detach().cpu().contiguous()
               for scheme, trainer in first.items() for name, value in trainer.model.state_dict().items()}
    configs = {scheme: asdict(trainer.config) for scheme, trainer in first.items()}
    save_file(tensors, folder / "models.safetensors", metadata={"configs": json.dumps(configs)})
    (folder / "models.safetensors").chmod(0o644)
    return folder


@functools.lru_cache(maxsize=2)          # the shipped folder and one other: 17 kB each
def _table(folder: Path) -> tuple[dict, tuple[dict, ...]]:
    data = json.loads((folder / "table.json").read_text())
    return data["settings"], tuple(data["rows"])


def load_table(folder: str | Path = FOLDER) -> tuple[dict, list[dict]]:
    """The shipped experiment: its settings and its rows (read once per process: the file is 17 kB).

    Parameters
    ----------
    folder : str or pathlib.Path
        Where ``write`` put them (default: the shipped ones).

    Returns
    -------
    settings : dict
        task, back, train_length, lengths, steps, eval_size, seeds, torch (the version that trained them).
    rows : list of dict
        position, seed, train_length, eval_length, loss, accuracy, note (``evaluate_lengths``); learned positions
        past 16 have no numbers ("").

    Examples
    --------
    >>> settings, rows = load_table()
    >>> settings["train_length"], len(rows)            # 5 schemes x 5 seeds x 4 lengths
    (16, 100)
    """
    settings, rows = _table(Path(folder))
    return dict(settings), [dict(row) for row in rows]


@functools.lru_cache(maxsize=2)          # the shipped folder and one other: 116 kB each
def _models(folder: Path) -> dict[str, TinyTransformer]:
    with safe_open(folder / "models.safetensors", "pt") as f:
        configs = json.loads(f.metadata()["configs"])
        tensors = {name: f.get_tensor(name) for name in f.keys()}
    models = {}
    for scheme, config in configs.items():
        model = TinyTransformer(ModelConfig(**config))
        prefix = f"{scheme}."
        model.load_state_dict({k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)})
        models[scheme] = model.eval()
    return models


def load_models(folder: str | Path = FOLDER) -> dict[str, TinyTransformer]:
    """Each scheme's seed-0 model as the experiment trained it (in evaluation mode, on the CPU; 116 kB in all).

    Parameters
    ----------
    folder : str or pathlib.Path
        Where ``write`` put them (default: the shipped ones).

    Returns
    -------
    dict of str to TinyTransformer
        One model per scheme of ``POSITIONS``; a process reads the file once and shares the models (read them,
        do not train them).

    Examples
    --------
    >>> sorted(load_models())
    ['alibi', 'learned', 'none', 'rope', 'sinusoidal']
    """
    return _models(Path(folder))


def attention_maps(scheme: str, length: int, folder: str | Path = FOLDER) -> dict | None:
    """The seed-0 model of ``scheme`` on one ``lookback`` sequence of ``length`` tokens: its attention weights and how
    much of them sits on the key ``BACK`` places back. None for learned positions past 16 (they have no table there).

    Parameters
    ----------
    scheme : str
        One of ``POSITIONS``.
    length : int
        From 3 to 1024.

    Returns
    -------
    dict or None
        ``weights`` (heads, length, length) numpy; ``tokens`` (length,); ``predicted`` (length,) the model's tokens;
        ``on_back`` (heads, length): each query's weight on the key two back (NaN for the first two queries).

    Examples
    --------
    >>> maps = attention_maps("rope", 32)
    >>> maps["weights"].shape, bool(np.allclose(maps["weights"].sum(-1), 1))
    ((2, 32, 32), True)
    >>> attention_maps("learned", 32) is None
    True
    """
    one_of(scheme, POSITIONS, "scheme")
    length = integer_in(length, "length", BACK + 1, 1024)
    if scheme == "learned" and length > TRAIN_LENGTH:
        return None
    example = held_out_example(make_task(TASK, length), EXAMPLE_SEED)
    with torch.inference_mode():
        out, weights = load_models(folder)[scheme](example.inputs, example.attn_mask)
    w = weights[0][0].double().numpy()                                   # (heads, T, T): the one layer, the one row
    queries = np.arange(length)
    on_back = np.full(w.shape[:2], np.nan)
    on_back[:, BACK:] = w[:, queries[BACK:], queries[BACK:] - BACK]
    return {"weights": w, "tokens": example.inputs[0].numpy(), "predicted": out[0].argmax(-1).numpy(),
            "targets": example.targets[0].numpy(), "on_back": on_back}


def summary(rows: list[dict]) -> dict[tuple[str, int], dict]:
    """Per (scheme, length): the mean, lowest and highest accuracy over the seeds and the mean loss (None where the
    rows have no numbers: learned positions past 16).

    Parameters
    ----------
    rows : list of dict
        ``load_table()[1]``, or rows of the same form.

    Returns
    -------
    dict
        ``(scheme, length) -> {"mean", "low", "high", "loss", "seeds"}`` for every scheme of ``POSITIONS`` and length
        of ``LENGTHS``.

    Examples
    --------
    >>> s = summary(load_table()[1])
    >>> s[("learned", 64)]["mean"] is None, 0 <= s[("rope", 16)]["low"] <= s[("rope", 16)]["mean"] <= 1
    (True, True)
    """
    out = {}
    for scheme in POSITIONS:
        for length in LENGTHS:
            mine = [r for r in rows if r["position"] == scheme and r["eval_length"] == length and r["accuracy"] != ""]
            acc = [float(r["accuracy"]) for r in mine]
            out[scheme, length] = {
                "mean": float(np.mean(acc)) if acc else None, "low": min(acc) if acc else None,
                "high": max(acc) if acc else None, "loss": float(np.mean([r["loss"] for r in mine])) if acc else None,
                "seeds": len(acc)}
    return out


def working(rows: list[dict], length: int) -> tuple[str, ...]:
    """The schemes whose accuracy at ``length``, averaged over the rows' seeds, is at least ``WORKS`` (0.75), in the
    order of ``POSITIONS``.

    Parameters
    ----------
    rows : list of dict
        ``load_table()[1]``, or rows of the same form.
    length : int
        One of ``LENGTHS``.

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> working(load_table()[1], 16)[:2]
    ('learned', 'sinusoidal')
    """
    s = summary(rows)
    return tuple(p for p in POSITIONS if s[p, length]["mean"] is not None and s[p, length]["mean"] >= WORKS)


def main(argv: list[str] | None = None) -> int:
    """``python -m explorer.training.extrapolation [--out DIR] [--steps N] [--seeds 0,1,2,3,4]``: train the models
    and write the table and the first seed's weights (one CPU thread, so a rerun gives the same numbers)."""
    p = Parser(prog="python -m explorer.training.extrapolation",
               description="Train lookback at length 16 with each position scheme and seed 0-4; evaluate at "
                           "16, 32, 64 and 128.")
    p.add_argument("--out", default=str(FOLDER), help=f"folder to write (default: {FOLDER})")
    p.add_argument("--steps", type=int, default=STEPS)
    p.add_argument("--seeds", default=",".join(map(str, SEEDS)), help="comma-separated (default: 0,1,2,3,4)")
    args = p.parse_args(argv)
    try:
        seeds = tuple(integer_in(int(s), "seed", 0, 2**31 - 1) for s in args.seeds.split(","))
        integer_in(args.steps, "steps", 1, 100_000)
    except ValueError as err:
        p.error(str(err) if "must" in str(err) else f"--seeds must be whole numbers separated by commas: {args.seeds}")
    torch.set_num_threads(1)
    folder = write(args.out, seeds=seeds, steps=args.steps, show_progress=True)
    print(f"\nwrote {folder / 'table.json'} and {folder / 'models.safetensors'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
