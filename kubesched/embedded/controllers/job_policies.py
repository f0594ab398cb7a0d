"""A Job's pod failure policy, success policy and completion-index sets, as upstream's Job
controller evaluates them: ``pkg/controller/job/pod_failure_policy.go: matchPodFailurePolicy``
(``matchOnExitCodes``, ``matchOnPodConditions``), ``success_policy.go: matchSuccessPolicy``
(``matchSucceededIndexesRule``) and ``indexed_job_utils.go: parseIndexesFromString``.

Shapes are the ``batch/v1`` fields as dicts: ``spec.podFailurePolicy.rules[]`` with ``action``
(``FailJob``, ``Ignore``, ``Count``, ``FailIndex``) and either ``onExitCodes``
(``containerName``, ``operator`` ``In``/``NotIn``, ``values``) or ``onPodConditions``
(``[{type, status}]``); ``spec.successPolicy.rules[]`` with ``succeededIndexes`` (``"0-2,5"``)
and/or ``succeededCount``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["PolicyMatch", "match_pod_failure_policy", "match_success_policy", "parse_indexes"]

FAIL_JOB = "FailJob"
IGNORE = "Ignore"
COUNT = "Count"
FAIL_INDEX = "FailIndex"


@dataclass(frozen=True, slots=True)
class PolicyMatch:
    """How a failed pod counts: ``fail_job_message`` when it matched a ``FailJob`` rule,
    ``count_failed`` (False when it matched ``Ignore``), and the ``action`` matched (None: no rule)."""

    fail_job_message: str | None
    count_failed: bool
    action: str | None


_NO_MATCH = PolicyMatch(None, True, None)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _terminated_exit_code(status: Mapping[str, Any]) -> int | None:
    state = status.get("state")
    terminated = state.get("terminated") if isinstance(state, Mapping) else None
    if not isinstance(terminated, Mapping):
        return None
    code = terminated.get("exitCode")
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def _match_on_exit_codes(pod_status: Mapping[str, Any], req: Mapping[str, Any]) -> tuple[str, int] | None:
    """``matchOnExitCodes``: the first terminated container (containers, then init containers)
    with a non-zero exit code that the requirement matches, as (name, exit code)."""
    values = [v for v in _list(req.get("values")) if isinstance(v, int)]
    operator = req.get("operator")
    for field in ("containerStatuses", "initContainerStatuses"):
        for cs in _list(pod_status.get(field)):
            if not isinstance(cs, Mapping):
                continue
            code = _terminated_exit_code(cs)
            if code is None or code == 0:
                continue
            if req.get("containerName") not in (None, cs.get("name")):
                continue
            if (operator == "In" and code in values) or (operator == "NotIn" and code not in values):
                return str(cs.get("name")), code
    return None


def _match_on_pod_conditions(pod_status: Mapping[str, Any], patterns: list[Any]) -> str | None:
    """``matchOnPodConditions``: the type of the first pod condition a pattern matches."""
    for cond in _list(pod_status.get("conditions")):
        if not isinstance(cond, Mapping):
            continue
        for pattern in patterns:
            if (
                isinstance(pattern, Mapping)
                and cond.get("type") == pattern.get("type")
                and cond.get("status") == pattern.get("status", "True")
            ):
                return str(cond.get("type"))
    return None


def match_pod_failure_policy(policy: Mapping[str, Any] | None, pod: Mapping[str, Any]) -> PolicyMatch:
    """``matchPodFailurePolicy`` of a failed ``pod``: the first rule that matches decides. The
    ``FailJob`` messages are upstream's: ``Container main for pod ns/name failed with exit code 42
    matching FailJob rule at index 0`` and ``Pod ns/name has condition DisruptionTarget matching
    FailJob rule at index 1``."""
    if not isinstance(policy, Mapping):
        return _NO_MATCH
    status = pod.get("status")
    pod_status: Mapping[str, Any] = status if isinstance(status, Mapping) else {}
    meta = pod.get("metadata") or {}
    ns, name = meta.get("namespace") or "default", meta.get("name")
    for index, rule in enumerate(_list(policy.get("rules"))):
        if not isinstance(rule, Mapping):
            continue
        action = rule.get("action")
        on_exit = rule.get("onExitCodes")
        if isinstance(on_exit, Mapping):
            matched = _match_on_exit_codes(pod_status, on_exit)
            if matched is None:
                continue
            message = (
                f"Container {matched[0]} for pod {ns}/{name} failed with exit code {matched[1]} "
                f"matching {action} rule at index {index}"
            )
        elif rule.get("onPodConditions") is not None:
            cond = _match_on_pod_conditions(pod_status, _list(rule.get("onPodConditions")))
            if cond is None:
                continue
            message = f"Pod {ns}/{name} has condition {cond} matching {action} rule at index {index}"
        else:
            continue
        if action == IGNORE:
            return PolicyMatch(None, False, IGNORE)
        if action == COUNT:
            return PolicyMatch(None, True, COUNT)
        if action == FAIL_JOB:
            return PolicyMatch(message, True, FAIL_JOB)
        if action == FAIL_INDEX:
            return PolicyMatch(None, True, FAIL_INDEX)
    return _NO_MATCH


def parse_indexes(text: str, completions: int) -> set[int]:
    """``parseIndexesFromString``: ``"0-2,5"`` as a set of indexes below ``completions``; a
    malformed interval ends the parse (the indexes read so far are kept)."""
    out: set[int] = set()
    for part in text.split(","):
        if not part:
            continue
        first, sep, last = part.partition("-")
        try:
            lo = int(first)
            hi = int(last) if sep else lo
        except ValueError:
            break
        out.update(range(max(lo, 0), min(hi, completions - 1) + 1))
    return out


def match_success_policy(
    policy: Mapping[str, Any] | None, completions: int, succeeded: Iterable[int]
) -> str | None:
    """``matchSuccessPolicy``: ``Matched rules at index N`` for the first rule the succeeded
    indexes satisfy (all of ``succeededIndexes``, or ``succeededCount`` of them; or, without
    ``succeededIndexes``, ``succeededCount`` succeeded indexes in all), else None."""
    done = set(succeeded)
    if not isinstance(policy, Mapping) or not done:
        return None
    for index, rule in enumerate(_list(policy.get("rules"))):
        if not isinstance(rule, Mapping):
            continue
        count = rule.get("succeededCount")
        if rule.get("succeededIndexes") is not None:
            required = parse_indexes(str(rule["succeededIndexes"]), completions)
            if not required:
                continue
            contains = len(required & done)
            if contains == len(required) or (isinstance(count, int) and contains >= count):
                return f"Matched rules at index {index}"
        elif isinstance(count, int) and len(done) >= count:
            return f"Matched rules at index {index}"
    return None
