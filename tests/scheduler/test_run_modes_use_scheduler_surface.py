"""Run modes, and controllers beside the scheduler, drive the ``Scheduler`` through its lifecycle and
read it through its own methods (``pending_pods``, ``gated_pods``, ``is_assumed``, ``has_synced``,
``objects``, ``node_infos``, ``add_event_handlers``, ``profile_names``, ``pre_enqueue_status``,
``score_weights``, ...): no module of ``kubesched/modes``, ``kubesched/ui``, ``kubesched/cli``,
``kubesched/prepull`` or any controller package (everything under ``kubesched/embedded/controllers``,
and every ``*controller*`` module or package elsewhere) reaches into a scheduler's queue, cache,
informers or profiles (its frameworks)."""

from __future__ import annotations

import ast
from pathlib import Path

import kubesched

ROOT = Path(kubesched.__file__).parent
INTERNALS = {"queue", "cache", "informers", "profiles"}
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
    hits = sorted(
        (n.lineno, n.col_offset, f"{name}:{n.lineno}: .{_holder(n.value)}.{n.attr}")
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and n.attr in INTERNALS and _holder(n.value) in SCHEDULER_NAMES
    )
    return [h for _, _, h in hits]


#: packages held to the scheduler's surface (relative to ``kubesched/``), besides controller modules
SURFACE_USERS = ("modes", "ui", "cli", "prepull", "embedded/controllers")


def _checked_files() -> list[Path]:
    """Every module of :data:`SURFACE_USERS` and every module whose path names a controller
    (``*controller*``) outside the scheduler itself: a new controller is covered wherever it lands."""
    files = {f for pkg in SURFACE_USERS for f in (ROOT / pkg).rglob("*.py")}
    files |= {
        f
        for f in ROOT.rglob("*.py")
        if "controller" in str(f.relative_to(ROOT)) and f.relative_to(ROOT).parts[0] != "scheduler"
    }
    return sorted(files)


def test_no_run_mode_or_controller_reaches_into_the_scheduler() -> None:
    found = [hit for f in _checked_files() for hit in _reaches(f.read_text(), str(f.relative_to(ROOT)))]
    assert found == []


def test_the_checked_files_include_every_controller() -> None:
    names = {str(f.relative_to(ROOT)) for f in _checked_files()}
    assert {
        "prepull/controller.py",
        "prepull/planner.py",
        "embedded/controllers/pv_controller.py",
        "modes/run/scheduler.py",
        "ui/server.py",
    } <= names
    assert {str(f.relative_to(ROOT)) for f in (ROOT / "embedded" / "controllers").rglob("*.py")} <= names


def test_the_check_sees_a_reach() -> None:
    src = "def g(sched, self):\n    return sched.queue.pop(), self._scheduler.cache, self.queue, sched.pending_pods()\n"
    assert _reaches(src, "probe.py") == ["probe.py:2: .sched.queue", "probe.py:2: ._scheduler.cache"]
    src = "def h(run, self):\n    return run.result.scheduler.profiles.items(), self.profiles, run.profile_names()\n"
    assert _reaches(src, "probe.py") == ["probe.py:2: .scheduler.profiles"]
