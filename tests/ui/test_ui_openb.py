"""The page on the 1,523-node openb snapshot (3,000 pods): first paint and the "why" table, timed and
printed (not asserted: speed targets live in printed figures, not in timed tests). Skipped when
../shared/data (or ``$KUBESCHED_SHARED_DATA``) or the browser is absent."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from ui_support import ROOT, browser_page, require_browser, screenshot

from kubesched.embedded.manifests import Manifest
from kubesched.ui.server import UiServer
from kubesched.ui.session import Session

#: ``../shared/data`` next to the repository, or the directory named by KUBESCHED_SHARED_DATA
OPENB = Path(os.environ.get("KUBESCHED_SHARED_DATA") or ROOT.parent / "shared" / "data") / "alibaba-gpu-2023"
REPEATS = 3


@pytest.fixture(scope="module")
def openb() -> Iterator[UiServer]:
    if not OPENB.is_dir():
        pytest.skip(f"{OPENB} is absent")
    require_browser()
    from kubesched.trace.openb import load_openb_snapshot

    objs = load_openb_snapshot(OPENB, max_pods=3000)
    manifests = [Manifest(o, "openb.yaml", i) for i, o in enumerate(objs, 1)]
    s = Session(manifests, None, sources=["openb.yaml"])
    t0 = time.perf_counter()
    run = s.run(None)
    print(
        f"\nopenb: simulated {len(run.result.pods)} pods on 1523 nodes in {time.perf_counter() - t0:.1f} s "
        f"({run.summary()['counts']})"
    )
    srv = UiServer(session=s, port=0).start()
    try:
        yield srv
    finally:
        srv.stop()


def test_openb_first_paint_and_why_table(openb: UiServer, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    paints, readies, whys, scheduled_whys = [], [], [], []
    with browser_page(tmp_path / "profile") as page:
        for i in range(REPEATS):
            t0 = time.perf_counter()
            page.goto(openb.url + f"?n={i}")
            page.wait_for_selector("body[data-ready='1']", timeout=60000)
            readies.append(time.perf_counter() - t0)
            fcp = page.evaluate(
                "() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null"
            )
            if fcp is not None:
                paints.append(fcp / 1000)
            expect(page.locator("#pods-table tbody tr")).to_have_count(100)
            pending = page.locator("#pods-table tbody tr").nth(i)  # another pod each time: nothing cached
            assert pending.locator("td").nth(1).inner_text() == "Unschedulable"
            assert pending.locator("td.msg").inner_text().startswith("0/1523 nodes are available: ")
            # why: a pending pod (every node evaluated), explanation computed on demand
            t0 = time.perf_counter()
            pending.get_by_role("button", name="why?").click()
            expect(page.locator("#why-table tbody tr")).to_have_count(100, timeout=60000)
            whys.append(time.perf_counter() - t0)
            assert page.locator("#why-pager").inner_text().endswith("of 1523\nnext ›")
            if i == 0:
                screenshot(page, "why-openb")
            # a scheduled pod: scores on the evaluated nodes, the chosen one first
            page.fill("#why-form input[name=pod]", f"default/openb-pod-{1000 + i:04d}")
            t0 = time.perf_counter()
            page.click("#why-form button[type=submit]")
            page.wait_for_selector("#why-table tbody tr.selected", timeout=60000)
            scheduled_whys.append(time.perf_counter() - t0)
            page.click("#tabs button[data-tab=cluster]")
    med = statistics.median
    print(
        f"openb page: first contentful paint median {med(paints):.2f} s, data shown (pods + nodes tables) "
        f"median {med(readies):.2f} s; why table of a pending pod (1523 nodes) median {med(whys):.2f} s, "
        f"of a scheduled pod median {med(scheduled_whys):.2f} s  ({REPEATS} runs each)"
    )
