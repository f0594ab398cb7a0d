"""Reading a live cluster from a command (``snapshot``, ``simulate --kubeconfig``, ``startup``,
``images calibrate``): one client, closed afterwards, and one clear error when the cluster cannot
be read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from kubesched.errors import KubeschedError

__all__ = ["read_cluster"]

_T = TypeVar("_T")


def read_cluster(kubeconfig: str | None, context: str | None, read: Callable[[Any], _T]) -> _T:
    """``read(client)`` with a :class:`~kubesched.client.kube.KubeClusterClient` of ``kubeconfig``
    (None: in-cluster) at QPS 50 / burst 100, closing it afterwards. Raises
    :class:`~kubesched.errors.KubeschedError` ``cannot read the cluster (KUBECONFIG): REASON`` when
    a request fails (unreachable server, refused credentials, timeout)."""
    from kubesched.client.kube import KubeApiError, KubeClusterClient

    client = KubeClusterClient.from_kubeconfig(kubeconfig, qps=50, burst=100, context=context)
    try:
        return read(client)
    except (KubeApiError, OSError) as e:
        reason = str(e) or type(e).__name__
        raise KubeschedError(f"cannot read the cluster ({kubeconfig or 'in-cluster'}): {reason}") from None
    finally:
        client.close()
