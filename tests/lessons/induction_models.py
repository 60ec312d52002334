"""The induction task's models at the seeds its claims are about, trained once and kept in this folder.

The page's induction claims (``explorer/assets/induction_seeds.json``) are about the task at its defaults trained
``STEPS`` steps at seeds 0-4 on the trainer's thread count. Training the five takes about 40 s, so they are kept in
``models/induction.safetensors`` (1.6 MB): each seed's weights and its metrics rows, one float64 column per metric
(the claims read the model, its history, the task and the weights it started from, which follow from the seed; no
optimiser state). ``tests/lessons/test_live_training.py`` retrains one seed in every run and compares it with what
is kept, so the file cannot drift from what training gives.

    python -m tests.lessons.induction_models      # after a change to the trainer, the task or torch: write them again
"""

from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from explorer.device import torch_threads, trainer_threads
from explorer.training import Trainer

STEPS = 600
KEPT = Path(__file__).parent / "models" / "induction.safetensors"


def train(seed: int) -> Trainer:
    """The induction task at its defaults, trained ``STEPS`` steps at ``seed`` on the page's thread count."""
    with torch_threads(trainer_threads()):
        trainer = Trainer.for_task("induction", seed=seed)
        trainer.step(STEPS)
    return trainer


def kept(seed: int) -> Trainer:
    """A trainer for ``seed`` holding the kept weights and metrics rows, at step ``STEPS``."""
    trainer = Trainer.for_task("induction", seed=seed)
    weights = {k.split(".", 1)[1]: v for k, v in load_file(KEPT).items() if k.startswith(f"seed{seed}.")}
    trainer.model.load_state_dict(weights, strict=True)
    columns = {k.split(".", 1)[1]: v.tolist() for k, v in load_file(KEPT).items()
               if k.startswith(f"history{seed}.")}
    steps = len(columns["step"])
    trainer.history = [{k: int(v[i]) if k == "step" else v[i] for k, v in columns.items()} for i in range(steps)]
    trainer.step_count = steps
    return trainer


def write(seeds) -> None:
    tensors = {}
    for seed in seeds:
        trainer = train(seed)
        for name, weight in trainer.model.state_dict().items():
            tensors[f"seed{seed}.{name}"] = weight.detach().cpu().contiguous()
        for column in trainer.history[0]:
            tensors[f"history{seed}.{column}"] = torch.tensor([row[column] for row in trainer.history],
                                                              dtype=torch.float64)
    KEPT.parent.mkdir(exist_ok=True)
    save_file(tensors, KEPT, metadata={"torch": torch.__version__, "steps": str(STEPS)})


if __name__ == "__main__":
    from explorer.lessons.live_training import INDUCTION_SEEDS

    write(INDUCTION_SEEDS["seeds"])
