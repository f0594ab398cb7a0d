"""NodeNumber: the example score plugin of kube-scheduler-simulator and mini-kube-scheduler
(not an upstream plugin). Score = 10 when the last character of the pod name and of the node
name are the same digit, else 0; with ``reverse: true`` a match scores 0 and a mismatch 10."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic.dataclasses import dataclass

from kubesched.framework import ARGS_CONFIG, CycleState, NodeInfo, Pod, PreScorePlugin, ScorePlugin, Status

_STATE_KEY = "PreScoreNodeNumber"


@dataclass(config=ARGS_CONFIG)
class NodeNumberArgs:
    """``reverse``: score mismatches instead of matches."""

    reverse: bool = False


class NodeNumber(PreScorePlugin, ScorePlugin):
    """PreScore stores the pod name's last digit; Score compares it with the node name's."""

    NAME = "NodeNumber"
    Args = NodeNumberArgs

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(_STATE_KEY, pod.name[-1] if pod.name[-1:].isdigit() else None)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        digit = state.read(_STATE_KEY)
        match = digit is not None and node_info.name[-1:] == digit
        if self.args.reverse:
            return (0 if match else 10), None
        return (10 if match else 0), None
