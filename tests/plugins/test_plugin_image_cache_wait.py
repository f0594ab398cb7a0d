"""ImageCacheWait: hold decisions at Permit, bounded by the pull they save."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from image_plugin_support import write_catalogue

from kubesched.api.timestamps import rfc3339
from kubesched.clock import VirtualClock
from kubesched.config.args import decode_args
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import FilterPlugin
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.status import Code, Status
from kubesched.plugins import IN_TREE
from kubesched.plugins.imagecachewait.image_cache_wait import (
    ImageCacheWait,
    ImageCacheWaitArgs,
    expected_end,
    fits_by_resources,
)
from kubesched.testing import FakeHandle, make_node, make_pod, node_info, snapshot_of


class _ResourcesFit(FilterPlugin):
    """The profile's filters as these tests see them: the pod count and requests must fit."""

    NAME = "ResourcesFit"

    def filter(self, state: CycleState, pod: Any, node_info: NodeInfo) -> Status | None:
        return (
            None
            if fits_by_resources(pod, node_info)
            else Status(Code.Unschedulable, "Insufficient resources")
        )


NOW = 1_700_000_000.0
GPU = {"nvidia.com/gpu": "1"}


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory: pytest.TempPathFactory) -> str:
    return write_catalogue(tmp_path_factory.mktemp("cat"))


def running(name: str, node: str, end_in: float | None, image: str = "app:1", **kw: Any) -> Any:
    ann = {} if end_in is None else {"kubesched.io/expected-end-time": rfc3339(NOW + end_in)}
    spec = {"containers": [{"name": "c", "image": image, "resources": {"requests": GPU}}]}
    return (
        make_pod(name, node_name=node, spec=spec, **kw)
        if not ann
        else _annotated(name, node, spec, ann, **kw)
    )


def _annotated(name: str, node: str, spec: dict[str, Any], ann: dict[str, str], **kw: Any) -> Any:
    from kubesched.api.pod import Pod
    from kubesched.testing import pod_manifest

    m = pod_manifest(name, node_name=node, spec=spec, **kw)
    m["metadata"]["annotations"] = ann
    return Pod.from_manifest(m)


def setup(
    catalogue: str, warm_end_in: float | None, cold_pods: list[Any] | None = None, **kw: Any
) -> tuple[ImageCacheWait, Any]:
    warm = node_info(
        make_node("warm", allocatable=GPU, images=[(["docker.io/library/app:1"], 2_130_000_000)]),
        [running("old", "warm", warm_end_in)],
    )
    cold = node_info(make_node("cold", allocatable=GPU), cold_pods or [])
    handle = FakeHandle(snapshot_of([cold, warm]), filter_plugins=[_ResourcesFit()])
    handle.clock = VirtualClock(NOW)  # type: ignore[assignment]
    kw.setdefault("default_bandwidth_bytes_per_second", 80e6)  # the arithmetic below uses 80 MB/s
    kw.setdefault("pull_fixed_seconds", 0.0)  # and the throughput term alone, unless a test sets
    kw.setdefault("layer_latency_seconds", 0.0)  # these (test_whole_pull_model_*)
    pl = ImageCacheWait(ImageCacheWaitArgs(catalogue_path=catalogue, **kw), handle)  # type: ignore[arg-type]
    return pl, make_pod("new", image="app:1", requests=GPU)


def test_registered_in_tree() -> None:
    assert IN_TREE["ImageCacheWait"] == "kubesched.plugins.imagecachewait.image_cache_wait:ImageCacheWait"


def test_holds_when_cached_node_frees_before_the_pull_finishes(catalogue: str) -> None:
    pl, pod = setup(catalogue, warm_end_in=5.0)
    d = pl.decide(CycleState(), pod, "cold")
    # cold: 2.13 GB / 80 MB/s = 26.625 s; warm: free in 5 s + 2 s grace, image cached (0 s pull)
    assert (d.node, d.hold, d.pull_chosen, d.pull_target, d.free_in, d.gain) == (
        "warm",
        7.0,
        26.625,
        0.0,
        5.0,
        19.625,
    )
    s, timeout = pl.permit(CycleState(), pod, "cold")
    assert s is not None and s.code == Code.Wait and timeout == 7.0
    assert s.message() == (
        "waiting up to 7s for node warm (image cached, room expected in 5s) instead of a 26.625s pull on cold"
    )
    # a pod is held at most once
    assert pl.permit(CycleState(), pod, "cold") == (None, 0.0)


def test_no_hold_when_the_wait_is_longer_than_the_saving(catalogue: str) -> None:
    pl, pod = setup(catalogue, warm_end_in=20.0)
    # gain = 26.625 - (20 + 2 + 0) = 4.625 < minGainSeconds 10
    assert pl.decide(CycleState(), pod, "cold").node == ""
    assert pl.permit(CycleState(), pod, "cold") == (None, 0.0)


def test_max_wait_bounds_the_hold(catalogue: str) -> None:
    pl, pod = setup(catalogue, warm_end_in=5.0, max_wait_seconds=6.0)
    assert pl.decide(CycleState(), pod, "cold").hold == 6.0
    pl, pod = setup(catalogue, warm_end_in=5.0, max_wait_seconds=4.0)
    assert pl.decide(CycleState(), pod, "cold").node == ""  # would time out before the node frees


def test_no_hints_no_hold(catalogue: str) -> None:
    pl, pod = setup(catalogue, warm_end_in=None)
    assert pl.decide(CycleState(), pod, "cold").node == ""


def test_short_pull_not_worth_holding(catalogue: str) -> None:
    pl, _ = setup(catalogue, warm_end_in=5.0)
    tiny = make_pod("tiny", image="tiny:1", requests=GPU)
    d = pl.decide(CycleState(), tiny, "cold")
    assert (d.node, d.pull_chosen) == ("", 0.025)


def test_pulls_in_flight_on_the_chosen_node_lengthen_its_pull(catalogue: str) -> None:
    # cold is pulling app:2 for another pod (shares base + cuda): the new pull queues behind it
    pl, pod = setup(
        catalogue, warm_end_in=20.0, cold_pods=[make_pod("other", image="app:2", node_name="cold")]
    )
    d = pl.decide(CycleState(), pod, "cold")
    # missing app1 100 MB + in flight 2.43 GB = 2.53 GB / 80 MB/s = 31.625 s; gain 31.625 - 22 = 9.625
    assert (d.node, d.pull_chosen) == ("", 31.625)
    pl, pod = setup(
        catalogue, warm_end_in=15.0, cold_pods=[make_pod("other", image="app:2", node_name="cold")]
    )
    d = pl.decide(CycleState(), pod, "cold")
    assert (d.node, d.hold, d.gain) == ("warm", 17.0, 14.625)


def test_a_started_pods_images_on_the_chosen_node_are_no_pull(catalogue: str) -> None:
    # cold runs a pod of app:1 that status does not list yet: pulling it for that pod, the new pod
    # waits for the whole 2.13 GB (26.625 s) and is held for warm; once that pod is Running the
    # image is on cold for certain: no pull, no hold
    pending = make_pod("other", image="app:1", node_name="cold")
    pl, pod = setup(catalogue, warm_end_in=5.0, cold_pods=[pending])
    d = pl.decide(CycleState(), pod, "cold")
    assert (d.node, d.pull_chosen) == ("warm", 26.625)
    started = make_pod("other", image="app:1", node_name="cold", status={"phase": "Running"})
    pl, pod = setup(catalogue, warm_end_in=5.0, cold_pods=[started])
    d = pl.decide(CycleState(), pod, "cold")
    assert (d.node, d.pull_chosen) == ("", 0.0)


def test_active_deadline_fallback() -> None:
    p = make_pod("p", spec={"activeDeadlineSeconds": 600}, status={"startTime": rfc3339(NOW)})
    assert expected_end(p) == NOW + 600
    assert expected_end(make_pod("q")) is None


def test_args_defaults() -> None:
    a = decode_args(ImageCacheWaitArgs, None, "args")
    assert (a.max_wait_seconds, a.min_pull_seconds, a.min_gain_seconds, a.requeue_grace_seconds) == (
        60.0,
        20.0,
        10.0,
        2.0,
    )
    b = decode_args(ImageCacheWaitArgs, {"maxWaitSeconds": 30, "minGainSeconds": 5}, "args")
    assert (b.max_wait_seconds, b.min_gain_seconds) == (30.0, 5.0)


@settings(max_examples=60, deadline=None)
@given(
    end_in=st.floats(min_value=0, max_value=200),
    max_wait=st.floats(min_value=0, max_value=120),
    grace=st.floats(min_value=0, max_value=10),
    min_gain=st.floats(min_value=0, max_value=20),
)
def test_hold_never_exceeds_the_pull_it_saves(
    catalogue: str, end_in: float, max_wait: float, grace: float, min_gain: float
) -> None:
    pl, pod = setup(
        catalogue,
        warm_end_in=end_in,
        max_wait_seconds=max_wait,
        requeue_grace_seconds=grace,
        min_gain_seconds=min_gain,
    )
    d = pl.decide(CycleState(), pod, "cold")
    if d.node:
        assert d.hold <= d.pull_chosen - d.pull_target
        assert d.hold <= max_wait
        assert d.free_in <= d.hold
        assert d.gain >= min_gain


def test_whole_pull_model_counts_fixed_and_layer_seconds(catalogue: str) -> None:
    pl, pod = setup(catalogue, warm_end_in=5.0, pull_fixed_seconds=1.0, layer_latency_seconds=0.037)
    d = pl.decide(CycleState(), pod, "cold")
    # cold pulls app:1 itself: 1 s + 3 layers x 0.037 s + 2.13 GB / 80 MB/s = 27.736 s
    assert (d.node, d.hold, d.pull_chosen, d.pull_target, d.free_in, d.gain) == (
        "warm",
        7.0,
        pytest.approx(27.736),
        0.0,
        5.0,
        pytest.approx(20.736),
    )
    # cold also pulls app:2 for another pod: the pod's own pull (app1's layer: 1 layer, 1 image)
    # queues behind app:2's (3 layers, 1 image): 2.53 GB / 80 MB/s + 4 x 0.037 s + 2 x 1 s = 33.773 s
    pl, pod = setup(
        catalogue,
        warm_end_in=20.0,
        cold_pods=[make_pod("other", image="app:2", node_name="cold")],
        pull_fixed_seconds=1.0,
        layer_latency_seconds=0.037,
    )
    d = pl.decide(CycleState(), pod, "cold")
    assert (d.node, d.pull_chosen, d.gain) == ("warm", pytest.approx(33.773), pytest.approx(11.773))
    a = decode_args(ImageCacheWaitArgs, None, "args")
    assert (a.pull_fixed_seconds, a.layer_latency_seconds) == (1.0, 0.037)
