"""The public surface: ``kubesched`` (the user API) and ``kubesched.framework`` (what a plugin
author needs). ``__all__`` is pinned and every name in it resolves (as httpx's
tests/test_exported_members.py does)."""

from __future__ import annotations

import kubesched
import kubesched.framework

KUBESCHED = {
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
    "RealClock",
    "Scheduler",
    "SimulationResult",
    "VirtualClock",
    "__version__",
    "default_config",
    "load_config",
    "load_manifests",
    "new_scheduler",
    "parse_config",
    "run_simulation",
    "simulate",
    "Simulation",
    "PodExplanation",
    "replay",
    "Replay",
}

FRAMEWORK = {
    "ARGS_CONFIG",
    "ENTRY_POINT_GROUP",
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "PODS_TO_ACTIVATE_KEY",
    "ActionType",
    "BindPlugin",
    "Candidate",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "CycleState",
    "Diagnosis",
    "EnqueueExtensions",
    "EventRecorder",
    "EventResource",
    "FilterPlugin",
    "FitError",
    "FrameworkError",
    "Handle",
    "MetricRecorder",
    "Node",
    "NodeInfo",
    "NodeScore",
    "NodeToStatus",
    "NominatingInfo",
    "NominatingMode",
    "Nominator",
    "ObjectLister",
    "PermitPlugin",
    "Plugin",
    "Pod",
    "PodInfo",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortKey",
    "QueueSortPlugin",
    "QueuedPodInfo",
    "QueueingHint",
    "ReadOnlyStateData",
    "Registry",
    "ReservePlugin",
    "ScoreExtensions",
    "ScorePlugin",
    "SignFragment",
    "SignPlugin",
    "Snapshot",
    "StateData",
    "StateNotFoundError",
    "Status",
    "WaitingPod",
    "is_rejected",
    "is_success",
}


def test_kubesched_exports() -> None:
    assert set(kubesched.__all__) == KUBESCHED
    assert len(kubesched.__all__) == len(KUBESCHED)
    for name in kubesched.__all__:
        assert getattr(kubesched, name) is not None, name
    assert kubesched.__version__ == "0.1.0"
    assert kubesched.load_config.__module__ == "kubesched.config.load"
    assert kubesched.Scheduler.__module__ == "kubesched.scheduler.core"
    assert kubesched.simulate.__module__ == "kubesched.modes.simulate.api"
    assert kubesched.replay.__module__ == "kubesched.modes.replay.api"
    assert set(dir(kubesched)) >= KUBESCHED


def test_framework_exports() -> None:
    assert set(kubesched.framework.__all__) == FRAMEWORK
    assert len(kubesched.framework.__all__) == len(FRAMEWORK)
    for name in kubesched.framework.__all__:
        assert getattr(kubesched.framework, name) is not None, name


def test_exported_members_are_documented() -> None:
    """Every exported class and function has a docstring (a plugin author reads them)."""
    for module in (kubesched, kubesched.framework):
        for name in module.__all__:
            member = getattr(module, name)
            if isinstance(member, type) or callable(member):
                assert member.__doc__, f"{module.__name__}.{name}"


def test_unknown_attribute_raises() -> None:
    try:
        kubesched.no_such_name  # noqa: B018
    except AttributeError as e:
        assert str(e) == "module 'kubesched' has no attribute 'no_such_name'"
    else:
        raise AssertionError("expected AttributeError")
