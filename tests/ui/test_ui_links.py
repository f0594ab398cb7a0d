"""Every view of ``kubesched ui`` has a URL (pod, node, what-if, report) that can be linked, reloaded
and gone back to; the first Explain renders; no stray ``null``; replay and start-up reports show as
tables with plotly and without it. In Debian's chromium through Playwright (skipped without)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_support import BATCH_BIG_MESSAGE, EXAMPLE, browser_page, replay_report, require_browser, screenshot

from kubesched.embedded.manifests import load_manifests
from kubesched.ui.reports import report_view
from kubesched.ui.server import UiServer
from kubesched.ui.session import Session


def _serve(paths: list[Path]) -> UiServer:
    s = Session(load_manifests(paths).manifests, None, sources=[str(p) for p in paths])
    s.run(None)
    return UiServer(session=s, port=0).start()


@pytest.fixture
def ui() -> Iterator[UiServer]:
    require_browser()
    srv = _serve([EXAMPLE])
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return replay_report()


def _startup_report(report: dict[str, Any]) -> dict[str, Any]:
    """A ``kubesched startup`` report.json: the replay's keys with ``scheduler`` in place of ``config``."""
    runs = [
        {
            "scheduler": r["config"]
            .replace("upstream-default", "default-scheduler")
            .replace("image-aware", "kubesched"),
            **{k: v for k, v in r.items() if k != "config"},
        }
        for r in report["runs"]
    ]
    return {"runs": runs, "source": {"kubeconfig": "kubeconfig", "since": "1h"}}


def test_first_explain_click_renders_and_prints_no_null(ui: UiServer, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with browser_page(tmp_path / "profile") as page:
        page.goto(ui.url)
        page.wait_for_selector("body[data-ready='1']")
        page.click("#tabs button[data-tab=why]")
        page.fill("#why-form input[name=pod]", "shop/batch-big")
        page.click("#why-form button[type=submit]")  # once
        expect(page.locator("#why-summary li")).to_have_count(2)
        assert page.locator("#why-pod .msg").inner_text() == BATCH_BIG_MESSAGE
        assert page.url.endswith("#/pod/shop/batch-big")
        # a pod every node fits: no reasons list, and no "null" where it would be
        page.fill("#why-form input[name=pod]", "shop/web-2")
        page.click("#why-form button[type=submit]")
        expect(page.locator("#why-summary h3")).to_have_text("Attempt 1: selected node-a1")
        text = page.locator("#why-summary").inner_text()
        assert "null" not in text and "undefined" not in text
        assert page.errors == []  # type: ignore[attr-defined]


def test_every_view_has_a_url(ui: UiServer, tmp_path: Path, report: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    with browser_page(tmp_path / "profile") as page:
        # a pod, opened by URL (as a link from elsewhere or a reload)
        page.goto(ui.url + "#/pod/shop/batch-big")
        page.wait_for_selector("body[data-ready='1']")
        expect(page.locator("#tab-why")).to_be_visible()
        expect(page.locator("#why-summary li")).to_have_count(2)
        assert page.locator("#why-summary li").all_inner_texts() == [
            "3 node(s) NodeResourcesFit: Insufficient cpu",
            "2 node(s) TaintToleration: node(s) had untolerated taint(s)",
        ]
        page.reload()
        page.wait_for_selector("body[data-ready='1']")
        expect(page.locator("#why-summary li")).to_have_count(2)

        # a node: the cluster view narrowed to it, by URL and by clicking a node name
        page.goto(ui.url + "#/node/node-a1")
        expect(page.locator("#nodes-table tbody tr")).to_have_count(1)
        assert page.locator("#nodes-table tbody tr").get_attribute("data-node") == "node-a1"
        expect(page.locator("#pods-table tbody tr")).to_have_count(2)
        assert page.locator("#pods-table tbody tr").evaluate_all("rs => rs.map(r => r.dataset.pod)") == [
            "shop/web-1",
            "shop/web-2",
        ]
        screenshot(page, "node", full_page=True)
        page.click("#tabs button[data-tab=cluster]")
        assert page.url.endswith("#/cluster")
        expect(page.locator("#nodes-table tbody tr")).to_have_count(5)
        page.click("#nodes-table a.node-link:text-is('gpu-b3')")
        assert page.url.endswith("#/node/gpu-b3")
        expect(page.locator("#nodes-table tbody tr")).to_have_count(1)
        page.go_back()  # back to the whole cluster
        expect(page.locator("#nodes-table tbody tr")).to_have_count(5)

        # what-if, and a run chosen in the header, are in the URL too
        page.goto(ui.url + "#/whatif")
        expect(page.locator("#tab-whatif")).to_be_visible()
        page.goto(ui.url + "#/pod/shop/web-1?run=1&attempt=1")
        expect(page.locator("#why-summary h3")).to_have_text("Attempt 1: selected node-a1")

        # a report: opening it gives it a URL; reloading shows it again
        path = tmp_path / "report.json"
        path.write_text(json.dumps(report))
        page.click("#tabs button[data-tab=reports]")
        page.set_input_files("#report-files", str(path))
        expect(page.locator("#report-table tbody tr")).to_have_count(2)
        assert page.url.endswith("#/reports/1")
        page.reload()
        page.wait_for_selector("body[data-ready='1']")
        expect(page.locator("#report-table tbody tr")).to_have_count(2)
        expect(page.locator("#report-plots .plot")).to_have_count(4, timeout=30000)
        assert page.errors == []  # type: ignore[attr-defined]


def test_startup_report_and_no_plotly(
    ui: UiServer, tmp_path: Path, report: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from playwright.sync_api import expect

    def no_plotly(runs: Any) -> Any:
        raise ImportError("report.html and the replay plots need plotly: pip install 'kubesched[report]'")

    monkeypatch.setattr("kubesched.ui.reports.report_figures", no_plotly)
    path = tmp_path / "report.json"
    path.write_text(json.dumps(_startup_report(report)))
    with browser_page(tmp_path / "profile") as page:
        page.goto(ui.url + "#/reports")
        page.wait_for_selector("body[data-ready='1']")
        page.set_input_files("#report-files", str(path))
        expect(page.locator("#report-table tbody tr")).to_have_count(2)
        assert [t.split("\t")[0] for t in page.locator("#report-table tbody tr").all_inner_texts()] == [
            "default-scheduler",
            "kubesched",
        ]
        expect(page.locator("#report-note")).to_have_text(
            "no plots: report.html and the replay plots need plotly: pip install 'kubesched[report]'"
        )
        assert page.locator("#report-plots .plot").count() == 0
        assert page.locator("#report-error").is_hidden()
        screenshot(page, "report-table", full_page=True)
        assert page.errors == []  # type: ignore[attr-defined]


def test_report_view_without_plotly_keeps_the_table(
    report: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_plotly(runs: Any) -> Any:
        raise ImportError("report.html and the replay plots need plotly: pip install 'kubesched[report]'")

    monkeypatch.setattr("kubesched.ui.reports.report_figures", no_plotly)
    view = report_view([{"name": "startup.json", "report": _startup_report(report)}])
    assert [r["config"] for r in view["rows"]] == ["default-scheduler", "kubesched"]
    assert view["figures"] == [] and view["note"].startswith("report.html and the replay plots need plotly")
    with pytest.raises(
        ValueError, match=r"x.json: runs\[0\]: not a replay or startup run \(no config or scheduler\)"
    ):
        report_view([{"name": "x.json", "report": {"runs": [{"pods": 1}]}}])
