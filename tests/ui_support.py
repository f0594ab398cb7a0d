"""Support for the UI tests: the example snapshot's expected texts, a replay report, and Debian's
chromium driven by Playwright (browser tests skip when either is missing).

The browser is never downloaded: ``/usr/bin/chromium`` (``apt-get install chromium``) is launched
headless with a fresh profile directory and no background networking."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("KUBESCHED_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: screenshots are written to docs/ui/ only when this variable is set
SCREENSHOTS_ENV = "KUBESCHED_UI_SCREENSHOTS"
ROOT = Path(__file__).resolve().parent.parent
DOCS_UI = ROOT / "docs" / "ui"
EXAMPLE = ROOT / "examples" / "cluster.yaml"
BATCH_BIG_MESSAGE = (
    "0/5 nodes are available: 2 node(s) had untolerated taint(s), 3 Insufficient cpu. no new claims to deallocate, "
    "preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, 4 Preemption is not "
    "helpful for scheduling."
)
ADDED_POD = """apiVersion: v1
kind: Pod
metadata: {name: api-1, namespace: shop, labels: {app: api}}
spec:
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 1
        preference:
          matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-b]}]
  containers: [{name: api, image: nginx:1.25, resources: {requests: {cpu: 500m, memory: 512Mi}}}]
"""
FIT_WEIGHT_10 = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - {name: NodeResourcesFit, weight: 10}
"""


def require_browser() -> Any:
    """The ``playwright.sync_api`` module; skips the test when Playwright or chromium is absent."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"chromium not found at {CHROMIUM} (apt-get install chromium)")
    return sync_api


@contextmanager
def browser_page(profile_dir: Path, width: int = 1400, height: int = 900) -> Iterator[Any]:
    """A page of a fresh headless chromium (persistent context in ``profile_dir``)."""
    sync_api = require_browser()
    # a loaded 2-core machine renders and answers slower than Playwright's 5 s defaults assume
    sync_api.expect.set_options(timeout=30_000)
    with sync_api.sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(profile_dir),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": width, "height": height},
        )
        try:
            page = ctx.pages[0] if ctx.pages else ctx.new_page()
            page.set_default_timeout(60_000)
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.errors = errors  # type: ignore[attr-defined]
            yield page
        finally:
            ctx.close()


def screenshot(page: Any, name: str, **kwargs: Any) -> None:
    """Write ``docs/ui/<name>.png`` when :data:`SCREENSHOTS_ENV` is set."""
    if os.environ.get(SCREENSHOTS_ENV):
        DOCS_UI.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS_UI / f"{name}.png"), **kwargs)


def replay_report() -> dict[str, Any]:
    """``report.json`` (parsed) of the tiny replay fixture run with the upstream default profile and
    with examples/replay/image-aware.yaml."""
    from kubesched.config.load import load_config
    from kubesched.images.assign import ImageAssigner
    from kubesched.images.catalogue import load_catalogue
    from kubesched.modes.replay.run import ConfigSpec, run_replay
    from kubesched.modes.report.report_json import report_dict
    from kubesched.trace.load import load_workload

    fix = ROOT / "tests" / "fixtures" / "replay"
    cat = load_catalogue(fix / "catalogue.yaml")
    wl = load_workload(fix / "tiny.yaml", ImageAssigner(cat, seed=0))
    configs = [
        ("upstream-default", None),
        ("image-aware", load_config(ROOT / "examples" / "replay" / "image-aware.yaml")),
    ]
    results = [run_replay(wl, ConfigSpec(name, cfg), catalogue=cat, seed=0) for name, cfg in configs]
    return json.loads(json.dumps(report_dict(results)))
