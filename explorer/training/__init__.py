"""A tiny transformer, toy tasks and a trainer that records per-head attention metrics."""

from .circuits import ablate, copying_score, head_importance, k_composition, ov_circuit, qk_circuit
from .heads import (
    COLLAPSE_NATS,
    COLLAPSE_STEPS,
    head_metrics,
    head_metrics_steps,
    head_scores,
    head_scores_steps,
    head_warnings,
    metric_key,
    uniform_scores,
)
from .lengths import evaluate_lengths, length_cap
from .model import ModelConfig, TinyTransformer, generate
from .tasks import ALL_TASKS, TASKS, Batch, Task, TaskDefaults, make_task
from .trainer import SCHEDULES, TEMPERATURE_SCHEDULES, TemperatureSchedule, Trainer, diverged, learning_rate

__all__ = [
    "ALL_TASKS",
    "COLLAPSE_NATS",
    "COLLAPSE_STEPS",
    "SCHEDULES",
    "TASKS",
    "TEMPERATURE_SCHEDULES",
    "Batch",
    "ModelConfig",
    "Task",
    "TaskDefaults",
    "TemperatureSchedule",
    "TinyTransformer",
    "Trainer",
    "ablate",
    "copying_score",
    "diverged",
    "evaluate_lengths",
    "generate",
    "head_importance",
    "head_metrics",
    "head_metrics_steps",
    "head_scores",
    "head_scores_steps",
    "head_warnings",
    "k_composition",
    "learning_rate",
    "length_cap",
    "make_task",
    "metric_key",
    "ov_circuit",
    "qk_circuit",
    "uniform_scores",
]
