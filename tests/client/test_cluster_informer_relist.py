"""Informer re-list reconciliation and watch recovery (client-go reflector semantics): a re-list
after the server's history changed delivers a replaced object as delete + add, a changed one as an
update whatever its resourceVersion; a watch answered ``504 Too large resource version`` asks its
informer to re-list at once instead of retrying; retry warnings are rate-limited."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from apiserver_support import api_client, server_fixture
from run_support import wait_for

from kubesched.client.client import ListResult, WatchEvent
from kubesched.client.informers import Informer, ResourceEventHandlerFuncs
from kubesched.client.kube import KubeApiError, KubeClusterClient, is_too_large_resource_version
from kubesched.client.throttled_log import ThrottledLog
from kubesched.embedded.apiserver import ServerHandle


def _pod(
    name: str, uid: str, rv: str, node: str = "", labels: dict[str, str] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}]}
    if node:
        spec["nodeName"] = node
    return {
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "d",
            "uid": uid,
            "resourceVersion": rv,
            "labels": labels or {},
        },
        "spec": spec,
    }


class _Lists:
    """A synchronous client returning prepared list results."""

    def __init__(self, *results: ListResult) -> None:
        self.results = list(results)

    def list(self, kind: str) -> ListResult:
        return self.results.pop(0)


def test_relist_reconciles_by_content_and_uid_not_resource_version() -> None:
    first = ListResult(
        [
            _pod("same", "u1", "5"),
            _pod("moved", "u2", "6", node="n1"),
            _pod("relabeled", "u3", "7"),
            _pod("gone", "u4", "8"),
            _pod("renamed", "u5", "9"),
        ],
        "9",
    )
    # the new server's history: same resourceVersions, other contents
    second = ListResult(
        [
            _pod("same", "u1", "5"),
            _pod("moved", "u2", "6"),
            _pod("relabeled", "u3", "7", labels={"a": "b"}),
            _pod("renamed", "u9", "2"),
            _pod("fresh", "u7", "3"),
        ],
        "3",
    )
    calls: list[tuple[str, str]] = []
    inf = Informer(_Lists(first, second), "Pod")  # type: ignore[arg-type]
    inf.add_handlers(
        ResourceEventHandlerFuncs(
            lambda o: calls.append(("add", o["metadata"]["name"])),
            lambda old, new: calls.append(("update", new["metadata"]["name"])),
            lambda o: calls.append(("delete", o["metadata"]["name"])),
        )
    )
    inf._relist(initial=True)
    calls.clear()
    inf._relist(initial=False)
    assert calls == [
        ("delete", "gone"),
        ("delete", "moved"),
        ("add", "moved"),
        ("update", "relabeled"),
        ("delete", "renamed"),
        ("add", "renamed"),
        ("add", "fresh"),
    ]
    assert inf.resource_version == "3" and inf.relists == 1 and inf.healthy


def test_relist_goes_on_when_a_handler_fails(caplog: pytest.LogCaptureFixture) -> None:
    inf = Informer(
        _Lists(
            ListResult([_pod("a", "1", "1")], "1"),  # type: ignore[arg-type]
            ListResult([_pod("b", "2", "1"), _pod("c", "3", "1")], "1"),
        ),
        "Pod",
    )
    added: list[str] = []

    def on_add(o: dict[str, Any]) -> None:
        if o["metadata"]["name"] == "b":
            raise RuntimeError("boom")
        added.append(o["metadata"]["name"])

    inf.add_handlers(ResourceEventHandlerFuncs(on_add=on_add))
    inf._relist(initial=True)
    inf._relist(initial=False)
    assert added == ["a", "c"]
    assert "informer Pod: handler failed while reconciling d/b" in caplog.text


def test_throttled_log_suppresses_and_counts(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    throttle = ThrottledLog(logging.getLogger("t"), 30.0, now=lambda: now[0])
    caplog.set_level(logging.INFO, "t")
    assert throttle.log("k", logging.WARNING, "failed %s", 1)
    for i in range(5):
        now[0] += 1
        assert not throttle.log("k", logging.WARNING, "failed %s", i)
    assert throttle.log("other", logging.WARNING, "other")
    now[0] = 31.0
    assert throttle.log("k", logging.WARNING, "failed %s", 9)
    throttle.reset("k")
    assert throttle.log("k", logging.WARNING, "failed %s", 10)
    assert [r.getMessage() for r in caplog.records] == [
        "failed 1",
        "other",
        "failed 9 (5 similar messages suppressed)",
        "failed 10",
    ]


server = server_fixture(bookmark_interval=0.2)


@pytest.fixture
def client(server: ServerHandle) -> Iterator[KubeClusterClient]:
    c = KubeClusterClient(api_client(server), None, watch_timeout=(5, 5))
    try:
        yield c
    finally:
        c.close()


def test_watch_ahead_of_the_server_asks_for_a_relist_at_once(
    server: ServerHandle, client: KubeClusterClient
) -> None:
    gone = threading.Event()
    events: list[WatchEvent] = []
    future = str(int(server.cluster.resource_version) + 1000)
    w = client.watch_resumable("Pod", future, events.append, gone.set)
    assert gone.wait(20)
    wait_for(lambda: not w.active, 10, "the watch ended")
    assert w.connections == 1 and events == []  # no retry loop against the 504
    err = KubeApiError(504, "Timeout", "Too large resource version: 36, current: 8")
    assert is_too_large_resource_version(err)
    assert not is_too_large_resource_version(KubeApiError(504, "Timeout", "gateway timeout"))


def test_informer_recovers_from_a_watch_ahead_of_the_server(
    server: ServerHandle, client: KubeClusterClient
) -> None:
    server.cluster.create(
        {
            "kind": "Pod",
            "metadata": {"name": "a", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
        }
    )
    inf = Informer(client, "Pod")
    adds: list[str] = []
    inf.add_handlers(ResourceEventHandlerFuncs(on_add=lambda o: adds.append(o["metadata"]["name"])))
    inf.start()
    try:
        assert adds == ["a"] and inf.healthy
        # as if the informer had seen a newer history (server restarted with a fresh store)
        inf._subscription.stop()  # type: ignore[union-attr]
        inf.resource_version = str(int(server.cluster.resource_version) + 500)
        inf._subscription = inf._subscribe()
        wait_for(lambda: inf.relists == 1 and inf.healthy, 30, "re-list after 504")
        server.cluster.create(
            {
                "kind": "Pod",
                "metadata": {"name": "b", "namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            }
        )
        wait_for(lambda: "b" in adds, 20, "events after the re-list")
        assert adds == ["a", "b"]
    finally:
        inf.stop()


def test_generation_changes_with_every_list_and_event_but_bookmarks() -> None:
    inf = Informer(_Lists(ListResult([_pod("a", "u1", "1")], "1"), ListResult([], "4")), "Pod")  # type: ignore[arg-type]
    assert inf.generation == 0
    inf._relist(initial=True)
    assert inf.generation == 1
    inf._on_event(WatchEvent("ADDED", "Pod", _pod("b", "u2", "2")))
    inf._on_event(WatchEvent("MODIFIED", "Pod", _pod("b", "u2", "3", labels={"x": "y"})))
    assert inf.generation == 3
    inf._on_event(WatchEvent("BOOKMARK", "Pod", {"metadata": {"resourceVersion": "3"}}))
    assert inf.generation == 3 and inf.resource_version == "3"
    inf._on_event(WatchEvent("DELETED", "Pod", _pod("b", "u2", "4")))
    assert inf.generation == 4
    inf._relist(initial=False)
    assert inf.generation == 5 and inf.store == {}
