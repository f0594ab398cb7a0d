"""``kubesched.simulate(...)``: the simulation as a Python call, for notebooks and tests.

>>> import kubesched
>>> sim = kubesched.simulate("examples/cluster.yaml", seed=7)
>>> sim.pods[0].node
'node-a1'

The run is the one ``kubesched simulate`` makes (same queue, cycle, cache and binding on the
embedded cluster, same seed, same result). Per-plugin verdicts are not recorded during the run, so
a 3,000-pod snapshot costs what the table output costs; :meth:`Simulation.explain` and
:meth:`Simulation.to_dict` replay the same input with the same seed, recording only what they
return (the same seed gives the same decisions, so the record is the record of this run).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubesched.config.load import load_config, parse_config
from kubesched.config.types import KubeSchedulerConfiguration
from kubesched.embedded.manifest_input import ObjectsInput, manifests_from
from kubesched.embedded.manifests import Manifest
from kubesched.errors import ConfigError
from kubesched.modes.simulate.report import find_pod, result_dict
from kubesched.modes.simulate.run import PodOutcome, SimulationResult, run_simulation

if TYPE_CHECKING:
    import pandas

__all__ = ["PodExplanation", "Simulation", "simulate"]

ConfigInput = KubeSchedulerConfiguration | dict[str, Any] | str | Path | None


def _config(config: ConfigInput) -> KubeSchedulerConfiguration | None:
    if config is None or isinstance(config, KubeSchedulerConfiguration):
        return config
    if isinstance(config, dict):
        return parse_config(config)
    if isinstance(config, Path) or "\n" not in config:
        return load_config(str(config))
    from kubesched.api.document_file import parse_document

    doc = parse_document(config, "config")  # bounded, as every YAML input; ConfigError naming the line
    if not isinstance(doc, dict):
        raise ConfigError("", "expected a KubeSchedulerConfiguration mapping")
    return parse_config(doc)


def _frame(rows: list[dict[str, Any]]) -> pandas.DataFrame:
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("to_frame() needs pandas: pip install 'kubesched[notebook]'") from None
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class PodExplanation:
    """Why a pod went where it went: its outcome and every recorded attempt.

    ``attempts``: one dict per scheduling attempt, oldest first, in the JSON contract's shape
    (``preFilter``, ``filter`` node -> plugin -> status, ``score``/``normalizedScore``/``finalScore``
    node -> plugin -> int, ``postFilter``, ``selectedNode``, ...).
    """

    namespace: str
    name: str
    status: str
    node: str | None
    message: str
    attempts: list[dict[str, Any]]

    def to_frame(self, attempt: int = -1) -> pandas.DataFrame:
        """One row per node of one attempt (default: the last) with each Filter plugin's verdict
        (``filter:<Plugin>``: ``Success`` or ``Code: reasons``) and each Score plugin's raw,
        normalised and weighted score (``score:<Plugin>``, ``normalized:<Plugin>``,
        ``weighted:<Plugin>``), ``total`` and ``selected``. Needs pandas."""
        if not self.attempts:
            return _frame([])
        a = self.attempts[attempt]
        nodes = list(dict.fromkeys([*a["filter"], *a["score"]]))
        rows = []
        for node in nodes:
            row: dict[str, Any] = {"node": node}
            for plugin, st in a["filter"].get(node, {}).items():
                reasons = ", ".join(st.get("reasons") or [])
                row[f"filter:{plugin}"] = st["code"] + (f": {reasons}" if reasons else "")
            total = 0
            for plugin, raw in a["score"].get(node, {}).items():
                row[f"score:{plugin}"] = raw
                row[f"normalized:{plugin}"] = a["normalizedScore"].get(node, {}).get(plugin)
                weighted = a["finalScore"].get(node, {}).get(plugin, 0)
                row[f"weighted:{plugin}"] = weighted
                total += weighted
            row["total"] = total if a["score"].get(node) else None
            row["selected"] = node == a["selectedNode"]
            rows.append(row)
        return _frame(rows)


class Simulation:
    """The outcome of :func:`simulate`: ``pods`` (one :class:`PodOutcome` per pod that was pending,
    plus pods preempted during the run: ``namespace``, ``name``, ``status``, ``node``, ``message``,
    ``profile``), ``profile``, ``seed``, and the cluster after the run (:meth:`snapshot`)."""

    def __init__(
        self,
        manifests: list[Manifest],
        config: KubeSchedulerConfiguration | None,
        seed: int | None,
        result: SimulationResult,
    ) -> None:
        self._manifests = manifests
        self._config = config
        self.seed = seed
        self._result = result
        self._full: SimulationResult | None = result if seed is None else None
        self.profile = result.profile
        self.pods: list[PodOutcome] = result.pods

    def __repr__(self) -> str:
        counts: dict[str, int] = {}
        for p in self.pods:
            counts[p.status] = counts.get(p.status, 0) + 1
        return f"<Simulation profile={self.profile!r} seed={self.seed} pods={counts}>"

    def pod(self, ref: str) -> PodOutcome:
        """The outcome of ``ns/name`` (or a unique ``name``); raises ``KeyError``."""
        return find_pod(self._result, ref)

    def _recorded(self, record: bool | Callable[[Any], bool]) -> SimulationResult:
        if self._full is not None:
            return self._full
        res = run_simulation(self._manifests, self._config, seed=self.seed, record=record)
        if record is True:
            self._full = res
        return res

    def explain(self, pod: str) -> PodExplanation:
        """Per attempt, per node, per plugin: Filter verdicts and reasons, raw / normalised /
        weighted scores, the selected node. Raises ``KeyError`` for an unknown pod."""
        outcome = self.pod(pod)
        key = f"{outcome.namespace}/{outcome.name}"
        res = self._recorded(lambda p: bool(p.key == key))
        recorded = find_pod(res, key)
        return PodExplanation(
            outcome.namespace,
            outcome.name,
            outcome.status,
            outcome.node,
            outcome.message,
            [r.to_dict() for r in recorded.results],
        )

    def to_dict(self) -> dict[str, Any]:
        """The ``SimulationResult`` document of ``kubesched simulate -o json`` (every attempt)."""
        return result_dict(self._recorded(True))

    def to_frame(self) -> pandas.DataFrame:
        """One row per pod: namespace, name, status, node, message, profile. Needs pandas."""
        return _frame(
            [
                {
                    "namespace": p.namespace,
                    "name": p.name,
                    "status": p.status,
                    "node": p.node,
                    "message": p.message,
                    "profile": p.profile,
                }
                for p in self.pods
            ]
        )

    def snapshot(self) -> list[dict[str, Any]]:
        """Every object of the embedded cluster after the run (what ``--write-snapshot`` writes)."""
        return self._result.cluster.snapshot_objects()


def simulate(objects: ObjectsInput, config: ConfigInput = None, seed: int | None = 0) -> Simulation:
    """Schedule the pending pods of ``objects`` with the real scheduler on an embedded cluster.

    ``objects``: dicts, YAML/JSON text, file or directory paths, or ``kubernetes`` client models
    (alone or in a list); ``config``: a ``KubeSchedulerConfiguration`` (parsed, a dict, YAML text
    or a path; None: the upstream default profile); ``seed``: tie-breaking seed (None: random, and
    then every attempt is recorded during the run). Raises
    :class:`~kubesched.errors.ManifestError` for a malformed non-Pod object (malformed pods become
    ``Error`` outcomes) and :class:`~kubesched.errors.ConfigError` for a bad config.
    """
    manifests = manifests_from(objects)
    cfg = _config(config)
    result = run_simulation(manifests, cfg, seed=seed, record=seed is None)
    return Simulation(manifests, cfg, seed, result)
