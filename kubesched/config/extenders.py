"""Config-derived facts about extenders that the framework/scheduler needs.

Source: ``pkg/scheduler/scheduler.go`` (``buildExtenders``).
"""

from __future__ import annotations

from kubesched.config.types import Extender, KubeSchedulerConfiguration


def extender_ignored_resources(config: KubeSchedulerConfiguration) -> list[str]:
    """Names of extender ``managedResources`` with ``ignoredByScheduler: true``, in config order.

    Upstream writes this list into every profile's ``NodeResourcesFitArgs.ignoredResources``
    when it is non-empty. Note upstream *replaces* the args' list with it (it does not append);
    an empty list leaves the args untouched.
    """
    names: list[str] = []
    for ext in config.extenders:
        for res in ext.managed_resources:
            if res.ignored_by_scheduler:
                names.append(res.name)
    return names


def ordered_extenders(config: KubeSchedulerConfiguration) -> list[Extender]:
    """Extenders in the order the scheduler calls them: non-ignorable ones first, then ignorable
    ones (each group in config order), as upstream's ``buildExtenders`` does."""
    return [e for e in config.extenders if not e.ignorable] + [e for e in config.extenders if e.ignorable]
