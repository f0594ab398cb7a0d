"""DefaultBinder: binds the pod through the API (``pods/binding``)
(``pkg/scheduler/framework/plugins/defaultbinder/default_binder.go``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.api.pod import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import BindPlugin
from kubesched.framework.status import Code, Status

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle


class DefaultBinder(BindPlugin):
    """Bind: ``handle.client.bind(namespace, name, uid, node_name)`` (a ``Binding`` with
    ``metadata {namespace, name, uid}`` and ``target {kind: Node, name}``); any exception
    becomes an Error status wrapping it. No args."""

    NAME = "DefaultBinder"
    Args = None

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """POST the binding; Error status on any failure (including a missing client)."""
        client = self.handle.client if self.handle is not None else None
        if client is None:
            return Status(Code.Error, "no client to bind with")
        try:
            client.bind(pod.namespace, pod.name, pod.uid, node_name)
        except Exception as e:  # noqa: BLE001 - every failure is reported as an Error status
            return Status.as_status(e)
        return None
