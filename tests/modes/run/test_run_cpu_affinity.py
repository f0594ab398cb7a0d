"""``kubesched run --cpu-affinity``: every thread of the process on one allowed CPU, moved to an
idler CPU when other tasks crowd it; a fixed CPU; or the kernel's placement."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from run_support import Cluster, Replica, scheduler_config

from kubesched.cli.main import main
from kubesched.errors import ConfigError
from kubesched.modes.run.cpu_affinity import (
    CpuAffinity,
    CpuTimes,
    _cpu_list,
    current_cpu,
    parse_cpu_affinity,
    read_cpu_times,
)


class Fake:
    """Recorded system calls: ``pins`` is every ``(tid, cpus)`` set; ``times`` the readings to
    return. As the kernel's, the allowed set read back is the calling thread's (tid 10) affinity,
    which a pin changes."""

    def __init__(self, allowed: set[int], here: int | None = 1, tids: tuple[int, ...] = (10, 11, 12)) -> None:
        self.allowed = set(allowed)
        self.here = here
        self.tids = list(tids)
        self.pins: list[tuple[int, set[int]]] = []
        self.times: list[CpuTimes] = []

    def set_affinity(self, tid: int, cpus: set[int]) -> None:
        self.pins.append((tid, cpus))
        if tid == 10:
            self.allowed = set(cpus)

    def affinity(self, mode: str | int, **kw: float) -> CpuAffinity:
        return CpuAffinity(
            mode,
            allowed=lambda: self.allowed,
            set_affinity=self.set_affinity,
            thread_ids=lambda: self.tids,
            read_times=lambda: self.times.pop(0),
            here=lambda: self.here,
            ticks_per_second=100,
            **kw,
        )


def _times(at: float, busy: dict[int, int], idle: dict[int, int], own: int) -> CpuTimes:
    return CpuTimes(busy, idle, own, at)


ZERO = _times(0.0, {0: 0, 1: 0}, {0: 0, 1: 0}, 0)


def test_auto_pins_every_thread_to_the_cpu_it_starts_on() -> None:
    f = Fake({0, 1, 2, 3}, here=2)
    f.times = [ZERO]
    a = f.affinity("auto")
    assert a.start() == 2
    assert f.pins == [(10, {2}), (11, {2}), (12, {2})]
    assert a.cpu == 2


def test_restore_gives_every_thread_the_cpus_it_had() -> None:
    f = Fake({0, 1, 2, 3}, here=2)
    f.times = [ZERO]
    a = f.affinity("auto")
    a.start()
    f.pins.clear()
    f.tids.append(13)  # a thread started since
    a.restore()
    assert f.pins == [(10, {0, 1, 2, 3}), (11, {0, 1, 2, 3}), (12, {0, 1, 2, 3}), (13, {0, 1, 2, 3})]
    assert (a.cpu, a.step()) == (None, None)


def test_auto_takes_the_last_allowed_cpu_when_the_current_one_is_unknown() -> None:
    f = Fake({0, 1, 2}, here=None)
    f.times = [ZERO]
    assert f.affinity("auto").start() == 2


@pytest.mark.parametrize(("mode", "allowed"), [("auto", {3}), ("none", {0, 1})])
def test_one_allowed_cpu_or_none_leaves_the_threads_alone(mode: str, allowed: set[int]) -> None:
    f = Fake(allowed)
    a = f.affinity(mode)
    assert a.start() is None
    assert (f.pins, a.cpu, a.step()) == ([], None, None)


def test_a_fixed_cpu_is_pinned_and_never_moved() -> None:
    f = Fake({0, 1})
    f.times = [ZERO, _times(5.0, {0: 500, 1: 500}, {0: 0, 1: 0}, 0)]
    a = f.affinity(0)
    assert a.start() == 0
    assert f.pins == [(10, {0}), (11, {0}), (12, {0})]
    assert a.step() is None


def test_a_fixed_cpu_outside_the_allowed_set_is_refused() -> None:
    with pytest.raises(ConfigError) as e:
        Fake({0, 1, 2, 3, 6}).affinity(5).start()
    assert str(e.value) == "--cpu-affinity: CPU 5 is not one this process may run on (0-3,6)"


def test_crowded_cpu_moves_every_thread_to_the_idlest_cpu() -> None:
    f = Fake({0, 1, 2}, here=1)
    # 5 s at 100 ticks/s = 500 ticks per CPU: on CPU 1 others used 480 - 100 = 380 (76 %);
    # CPU 0 idled 490 (98 %), CPU 2 idled 495 (99 %): the idlest wins
    f.times = [
        _times(0.0, {0: 0, 1: 0, 2: 0}, {0: 0, 1: 0, 2: 0}, 0),
        _times(5.0, {0: 10, 1: 480, 2: 5}, {0: 490, 1: 20, 2: 495}, 100),
        _times(10.0, {0: 20, 1: 960, 2: 100}, {0: 980, 1: 40, 2: 900}, 200),
    ]
    a = f.affinity("auto")
    a.start()
    assert f.allowed == {1}  # what sched_getaffinity answers once pinned
    f.pins.clear()
    assert a.step() == 2
    assert f.pins == [(10, {2}), (11, {2}), (12, {2})]
    assert (a.cpu, a.moves) == (2, 1)
    # on CPU 2 others used 95 - 100 < 0: nothing crowds it
    assert a.step() is None


def test_a_cpu_taken_entirely_by_others_is_left() -> None:
    f = Fake({0, 1}, here=1)
    f.times = [ZERO, _times(5.0, {0: 0, 1: 500}, {0: 500, 1: 0}, 0)]  # others 100 % of CPU 1, CPU 0 idle
    a = f.affinity("auto")
    a.start()
    assert a.step() == 0


@pytest.mark.parametrize(
    ("busy1", "own", "idle0"),
    [
        (480, 240, 500),  # others 48 %: not crowded
        (400, 100, 250),  # others 60 % leave 40 %; CPU 0 idles 50 %, not more than 40 % + 20 %
    ],
)
def test_no_move_below_the_thresholds(busy1: int, own: int, idle0: int) -> None:
    f = Fake({0, 1}, here=1)
    f.times = [ZERO, _times(5.0, {0: 500 - idle0, 1: busy1}, {0: idle0, 1: 500 - busy1}, own)]
    a = f.affinity("auto")
    a.start()
    f.pins.clear()
    assert (a.step(), f.pins, a.cpu) == (None, [], 1)


@settings(max_examples=300, deadline=None)
@given(cpus=st.lists(st.integers(0, 7), min_size=2, max_size=8, unique=True), data=st.data())
def test_a_move_is_to_an_allowed_cpu_idler_than_the_crowding(cpus: list[int], data: st.DataObject) -> None:
    allowed = set(cpus)
    here = data.draw(st.sampled_from(sorted(allowed)))
    span = 500
    busy = {c: data.draw(st.integers(0, span)) for c in range(8)}
    own = data.draw(st.integers(0, busy[here]))
    f = Fake(allowed, here=here)
    f.times = [
        _times(0.0, dict.fromkeys(range(8), 0), dict.fromkeys(range(8), 0), 0),
        _times(5.0, busy, {c: span - b for c, b in busy.items()}, own),
    ]
    a = f.affinity("auto")
    assert a.start() == here
    moved = a.step()
    others = (busy[here] - own) / span
    best_idle = max((span - busy[c]) / span for c in allowed if c != here)
    if moved is None:
        assert others <= 0.5 or best_idle <= 1 - others + 0.2
        assert a.cpu == here
    else:
        assert moved in allowed and moved != here
        assert others > 0.5 and (span - busy[moved]) / span == best_idle > 1 - others + 0.2
        assert a.cpu == moved and f.pins[-1] == (12, {moved})


@pytest.mark.parametrize(("value", "parsed"), [("auto", "auto"), ("None", "none"), ("3", 3), (" 0 ", 0)])
def test_flag_values(value: str, parsed: str | int) -> None:
    assert parse_cpu_affinity(value) == parsed


@pytest.mark.parametrize("value", ["fast", "", "-1", "1,2", "0x1", "+1", "\u00b2", "\u0661"])
def test_bad_flag_value_is_refused_by_name(value: str) -> None:
    res = CliRunner().invoke(main, ["run", f"--cpu-affinity={value}"])
    assert res.exit_code == 2
    assert res.output == f'error: --cpu-affinity: must be "auto", "none" or a CPU number, got "{value}"\n'


def test_a_cpu_not_allowed_is_refused_before_anything_runs(tmp_path: Path) -> None:
    out = tmp_path / "effective.yaml"
    res = CliRunner().invoke(main, ["run", "--cpu-affinity=4096", "--write-config-to", str(out)])
    assert res.exit_code == 2
    assert res.output == (
        f"error: --cpu-affinity: CPU 4096 is not one this process may run on "
        f"({_cpu_list(os.sched_getaffinity(0))})\n"
    )
    assert not out.exists()


def test_cpu_list_format() -> None:
    assert [_cpu_list(x) for x in ([0, 1, 2, 3, 6], [5], [1, 3], [])] == ["0-3,6", "5", "1,3", ""]


def test_readings_of_this_machine() -> None:
    t = read_cpu_times()
    allowed = os.sched_getaffinity(0)
    assert allowed <= set(t.busy) == set(t.idle)
    assert t.own > 0 or sum(os.times()[:2]) < 0.02
    assert current_cpu() in allowed


def _allowed_lists(pid: int) -> set[str]:
    out = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        for line in Path(f"/proc/{pid}/task/{tid}/status").read_text().splitlines():
            if line.startswith("Cpus_allowed_list:"):
                out.add(line.split(":", 1)[1].strip())
    return out


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
@pytest.mark.parametrize("flag", ["--cpu-affinity=auto", "--cpu-affinity=none"])
def test_run_threads_share_one_cpu(cluster: Cluster, replicas: list[Replica], flag: str) -> None:
    cluster.add_nodes(1)
    r = Replica(cluster, scheduler_config(cluster.tmp, cluster.namespace), "--leader-elect=false", flag)
    replicas.append(r)
    r.wait_ready()
    cluster.create_pod("p")
    assert cluster.wait_bound(["p"]) == {"p": "node-0"}
    lists = _allowed_lists(r.proc.pid)
    if flag.endswith("none"):
        assert lists == {_cpu_list(os.sched_getaffinity(0))}
        assert (
            f'"Scheduler threads placed by the kernel" allowed="{_cpu_list(os.sched_getaffinity(0))}" '
            'cpuAffinity="none"'
        ) in r.log()
    else:
        assert len(lists) == 1 and next(iter(lists)).isdigit()
        assert int(next(iter(lists))) in os.sched_getaffinity(0)
        assert f'"Scheduler threads kept on one CPU" cpu={next(iter(lists))} allowed="' in r.log()
