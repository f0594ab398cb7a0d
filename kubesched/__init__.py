"""kubesched: a Kubernetes scheduler in Python.

The user API, in one import (docs/python-api.md)::

    import kubesched

    sim = kubesched.simulate("cluster.yaml", seed=7)      # Simulation: .pods, .explain(pod), .to_frame()
    rep = kubesched.replay("trace/", [None, "image-aware.yaml"])   # Replay: .summaries(), .figures()

    config = kubesched.load_config("sched.yaml")   # KubeSchedulerConfiguration
    loaded = kubesched.load_manifests(["cluster.yaml"])
    result = kubesched.run_simulation(loaded.manifests, config, seed=7)   # SimulationResult
    cluster = kubesched.MemoryCluster(kubesched.VirtualClock())
    sched = kubesched.new_scheduler(cluster, config, clock=kubesched.VirtualClock())

Errors are :class:`KubeschedError` and its subclasses (:class:`ConfigError` and
:class:`ManifestError` name the file field). Plugin authors import from :mod:`kubesched.framework`.
Everything but ``__version__`` and the errors is imported on first use, so ``import kubesched``
stays cheap.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

from kubesched.errors import (
    AlreadyExistsError,
    ConfigError,
    ConflictError,
    FieldError,
    GoneError,
    KubeschedError,
    ManifestError,
    NotFoundError,
    NotImplementedPluginError,
)

if TYPE_CHECKING:
    from kubesched.clock import RealClock, VirtualClock
    from kubesched.config.load import default_config, load_config, parse_config
    from kubesched.config.types import KubeSchedulerConfiguration
    from kubesched.embedded.manifests import load_manifests
    from kubesched.embedded.store import MemoryCluster
    from kubesched.modes.replay.api import Replay, replay
    from kubesched.modes.simulate.api import PodExplanation, Simulation, simulate
    from kubesched.modes.simulate.run import SimulationResult, run_simulation
    from kubesched.scheduler.core import Scheduler
    from kubesched.scheduler.factory import new_scheduler

__version__ = "0.1.0"

# a library's logs go where the application sends them; without a configured handler they are
# dropped instead of Python's last-resort stderr lines (``kubesched run`` configures klog output)
logging.getLogger("kubesched").addHandler(logging.NullHandler())

_LAZY: dict[str, str] = {
    "simulate": "kubesched.modes.simulate.api",
    "Simulation": "kubesched.modes.simulate.api",
    "PodExplanation": "kubesched.modes.simulate.api",
    "replay": "kubesched.modes.replay.api",
    "Replay": "kubesched.modes.replay.api",
    "KubeSchedulerConfiguration": "kubesched.config.types",
    "MemoryCluster": "kubesched.embedded.store",
    "RealClock": "kubesched.clock",
    "Scheduler": "kubesched.scheduler.core",
    "SimulationResult": "kubesched.modes.simulate.run",
    "VirtualClock": "kubesched.clock",
    "default_config": "kubesched.config.load",
    "load_config": "kubesched.config.load",
    "load_manifests": "kubesched.embedded.manifests",
    "new_scheduler": "kubesched.scheduler.factory",
    "parse_config": "kubesched.config.load",
    "run_simulation": "kubesched.modes.simulate.run",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kubesched' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AlreadyExistsError",
    "ConfigError",
    "ConflictError",
    "FieldError",
    "GoneError",
    "KubeSchedulerConfiguration",
    "KubeschedError",
    "ManifestError",
    "MemoryCluster",
    "NotFoundError",
    "NotImplementedPluginError",
    "PodExplanation",
    "RealClock",
    "Replay",
    "Scheduler",
    "Simulation",
    "SimulationResult",
    "VirtualClock",
    "__version__",
    "default_config",
    "load_config",
    "load_manifests",
    "new_scheduler",
    "parse_config",
    "replay",
    "run_simulation",
    "simulate",
]
