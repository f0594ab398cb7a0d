"""kubesched.trace.load: the simple YAML/CSV trace formats, the openb trace and its window."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.errors import ManifestError
from kubesched.images.assign import ImageAssigner
from kubesched.images.catalogue import default_catalogue, load_catalogue
from kubesched.trace.load import load_workload, parse_window

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "replay"
OPENB = Path(__file__).resolve().parents[3] / "shared" / "data" / "alibaba-gpu-2023"


@pytest.fixture(scope="module")
def assigner() -> ImageAssigner:
    return ImageAssigner(load_catalogue(FIX / "catalogue.yaml"), seed=0)


def test_yaml_trace(assigner: ImageAssigner) -> None:
    wl = load_workload(FIX / "tiny.yaml", assigner)
    assert [p.name for p in wl.pods] == ["p1", "p2", "p3", "p4", "p5"]
    assert [p.arrival for p in wl.pods] == [0, 1, 2, 5, 6]
    assert [p.duration for p in wl.pods] == [10, 100, 100, 5, 100]
    assert [n["metadata"]["name"] for n in wl.nodes] == ["n1", "n2", "n3"]
    assert wl.nodes[0]["status"]["allocatable"] == {"cpu": "4", "memory": "8Gi", "pods": "110"}
    assert wl.horizon == 20.0
    assert wl.kubelet["layerLatencySeconds"] == 0.5
    assert wl.pods[0].manifest["spec"]["nodeSelector"] == {"kubernetes.io/hostname": "n1"}


def test_csv_directory(assigner: ImageAssigner) -> None:
    wl = load_workload(FIX / "csv", assigner)
    assert [n["metadata"]["name"] for n in wl.nodes] == ["node-0", "node-1", "gpu"]
    assert wl.nodes[2]["status"]["allocatable"]["nvidia.com/gpu"] == "2"
    web, train = wl.pods
    assert (web.key, web.arrival, web.duration) == ("default/web", 0.0, 60.0)
    assert (train.key, train.arrival, train.duration) == ("ml/train", 5.0, None)
    c = train.manifest["spec"]["containers"][0]
    assert c["resources"]["requests"] == {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"}
    assert c["image"] == "example.com/app-a:1"  # assigned: the catalogue's only gpu image
    assert wl.horizon == 60.0


def test_shorthand_count_and_default_horizon(tmp_path: Path, assigner: ImageAssigner) -> None:
    f = tmp_path / "t.yaml"
    f.write_text(
        "nodes: [{name: n, cpu: 2, memory: 4Gi, count: 2}]\n"
        "pods: [{name: w, arrival: 3, duration: 7, count: 2, cpu: 100m, image: example.com/base:1}]\n"
    )
    wl = load_workload(f, assigner)
    assert [n["metadata"]["name"] for n in wl.nodes] == ["n-0", "n-1"]
    assert [p.name for p in wl.pods] == ["w-0", "w-1"]
    assert wl.horizon == 10.0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "nodes: [{name: n, cpu: 1, memory: 1Gi}]\npods: [{name: a, duration: 1}]\n",
            "t.yaml: pods[0].arrival: required",
        ),
        (
            "nodes: [{name: n, cpu: 1, memory: 1Gi}]\npods: [{name: a, arrival: -1}]\n",
            "t.yaml: pods[0].arrival: must be a number >= 0, got -1",
        ),
        ("nodes: [{name: n, cpu: 1}]\npods: [{name: a, arrival: 0}]\n", "t.yaml: nodes[0].memory: required"),
        (
            "nodes: [{name: n, cpu: 1, memory: 1Gi}]\npods: [{name: a, arrival: 0, cpu: 1.5.0}]\n",
            't.yaml: pods[0].spec.containers[0].resources.requests.cpu: invalid quantity "1.5.0"',
        ),
        (
            "nodes: [{name: n, cpu: 1, memory: 1Gi}]\npods: [{name: a, arrival: 0, colour: red}]\n",
            "t.yaml: pods[0].colour: unknown field (allowed: arrival, count, cpu, duration, gpu, image, memory, name, "
            "namespace, template)",
        ),
        (
            "nodes: [{name: n, cpu: 1, memory: 1Gi}]\npods: [{name: a, arrival: 0}, {name: a, arrival: 1}]\n",
            "t.yaml: pods: duplicate pod default/a in the workload",
        ),
    ],
)
def test_yaml_errors_name_the_field(tmp_path: Path, assigner: ImageAssigner, text: str, message: str) -> None:
    f = tmp_path / "t.yaml"
    f.write_text(text)
    with pytest.raises(ManifestError) as e:
        load_workload(f, assigner)
    assert str(e.value) == message.replace("t.yaml", str(f))


def test_window_parsing() -> None:
    end = 12_902_960.0
    assert parse_window(None, end) == (0.0, end)
    assert parse_window("all", end) == (0.0, end)
    assert parse_window("30d", end) == (end - 30 * 86400, end)
    assert parse_window("12h", end) == (end - 12 * 3600, end)
    assert parse_window("100:200", end) == (100.0, 200.0)
    assert parse_window("100d:", end) == (8_640_000.0, end)
    assert parse_window(":1h", end) == (0.0, 3600.0)
    with pytest.raises(ManifestError, match="empty"):
        parse_window("200:100", end)
    with pytest.raises(ManifestError, match="--trace-window: span"):
        parse_window("thirty days", end)


def test_window_only_for_openb(assigner: ImageAssigner) -> None:
    with pytest.raises(ManifestError, match="only the openb trace has a time window"):
        load_workload(FIX / "tiny.yaml", assigner, window="30d")


@pytest.mark.skipif(not OPENB.exists(), reason="../shared/data/alibaba-gpu-2023 is not available")
def test_openb_last_30_days() -> None:
    wl = load_workload(OPENB, ImageAssigner(default_catalogue(), seed=0), window="30d")
    # 7,355 pods created in the window and the 33 still running when it opens
    assert len(wl.pods) == 7388 and len(wl.nodes) == 1523
    assert sum(1 for p in wl.pods if p.source == "RunningAtStart") == 33
    assert wl.description.endswith("openb_pod_list_default.csv window the last 30d (day 119.3 to 149.3)")
    assert wl.horizon == 30 * 86400 and wl.origin == 12_902_960 - 30 * 86400
    assert all(0 <= p.arrival < wl.horizon for p in wl.pods)
    assert [p.arrival for p in wl.pods] == sorted(p.arrival for p in wl.pods)
    pending = [p for p in wl.pods if p.source == "Pending"]
    assert pending and all(p.duration is not None for p in pending)  # Pending pods replayed too
    assert sum(1 for p in wl.pods if p.duration is None) > 0  # still running at the end of the trace
    images = {p.manifest["spec"]["containers"][0]["image"] for p in wl.pods}
    assert len(images) > 1


@pytest.mark.skipif(not OPENB.exists(), reason="../shared/data/alibaba-gpu-2023 is not available")
def test_openb_whole_trace_and_pod_list_file() -> None:
    assigner = ImageAssigner(default_catalogue(), seed=0)
    wl = load_workload(OPENB, assigner)
    assert len(wl.pods) == 8152 and wl.horizon == 12_902_960
    wl2 = load_workload(OPENB / "openb_pod_list_gpuspec33.csv", assigner, max_pods=50, max_nodes=10)
    assert len(wl2.pods) == 50 and len(wl2.nodes) == 10


def test_openb_missing_files(tmp_path: Path) -> None:
    from kubesched.trace.load import load_openb

    with pytest.raises(FileNotFoundError, match="openb_node_list_all_node.csv"):
        load_openb(tmp_path, ImageAssigner(default_catalogue()))


def test_arrival_scale(assigner: ImageAssigner) -> None:
    wl = load_workload(FIX / "tiny.yaml", assigner).with_arrival_scale(0.5)
    assert [p.arrival for p in wl.pods] == [0.0, 0.5, 1.0, 2.5, 3.0]
    assert [p.duration for p in wl.pods] == [10, 100, 100, 5, 100]
    assert wl.horizon == 10.0 and wl.notes[-1] == "arrival times scaled by 0.5"
    with pytest.raises(ValueError):
        wl.with_arrival_scale(0)


def _openb(tmp_path: Path, rows: list[str]) -> Path:
    (tmp_path / "openb_node_list_all_node.csv").write_text(
        "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,262144,0,\nn1,32000,262144,0,\n"
    )
    (tmp_path / "openb_pod_list_default.csv").write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
        "scheduled_time\n" + "".join(r + "\n" for r in rows)
    )
    return tmp_path


def test_a_window_starts_from_the_pods_running_when_it_opens(tmp_path: Path) -> None:
    trace = _openb(
        tmp_path,
        [
            "old-done,1000,1024,0,0,,LS,Succeeded,0,3000,0",  # ended before the window: left out
            "old-running,1000,1024,0,0,,LS,Running,1000,90000,1000",  # running at 43200: arrives at 0
            "old-ending,1000,1024,0,0,,LS,Running,2000,86400,2000",  # ends inside the window
            "old-pending,1000,1024,0,0,,LS,Pending,3000,,",  # never scheduled: not running
            "new,1000,1024,0,0,,LS,Running,50000,60000,50000",
        ],
    )
    wl = load_workload(trace, ImageAssigner(default_catalogue(), seed=0), window="12h")
    assert wl.origin == 90000 - 43200
    got = [(p.name, p.arrival, p.duration, p.source) for p in wl.pods]
    assert got == [
        ("old-ending", 0.0, 86400 - 46800, "RunningAtStart"),
        ("old-running", 0.0, None, "RunningAtStart"),
        ("new", 50000 - 46800, 10000, "Running"),
    ]
    assert wl.description == f"{trace / 'openb_pod_list_default.csv'} window the last 12h (day 0.5 to 1.0)"
    assert (
        wl.notes[-1] == "2 pods running when the window opens start it (arrival 0, for the rest of their run)"
    )


def test_a_missing_trace_file_is_one_located_input_error(tmp_path: Path) -> None:
    """``load_workload`` names the missing file in a ``KubeschedError`` (the CLI's one error line)
    that is also a ``FileNotFoundError`` for the Python API's callers."""
    from kubesched.errors import KubeschedError, MissingFileError

    assigner = ImageAssigner(default_catalogue())
    with pytest.raises(MissingFileError) as err:
        load_workload(tmp_path, assigner)
    assert isinstance(err.value, KubeschedError) and isinstance(err.value, FileNotFoundError)
    assert str(err.value) == f"trace file {tmp_path / 'nodes.csv'} not found"
    assert err.value.path == str(tmp_path / "nodes.csv")
    with pytest.raises(MissingFileError, match=f"^trace {tmp_path / 'gone.yaml'} not found$"):
        load_workload(tmp_path / "gone.yaml", assigner)


@pytest.mark.parametrize("command", ["replay", "load"])
def test_cli_reports_a_trace_directory_without_its_files_in_one_line(tmp_path: Path, command: str) -> None:
    from click.testing import CliRunner

    from kubesched.cli.main import main

    args = [command, "--trace", str(tmp_path)]
    if command == "load":
        args += ["--kubeconfig", str(tmp_path / "kubeconfig")]
        (tmp_path / "kubeconfig").write_text("apiVersion: v1\nkind: Config\n")
    r = CliRunner().invoke(main, args)
    assert (r.exit_code, r.stderr) == (2, f"error: trace file {tmp_path / 'nodes.csv'} not found\n")
