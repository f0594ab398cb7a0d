"""The generic NormalizeScore helper (``pkg/scheduler/framework/plugins/helper/normalize_score.go``
``DefaultNormalizeScore``).

Every plugin that normalizes "by the maximum" uses this one implementation.
"""

from __future__ import annotations

from kubesched.framework.results import NodeScore
from kubesched.framework.status import Status


def _go_div(a: int, b: int) -> int:
    """Go int64 division: truncation toward zero (``b != 0``)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def default_normalize_score(max_priority: int, reverse: bool, scores: list[NodeScore]) -> Status | None:
    """Scale ``scores`` in place so the highest becomes ``max_priority``; with ``reverse`` map
    ``s`` to ``max_priority - s`` afterwards.

    ``m = max(max(scores), 0)``; if ``m == 0`` every score becomes ``max_priority`` when
    ``reverse`` (and is left alone otherwise); else ``s = max_priority * s / m`` with Go integer
    division (truncation toward zero). Always returns ``None`` (Success).

    Example: ``[2, 1, 0]`` with reverse -> ``[0, 50, 100]``.
    """
    max_count = 0
    for ns in scores:
        if ns.score > max_count:
            max_count = ns.score
    if max_count == 0:
        if reverse:
            for ns in scores:
                ns.score = max_priority
        return None
    for ns in scores:
        s = _go_div(max_priority * ns.score, max_count)
        if reverse:
            s = max_priority - s
        ns.score = s
    return None
