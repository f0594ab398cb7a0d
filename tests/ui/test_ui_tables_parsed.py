"""The UI's node and pod tables read the scheduler's own parsed Pods and Nodes, with the very rows a
full parse gives."""

from __future__ import annotations

from typing import Any

import pytest
from ui_support import ADDED_POD, EXAMPLE

from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.embedded.manifests import load_manifests
from kubesched.ui.cluster_view import node_rows, pod_parser, pod_rows
from kubesched.ui.session import Session

_BAD_POD = """
apiVersion: v1
kind: Pod
metadata: {name: broken, namespace: default}
spec:
  containers:
  - name: c
    image: busybox
    resources: {requests: {cpu: lots}}
"""


def _run() -> Any:
    s = Session(load_manifests([EXAMPLE]).manifests, None, sources=["examples/cluster.yaml"])
    return s.run(None, added_text=ADDED_POD + "\n---\n" + _BAD_POD)


def test_tables_from_the_schedulers_objects_equal_a_full_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    run = _run()
    nodes, pods, statuses = run.objects("Node"), run.objects("Pod"), run.statuses()
    parse = pod_parser()
    expected = (node_rows(nodes, pods, parse), pod_rows(pods, statuses, parse))

    known_pods, known_nodes = run.parsed_pods(), run.parsed_nodes()
    assert {id(p.raw) for p in known_pods} <= {id(o) for o in pods}
    assert {id(n.raw) for n in known_nodes} == {id(o) for o in nodes}
    parsed_again: list[str] = []
    pod_from_manifest, node_from_manifest = Pod.from_manifest, Node.from_manifest

    def count_pod(obj: Any) -> Pod:
        parsed_again.append(f"Pod {obj['metadata']['name']}")
        return pod_from_manifest(obj)

    def count_node(obj: Any) -> Node:
        parsed_again.append(f"Node {obj['metadata']['name']}")
        return node_from_manifest(obj)

    monkeypatch.setattr(Pod, "from_manifest", staticmethod(count_pod))
    monkeypatch.setattr(Node, "from_manifest", staticmethod(count_node))
    parse = pod_parser(known_pods)
    got = (node_rows(nodes, pods, parse, known_nodes), pod_rows(pods, statuses, parse))
    assert got == expected
    # parsed again: only the pods the scheduler holds nowhere - the malformed one (still listed, as
    # Error) and the one for a scheduler name no profile of this run serves
    assert sorted(parsed_again) == ["Pod broken", "Pod other-scheduler"]
    broken = next(r for r in got[1] if r["name"] == "broken")
    assert (broken["status"], broken["requests"]) == ("Error", {})


def test_a_known_pod_whose_object_was_replaced_is_parsed_afresh() -> None:
    known = _run().parsed_pods()[0]
    obj = known.raw
    parse = pod_parser([known])
    same = parse(obj)
    assert same is not None and (same.priority, dict(same.requests)) == (known.priority, dict(known.requests))
    copy = {**obj, "spec": {**obj["spec"], "priority": known.priority + 7}}  # another object
    figures = parse(copy)
    assert figures is not None and figures.priority == known.priority + 7
