"""The page of ``kubesched ui`` in a real browser (Playwright + Debian's chromium; skipped without).

Walks the main flow on examples/cluster.yaml: the pending pod and its exact message in the cluster
view, its per-node table, a scheduled pod's sortable score table with the chosen node highlighted,
a what-if that adds a pod and then changes a score weight, with the placement diff, and a replay
report's plots. With ``KUBESCHED_UI_SCREENSHOTS=1`` the screenshots in docs/ui/ are rewritten.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from ui_support import (
    ADDED_POD,
    BATCH_BIG_MESSAGE,
    EXAMPLE,
    browser_page,
    replay_report,
    require_browser,
    screenshot,
)

from kubesched.embedded.manifests import load_manifests
from kubesched.ui.server import UiServer
from kubesched.ui.session import Session


@pytest.fixture
def ui() -> Iterator[UiServer]:
    require_browser()
    s = Session(load_manifests([EXAMPLE]).manifests, None, sources=["examples/cluster.yaml"])
    s.run(None)
    srv = UiServer(session=s, port=0).start()
    try:
        yield srv
    finally:
        srv.stop()


def _report_file(tmp_path: Path) -> Path:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(replay_report()))
    return path


def test_main_flow(ui: UiServer, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with browser_page(tmp_path / "profile") as page:
        page.goto(ui.url)
        page.wait_for_selector("body[data-ready='1']")
        # cluster view: the pending pod first, with its exact upstream message
        first = page.locator("#pods-table tbody tr").first
        assert first.get_attribute("data-pod") == "shop/batch-big"
        assert first.locator("td").nth(1).inner_text() == "Unschedulable"
        assert first.locator("td.msg").inner_text() == BATCH_BIG_MESSAGE
        assert page.locator("#nodes-table tbody tr").count() == 5
        assert (
            "nvidia.com/gpu=present:NoSchedule"
            in page.locator("#nodes-table tr[data-node='gpu-b2']").inner_text()
        )
        screenshot(page, "cluster", full_page=True)

        # label selector filter
        page.fill("#pod-filters input[name=selector]", "app=web")
        expect(page.locator("#pods-table tbody tr")).to_have_count(2)
        assert page.locator("#pods-table tbody tr").evaluate_all("rs => rs.map(r => r.dataset.pod)") == [
            "shop/web-1",
            "shop/web-2",
        ]
        page.fill("#pod-filters input[name=selector]", "")
        expect(page.locator("#pods-table tbody tr")).to_have_count(8)

        # why: the pending pod's per-node table, summarised by reason
        first.get_by_role("button", name="why?").click()
        page.wait_for_selector("#why-table tbody tr")
        assert page.locator("#why-pod .msg").inner_text() == BATCH_BIG_MESSAGE
        reasons = page.locator("#why-summary li").all_inner_texts()
        assert reasons == [
            "3 node(s) NodeResourcesFit: Insufficient cpu",
            "2 node(s) TaintToleration: node(s) had untolerated taint(s)",
        ]
        assert page.locator("#why-table tbody tr").count() == 5
        page.locator("#why-summary li button").first.click()
        expect(page.locator("#why-table tbody tr")).to_have_count(3)

        # why: a scheduled pod, scores sortable, the chosen node highlighted
        page.fill("#why-form input[name=pod]", "shop/web-1")
        page.click("#why-form button[type=submit]")
        page.wait_for_selector("#why-table tbody tr.selected")
        assert page.locator("#why-table tbody tr.selected").get_attribute("data-node") == "node-a1"
        page.click("#why-table th[data-sort='score:NodeResourcesFit']")
        page.wait_for_selector("#why-table th.sorted[data-sort='score:NodeResourcesFit']")
        nodes = page.locator("#why-table tbody tr").evaluate_all("rs => rs.map(r => r.dataset.node)")
        assert nodes == ["node-a1", "node-b1", "node-a2", "gpu-b2", "gpu-b3"]
        row = page.locator("#why-table tbody tr.selected td").all_inner_texts()
        assert row[1] == "486" and "91 / 91 / 91" in row
        assert page.locator("#why-table tr[data-node='gpu-b2'] td").nth(5).get_attribute("title") == (
            "UnschedulableAndUnresolvable: node(s) had untolerated taint(s)"
        )
        page.locator("#why-table").evaluate("t => { t.parentElement.scrollLeft = 0; }")
        screenshot(page, "why", full_page=True)

        # what if: a config error is shown with the CLI's message
        page.click("#tabs button[data-tab=whatif]")
        expect(page.locator("#config-text")).to_have_value(re.compile("kind: KubeSchedulerConfiguration"))
        page.fill(
            "#config-text",
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "podMaxBackoffSeconds: 0\n",
        )
        page.click("#validate-btn")
        page.wait_for_selector("#whatif-error:not([hidden])")
        assert page.inner_text("#whatif-error") == (
            "config.yaml: podMaxBackoffSeconds: must be greater than or equal to PodInitialBackoffSeconds"
        )
        # add a pod, re-run; then raise NodeResourcesFit's weight, re-run: the pod moves
        page.fill("#config-text", "")
        page.fill("#added-text", ADDED_POD)
        page.click("#rerun-btn")
        page.wait_for_selector("#diff-table tr[data-pod='shop/api-1'].change-added")
        # change a score weight in the weights table: it is written into the YAML, then re-run
        weight = page.get_by_label("NodeResourcesFit weight")
        expect(weight).to_have_value("1")
        weight.fill("10")
        page.click("#weights-btn")
        expect(page.locator("#config-text")).to_have_value(
            re.compile(r"- name: NodeResourcesFit\n\s+weight: 10\n")
        )
        page.click("#rerun-btn")
        page.wait_for_selector("#diff-table tr[data-pod='shop/api-1'].change-moved")
        cells = page.locator("#diff-table tr[data-pod='shop/api-1'] td").all_inner_texts()
        assert cells[:4] == ["shop/api-1", "moved", "Scheduled on node-b1", "Scheduled on node-a1"]
        assert page.inner_text("#diff-counts").startswith("1 moved, 0 newly scheduled, 0 newly pending")
        assert page.locator("#runs-table tbody tr").count() == 3
        screenshot(page, "whatif", full_page=True)

        # the cluster view follows the selected run
        page.click("#tabs button[data-tab=cluster]")
        page.wait_for_selector("#pods-table tr[data-pod='shop/api-1']")
        assert page.locator("#pods-table tr[data-pod='shop/api-1'] td").nth(2).inner_text() == "node-a1"

        # replay report: the same plots as report.html
        page.click("#tabs button[data-tab=reports]")
        page.set_input_files("#report-files", str(_report_file(tmp_path)))
        expect(page.locator("#report-plots .plot")).to_have_count(4, timeout=30000)
        expect(page.locator("#report-plots .plot .main-svg").first).to_be_visible(timeout=30000)
        assert [t.split("\t")[0] for t in page.locator("#report-table tbody tr").all_inner_texts()] == [
            "upstream-default",
            "image-aware",
        ]
        screenshot(page, "reports", full_page=True)
        assert page.errors == []  # type: ignore[attr-defined]


def test_report_of_a_replay_is_json_with_plot_data(tmp_path: Path) -> None:
    doc = json.loads(_report_file(tmp_path).read_text())
    plots = doc["runs"][0]["plots"]
    assert list(plots) == ["startupCdf", "series"]
    assert plots["startupCdf"]["fraction"][-1] == 1.0


def test_live_page_follows_the_watch(tmp_path: Path) -> None:
    from playwright.sync_api import expect

    from kubesched.client.kube import KubeClusterClient
    from kubesched.clock import RealClock
    from kubesched.embedded.apiserver import start_server, write_kubeconfig
    from kubesched.embedded.store import MemoryCluster
    from kubesched.ui.session import LiveSession

    require_browser()
    cluster = MemoryCluster(RealClock())
    cluster.load(load_manifests([EXAMPLE]).objects)
    api = start_server(cluster, bookmark_interval=0.5)
    live = LiveSession(
        KubeClusterClient.from_kubeconfig(
            str(write_kubeconfig(tmp_path / "kubeconfig", api.url)), qps=0, burst=0
        ),
        None,
    )
    live.start()
    srv = UiServer(live=live, port=0).start()
    try:
        with browser_page(tmp_path / "profile") as page:
            page.goto(srv.url)
            page.wait_for_selector("body[data-ready='1']")
            expect(page.locator("#live-dot")).to_be_visible()
            expect(page.locator("#pods-table tr[data-pod='shop/batch-big'] td").nth(1)).to_have_text(
                "Pending"
            )
            cluster.create(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": "late", "namespace": "shop"},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}]},
                }
            )
            expect(page.locator("#pods-table tr[data-pod='shop/late']")).to_have_count(1, timeout=10000)
            cluster.patch_status(
                "Pod",
                "shop",
                "batch-big",
                {
                    "conditions": [
                        {
                            "type": "PodScheduled",
                            "status": "False",
                            "reason": "Unschedulable",
                            "message": BATCH_BIG_MESSAGE,
                        }
                    ]
                },
            )
            row = page.locator("#pods-table tr[data-pod='shop/batch-big']")
            expect(row.locator("td.msg")).to_have_text(BATCH_BIG_MESSAGE, timeout=10000)
            row.get_by_role("button", name="why?").click()
            expect(page.locator("#why-summary li").first).to_have_text(
                "3 node(s) NodeResourcesFit: Insufficient cpu", timeout=10000
            )
            assert page.errors == []  # type: ignore[attr-defined]
    finally:
        srv.stop()
        live.stop()
        api.stop()
