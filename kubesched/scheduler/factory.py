"""Build a :class:`~kubesched.scheduler.core.Scheduler` from a config (``pkg/scheduler/scheduler.go`` ``New``)."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from typing import Any

from kubesched.client.client import ClusterClient
from kubesched.config.defaults import apply_defaults
from kubesched.config.load import default_config
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.config.validation import validate_config
from kubesched.framework.registry import Registry
from kubesched.plugins import in_tree_registry
from kubesched.scheduler.core import BindingExecutor, Scheduler, run_inline


def _warn_skipped(profile: str, skipped: list[str]) -> None:
    print(
        f"kubesched: profile {profile}: default plugins not implemented yet, running without them: "
        f"{', '.join(skipped)}",
        file=sys.stderr,
    )


def new_scheduler(
    client: ClusterClient,
    config: KubeSchedulerConfiguration | None,
    *,
    clock: Any,
    seed: int | None = None,
    record: bool | Callable[[Any], bool] = False,
    registry: Registry | None = None,
    binding_executor: BindingExecutor = run_inline,
    permit_wait_timeout: float | None = None,
    extenders: list[Any] | None = None,
    metrics: Any = None,
    on_skipped_plugins: Callable[[str, list[str]], None] | None = _warn_skipped,
    write_client: ClusterClient | None = None,
    event_sink: Callable[[dict[str, Any]], Any] | None = None,
    reporting_instance: str = "kubesched",
) -> Scheduler:
    """A scheduler for ``config`` (``None``: the upstream default profile). With the default config,
    upstream default plugins that kubesched does not implement yet are left out and reported once
    through ``on_skipped_plugins``; a user config naming them fails with ``not implemented yet``.

    ``extenders``: ``None`` builds an :class:`~kubesched.extenders.HTTPExtender` per
    ``config.extenders`` entry (non-ignorable first, ``pkg/scheduler/extender.go``); a list replaces them.
    ``metrics``: a :class:`~kubesched.metrics.SchedulerMetrics` to record
    ``pkg/scheduler/metrics/metrics.go`` metrics into;
    ``None`` records nothing and adds no cost.
    ``write_client``: the client of the scheduling path's writes (default ``client``; ``run`` passes
    a :class:`~kubesched.client.write_behind.WriteBehindClient`). ``event_sink``: where Events go
    (default ``client.create_event``; ``run`` passes an event broadcaster's ``record``).
    ``reporting_instance``: the replica's name in Events (``reportingInstance`` =
    ``<schedulerName>-<reporting_instance>``).

    Raises :class:`~kubesched.errors.ConfigError` for invalid configs or plugin args (and
    unusable extender TLS settings).
    """
    is_default = config is None
    cfg = apply_defaults(config if config is not None else default_config())
    validate_config(cfg)
    if extenders is None and cfg.extenders:
        from kubesched.extenders import build_extenders

        extenders = list(build_extenders(cfg, metrics))
    return Scheduler(
        client,
        cfg,
        registry or in_tree_registry(),
        clock=clock,
        rng=random.Random(seed),
        record=record,
        binding_executor=binding_executor,
        default_profile_fallback=is_default,
        on_skipped_plugins=on_skipped_plugins,
        permit_wait_timeout=permit_wait_timeout,
        extenders=extenders,
        metrics=metrics,
        write_client=write_client,
        event_sink=event_sink,
        reporting_instance=reporting_instance,
    )
