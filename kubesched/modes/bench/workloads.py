"""Benchmark workloads in the shape of upstream ``scheduler_perf`` config files
(``test/integration/scheduler_perf/config/performance-config.yaml``).

A file is a list of **test cases**: ``name``, optional ``defaultPodTemplatePath``, a
``workloadTemplate`` (list of ops) and ``workloads`` (``name``, ``params``, ``threshold``).
Ops: ``createNodes`` (``count``/``countParam``, ``nodeTemplatePath``, ``labelNodePrepareStrategy``
``{labelKey, labelValues}`` (values assigned round-robin), ``uniqueNodeLabelStrategy`` ``{labelKey}``),
``createNamespaces`` (``prefix``, ``count``), ``createPods`` (``count``/``countParam``,
``podTemplatePath``, ``namespace``, ``collectMetrics``), ``churn`` (``mode`` create|recreate,
``templatePaths``, ``intervalMilliseconds``, ``number``, ``namespace``), ``barrier`` and ``sleep``
(``duration``, e.g. ``5s``; advances the virtual clock). ``countParam: $x`` takes the workload's
``params.x``.

The DRA ops of ``test/integration/scheduler_perf/dra/performance-config.yaml``:
``createResourceDriver`` (``driverName``, ``nodes`` (a glob of node names),
``maxClaimsPerNode``/``maxClaimsPerNodeParam``: one ResourceSlice per matching node with that
many devices), ``createAny`` (``templatePath``, ``namespace``, ``count``/``countParam``, default 1;
``{{.Index}}`` in ``metadata.name`` becomes the object's index), ``allocResourceClaims``
(``namespace``: every claim there gets an allocation, as if scheduled earlier), and
``createPods`` with ``steadyState: true`` and ``duration``/``durationParam`` (``count`` pods exist
at any time: each one that gets bound is deleted and replaced, until the duration of wall time
has passed). Template paths are relative to ``kubesched/modes/bench/templates`` (or absolute).

Errors in a file raise :class:`~kubesched.errors.ConfigError` naming the field path.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from kubesched.api.document_file import read_document
from kubesched.errors import ConfigError

OPCODES = (
    "createNodes",
    "createNamespaces",
    "createPods",
    "churn",
    "barrier",
    "sleep",
    "createResourceDriver",
    "createAny",
    "allocResourceClaims",
)
#: ops that need the embedded ResourceClaim controller (claims made from templates, released)
DRA_OPCODES = ("createResourceDriver", "createAny", "allocResourceClaims")


@dataclass(slots=True)
class Op:
    """One op of a workload template, with ``count`` resolved from the params."""

    opcode: str
    count: int = 0
    template: dict[str, Any] | None = None
    templates: list[dict[str, Any]] = field(default_factory=list)
    namespace: str | None = None
    collect_metrics: bool = False
    label_key: str | None = None
    label_values: list[str] = field(default_factory=list)
    unique_label_key: str | None = None
    prefix: str = "namespace"
    mode: str = "create"
    interval_seconds: float = 0.5
    duration_seconds: float = 0.0
    driver_name: str = ""
    node_glob: str = "*"
    steady_state: bool = False


@dataclass(slots=True)
class BenchWorkload:
    """A runnable workload: ``name`` is ``TestCase/Workload``; ``threshold`` in pods/s (or None)."""

    name: str
    ops: list[Op]
    params: dict[str, int]
    threshold: float | None

    @property
    def nodes(self) -> int:
        """Nodes created by the workload."""
        return sum(op.count for op in self.ops if op.opcode == "createNodes")

    @property
    def uses_dra(self) -> bool:
        """Whether an op needs the ResourceClaim controller (:data:`DRA_OPCODES`)."""
        return any(op.opcode in DRA_OPCODES for op in self.ops)

    @property
    def measured_pods(self) -> int:
        """Pods created by ``collectMetrics`` ops."""
        return sum(op.count for op in self.ops if op.opcode == "createPods" and op.collect_metrics)


def templates_dir() -> Path:
    """The directory of the shipped node/pod templates."""
    return Path(str(resources.files("kubesched.modes.bench") / "templates"))


def _load_template(path: str, where: str, base: Path) -> dict[str, Any]:
    p = Path(path)
    if not p.is_absolute():
        p = base / p
    try:
        obj = read_document(p)
    except ConfigError as e:
        raise ConfigError(where, f"template {path!r}: {e.message}") from None
    if not isinstance(obj, dict):
        raise ConfigError(where, f"template {path!r} must be a mapping")
    return obj


def _param(raw: dict[str, Any], key: str, params: dict[str, Any], where: str, default: Any) -> Any:
    """``raw[key]``, or the workload parameter ``raw[key + "Param"]`` names (``$name``)."""
    if key + "Param" in raw:
        ref = raw[key + "Param"]
        if not isinstance(ref, str) or not ref.startswith("$"):
            raise ConfigError(f"{where}.{key}Param", "must look like $paramName")
        if ref[1:] not in params:
            raise ConfigError(f"{where}.{key}Param", f"parameter {ref[1:]!r} not set by the workload")
        return params[ref[1:]]
    return raw.get(key, default)


def _count(
    raw: dict[str, Any], params: dict[str, Any], where: str, key: str = "count", default: int = 0
) -> int:
    v = _param(raw, key, params, where, default)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise ConfigError(f"{where}.{key}", "must be a non-negative integer")
    return v


def _duration(v: Any, where: str) -> float:
    if isinstance(v, int | float) and not isinstance(v, bool):
        return float(v)
    from kubesched.config.duration import parse_go_duration

    try:
        return float(parse_go_duration(str(v)))
    except (ValueError, TypeError):
        raise ConfigError(where, f"invalid duration {v!r}") from None


def _op(raw: Any, params: dict[str, Any], default_pod: str | None, where: str, base: Path) -> Op:
    if not isinstance(raw, dict):
        raise ConfigError(where, "must be a mapping")
    code = raw.get("opcode")
    if code not in OPCODES:
        raise ConfigError(f"{where}.opcode", f"unknown opcode {code!r} (one of {', '.join(OPCODES)})")
    op = Op(code)
    if code in ("createNodes", "createPods", "createNamespaces"):
        op.count = _count(raw, params, where)
    if code == "createNodes":
        op.template = _load_template(
            raw.get("nodeTemplatePath", "node-default.yaml"), f"{where}.nodeTemplatePath", base
        )
        lab = raw.get("labelNodePrepareStrategy")
        if lab is not None:
            if not isinstance(lab, dict) or not lab.get("labelKey") or not lab.get("labelValues"):
                raise ConfigError(f"{where}.labelNodePrepareStrategy", "needs labelKey and labelValues")
            op.label_key = str(lab["labelKey"])
            op.label_values = [str(v) for v in lab["labelValues"]]
        uniq = raw.get("uniqueNodeLabelStrategy")
        if uniq is not None:
            if not isinstance(uniq, dict) or not uniq.get("labelKey"):
                raise ConfigError(f"{where}.uniqueNodeLabelStrategy", "needs labelKey")
            op.unique_label_key = str(uniq["labelKey"])
    elif code == "createPods":
        path = raw.get("podTemplatePath", default_pod)
        if path is None:
            raise ConfigError(f"{where}.podTemplatePath", "required (no defaultPodTemplatePath)")
        op.template = _load_template(path, f"{where}.podTemplatePath", base)
        op.namespace = raw.get("namespace")
        op.collect_metrics = bool(raw.get("collectMetrics", False))
        op.steady_state = bool(raw.get("steadyState", False))
        if op.steady_state:
            op.duration_seconds = _duration(_param(raw, "duration", params, where, 0), f"{where}.duration")
            if not op.duration_seconds > 0:
                raise ConfigError(f"{where}.duration", "a steadyState createPods needs a duration > 0")
    elif code == "createResourceDriver":
        op.driver_name = str(raw.get("driverName") or "")
        if not op.driver_name:
            raise ConfigError(f"{where}.driverName", "required")
        op.node_glob = str(raw.get("nodes") or "*")
        op.count = _count(raw, params, where, "maxClaimsPerNode")
    elif code == "createAny":
        if not raw.get("templatePath"):
            raise ConfigError(f"{where}.templatePath", "required")
        op.template = _load_template(str(raw["templatePath"]), f"{where}.templatePath", base)
        op.namespace = raw.get("namespace")
        op.count = _count(raw, params, where, default=1)
    elif code == "allocResourceClaims":
        op.namespace = raw.get("namespace")
        if not op.namespace:
            raise ConfigError(f"{where}.namespace", "required")
    elif code == "createNamespaces":
        op.prefix = str(raw.get("prefix", "namespace"))
    elif code == "churn":
        op.mode = str(raw.get("mode", "create"))
        if op.mode not in ("create", "recreate"):
            raise ConfigError(f"{where}.mode", f"unknown churn mode {op.mode!r} (create or recreate)")
        paths = raw.get("templatePaths") or []
        op.templates = [_load_template(p, f"{where}.templatePaths[{i}]", base) for i, p in enumerate(paths)]
        op.interval_seconds = float(raw.get("intervalMilliseconds") or 500) / 1000.0
        op.count = int(raw.get("number", 0))
        op.namespace = raw.get("namespace")
    elif code == "sleep":
        op.duration_seconds = _duration(raw.get("duration", 0), f"{where}.duration")
    return op


def load_workloads(path: str | Path | None = None) -> list[BenchWorkload]:
    """Every workload of a config file (default: the shipped ``performance-config.yaml``)."""
    if path is None:
        path = Path(str(resources.files("kubesched.modes.bench") / "workloads" / "performance-config.yaml"))
    path = Path(path)
    raw = read_document(path)  # ConfigError located at the file, with the line
    if not isinstance(raw, list):
        raise ConfigError(str(path), "must be a list of test cases")
    base = templates_dir()
    out: list[BenchWorkload] = []
    for i, tc in enumerate(raw):
        where = f"[{i}]"
        if not isinstance(tc, dict) or not tc.get("name"):
            raise ConfigError(f"{where}.name", "required")
        ops_raw = tc.get("workloadTemplate")
        if not isinstance(ops_raw, list):
            raise ConfigError(f"{where}.workloadTemplate", "must be a list of ops")
        for j, w in enumerate(tc.get("workloads") or []):
            wwhere = f"{where}.workloads[{j}]"
            if not isinstance(w, dict) or not w.get("name"):
                raise ConfigError(f"{wwhere}.name", "required")
            params = dict(w.get("params") or {})
            ops = [
                _op(
                    copy.deepcopy(o),
                    params,
                    tc.get("defaultPodTemplatePath"),
                    f"{where}.workloadTemplate[{k}]",
                    base,
                )
                for k, o in enumerate(ops_raw)
            ]
            thr = w.get("threshold")
            out.append(
                BenchWorkload(
                    f"{tc['name']}/{w['name']}", ops, params, float(thr) if thr is not None else None
                )
            )
    return out


def select(workloads: list[BenchWorkload], names: list[str]) -> list[BenchWorkload]:
    """Workloads named exactly, or all of a test case when a name has no ``/``. Raises
    :class:`ConfigError` for an unknown name."""
    if not names:
        return workloads
    out: list[BenchWorkload] = []
    for n in names:
        hit = [w for w in workloads if w.name == n or w.name.split("/")[0] == n]
        if not hit:
            raise ConfigError("WORKLOAD", f"unknown workload {n!r} (see kubesched bench --list)")
        out.extend(w for w in hit if w not in out)
    return out
