"""A pod a plugin keeps failing on with an error does not keep a replay going: once nothing but
its backoff retries is left, and no cluster event came since its last attempt, the run is over;
every other pod is served (``Scheduler.retries_would_repeat``)."""

from __future__ import annotations

from pathlib import Path

from kubesched.api.yaml_limits import safe_load
from kubesched.config.load import parse_config
from kubesched.images.assign import ImageAssigner
from kubesched.images.catalogue import load_catalogue
from kubesched.modes.replay.run import run_replay
from kubesched.trace.load import load_workload
from tests.modes.simulate.test_simulate_plugin_errors import CONFIG, scratch_plugin

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "replay"
TRACE = """horizon: 20
nodes:
  - {name: n1, cpu: "4", memory: 8Gi}
pods:
  - name: p1
    arrival: 0
    duration: 5
    template:
      spec:
        containers: [{name: main, image: example.com/app-a:1}]
  - name: odd
    arrival: 1
    duration: 5
    template:
      metadata: {annotations: {example.com/scratch: "huge"}}
      spec:
        containers: [{name: main, image: example.com/app-a:1}]
"""


#: the out-of-tree ``Scratch`` PreFilter plugin installed for every test here (autouse)
__all__ = ["scratch_plugin"]


def test_replay_ends_when_only_failing_retries_are_left(tmp_path: Path) -> None:
    trace = tmp_path / "trace.yaml"
    trace.write_text(TRACE)
    catalogue = load_catalogue(str(FIXTURES / "catalogue.yaml"))
    workload = load_workload(str(trace), ImageAssigner(catalogue))
    result = run_replay(workload, parse_config(safe_load(CONFIG)), catalogue=catalogue)
    # p1 is bound once; odd fails at 1 s and is retried while p1's kubelet events come in (each a
    # cluster event), once more after p1 ended, and then the run stops
    assert result.attempts == 5
    assert result.end_time == 11.0
