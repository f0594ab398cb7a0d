"""The scheduler (cycles, placement, event handlers) and its factory."""

from kubesched.scheduler.core import Scheduler
from kubesched.scheduler.factory import new_scheduler

__all__ = ["Scheduler", "new_scheduler"]
