"""A tiny transformer, toy tasks and a trainer that records per-head attention metrics."""

from .model import ModelConfig, TinyTransformer, generate
from .tasks import TASKS, Batch, Task, make_task
from .trainer import SCHEDULES, TEMPERATURE_SCHEDULES, TemperatureSchedule, Trainer, head_metrics, learning_rate

__all__ = ["SCHEDULES", "TASKS", "TEMPERATURE_SCHEDULES", "Batch", "ModelConfig", "Task", "TemperatureSchedule",
           "TinyTransformer", "Trainer", "generate", "head_metrics", "learning_rate", "make_task"]
