"""Test-only Permit plugin for ``kubesched run --plugin-module run_permit_plugin``.

``TestPermit`` makes pods labelled ``permit.kubesched.io/allow-after: "<seconds>"`` wait, with the
plugin timeout from label ``permit.kubesched.io/timeout`` (seconds, default 60), and allows them
through the framework handle (``get_waiting_pod(uid).allow``) that many seconds later. Other pods
pass at once.
"""

from __future__ import annotations

import threading
from typing import Any

from kubesched.api.pod import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import PermitPlugin
from kubesched.framework.status import Code, Status

ALLOW_AFTER = "permit.kubesched.io/allow-after"
TIMEOUT = "permit.kubesched.io/timeout"


class TestPermit(PermitPlugin):
    """Wait, then allow from a timer thread."""

    NAME = "TestPermit"
    Args = None

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        super().__init__(args, handle)
        self.handle = handle

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        labels = pod.labels
        if ALLOW_AFTER not in labels:
            return None, 0.0
        allow_after = float(labels[ALLOW_AFTER])
        timeout = float(labels.get(TIMEOUT, "60"))
        uid = pod.uid

        def allow() -> None:
            wp = self.handle.get_waiting_pod(uid)
            if wp is not None:
                wp.allow(self.NAME)

        t = threading.Timer(allow_after, allow)
        t.daemon = True
        t.start()
        return Status(Code.Wait, "waiting for the test timer"), timeout


def register(registry: Any) -> None:
    """Entry point of ``--plugin-module``."""
    registry.register(TestPermit)
