"""``kubesched run``: the scheduler against a real API server (the production run mode)."""

from kubesched.modes.run.effective_config import effective_config_document
from kubesched.modes.run.options import PrePullOptions, RunOptions
from kubesched.modes.run.plugin_modules import load_plugin_modules
from kubesched.modes.run.scheduler import run_scheduler

__all__ = [
    "PrePullOptions",
    "RunOptions",
    "effective_config_document",
    "load_plugin_modules",
    "run_scheduler",
]
