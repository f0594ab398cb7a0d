"""Run modes drive the ``Scheduler`` through its lifecycle and read it through its own methods
(``pending_pods``, ``gated_pods``, ``is_assumed``, ``has_synced``, ``objects``, ...): no module of
``kubesched/modes``, ``kubesched/ui`` or ``kubesched/cli`` reaches into a scheduler's queue, cache
or informers."""

from __future__ import annotations

import ast
from pathlib import Path

import kubesched

ROOT = Path(kubesched.__file__).parent
INTERNALS = {"queue", "cache", "informers"}
#: names that hold a Scheduler in those modules
SCHEDULER_NAMES = {"sched", "scheduler", "_sched", "_scheduler"}


def _holder(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _reaches(source: str, name: str) -> list[str]:
    tree = ast.parse(source, filename=name)
    hits = sorted((n.lineno, n.col_offset, f"{name}:{n.lineno}: .{_holder(n.value)}.{n.attr}")
                  for n in ast.walk(tree)
                  if isinstance(n, ast.Attribute) and n.attr in INTERNALS and _holder(n.value) in SCHEDULER_NAMES)
    return [h for _, _, h in hits]


def test_no_run_mode_reaches_into_the_scheduler() -> None:
    found = [hit for pkg in ("modes", "ui", "cli") for f in sorted((ROOT / pkg).rglob("*.py"))
             for hit in _reaches(f.read_text(), str(f.relative_to(ROOT)))]
    assert found == []


def test_the_check_sees_a_reach() -> None:
    src = "def g(sched, self):\n    return sched.queue.pop(), self._scheduler.cache, self.queue, sched.pending_pods()\n"
    assert _reaches(src, "probe.py") == ["probe.py:2: .sched.queue", "probe.py:2: ._scheduler.cache"]
