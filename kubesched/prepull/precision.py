"""Pre-pull precision: how many pre-pulled images a pod used before image GC removed them.

A successful pre-pull of image ``i`` on node ``n`` is *used* when a pod with ``i`` is bound to
``n`` after the pre-pull began and while ``i`` was still on ``n`` (it never left the node's
``status.images`` since it first appeared there after the pull), and *wasted* when ``i`` leaves the
node's status first. ``precision = used / pre-pulls started`` (failed pre-pulls and those still
undecided count as not used).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["PrecisionTracker"]


class PrecisionTracker:
    """Counts ``prepulls`` (started), ``succeeded``, ``used`` and ``wasted`` pre-pulls (see the
    module docstring)."""

    def __init__(self) -> None:
        self.prepulls = 0
        self.succeeded = 0
        self.used = 0
        self.wasted = 0
        self._open: dict[tuple[str, str], bool] = {}  # (node, image) -> seen in the node's status

    @property
    def precision(self) -> float:
        return self.used / self.prepulls if self.prepulls else 0.0

    def started(self, node: str, image: str) -> None:
        """A pre-pull of ``image`` on ``node`` began (the pod using it may come before it ends)."""
        self.prepulls += 1
        self._open.setdefault((node, image), False)

    def pulled(self, node: str, image: str) -> None:
        """The pre-pull succeeded."""
        self.succeeded += 1

    def pod_bound(self, node: str, images: Iterable[str]) -> int:
        """A pod with ``images`` (canonical names) was bound to ``node``: returns how many open
        pre-pulls it used."""
        n = 0
        for image in images:
            if self._open.pop((node, image), None) is not None:
                self.used += 1
                n += 1
        return n

    def node_images(self, node: str, images: set[str]) -> None:
        """The node's status now lists ``images`` (canonical names): an open pre-pull whose image
        was listed and is gone was removed by GC before any pod used it."""
        for key in [k for k in self._open if k[0] == node]:
            listed = key[1] in images
            if listed:
                self._open[key] = True
            elif self._open[key]:
                del self._open[key]
                self.wasted += 1

    def failed(self, node: str, image: str) -> None:
        """The pre-pull failed: nothing to use."""
        self._open.pop((node, image), None)
