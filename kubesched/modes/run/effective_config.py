"""The configuration ``kubesched run`` has in effect, as ``--write-config-to`` and ``/configz`` show it."""

from __future__ import annotations

from typing import Any

from kubesched.config.run_fields import JSON
from kubesched.modes.run.options import RunOptions

__all__ = ["effective_config_document"]


def effective_config_document(opts: RunOptions) -> dict[str, Any]:
    """The configuration ``run`` uses, as a v1 document: the file's (or the default) with every
    default applied and the command-line flags that override fields written into it, as
    kube-scheduler's ``--write-config-to`` and ``/configz`` show it
    (``cmd/kube-scheduler/app/options/options.go: ApplyTo``)."""
    from kubesched.config.load import dump_config

    le = opts.effective.leader_election.model_copy(
        update={
            "leader_elect": opts.leader_elect,
            "lease_duration": opts.lease_duration,
            "renew_deadline": opts.renew_deadline,
            "retry_period": opts.retry_period,
            "resource_name": opts.lease_name,
            "resource_namespace": opts.lease_namespace,
        }
    )
    # what is in effect: kubesched talks JSON and has no contention profile (config/run_fields.py)
    cc = opts.effective.client_connection.model_copy(
        update={
            "qps": opts.qps,
            "burst": opts.burst,
            "kubeconfig": opts.kubeconfig or "",
            "content_type": JSON,
        }
    )
    cfg = opts.effective.model_copy(
        update={
            "leader_election": le,
            "client_connection": cc,
            "enable_profiling": opts.profiling,
            "enable_contention_profiling": False,
        }
    )
    return dump_config(cfg)
