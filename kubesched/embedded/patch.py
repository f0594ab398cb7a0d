"""Status patches as the API server applies them to ``.../status`` subresources.

``merge_status_patch`` is the JSON merge patch (RFC 7386) with the one strategic-merge rule the
scheduler relies on: ``conditions`` merge by ``type`` (``patchMergeKey: type`` on
``PodStatus.Conditions`` / ``NodeStatus.Conditions``). ``set_condition`` is
``podutil.UpdatePodCondition`` (``pkg/api/v1/pod/util.go``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["merge_status_patch", "set_condition"]

Obj = dict[str, Any]


def _merge_patch(target: Mapping[str, Any] | None, patch: Mapping[str, Any]) -> Obj:
    """RFC 7386 JSON merge patch of mapping ``patch`` onto ``target`` (new dict; inputs untouched)."""
    result: Obj = dict(target) if isinstance(target, Mapping) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        elif isinstance(v, Mapping):
            result[k] = _merge_patch(result.get(k), v)
        else:
            result[k] = v
    return result


def merge_status_patch(status: Mapping[str, Any] | None, patch: Mapping[str, Any]) -> Obj:
    """``status`` after applying ``patch``: JSON merge patch, except that ``conditions`` is merged
    by ``type`` (strategic merge patch, ``patchMergeKey: type``): a patch condition updates the
    fields of the existing one of that type or is appended; ``{"type": T, "$patch": "delete"}``
    removes it. Returns a new dict; inputs are not modified."""
    rest = {k: v for k, v in patch.items() if k != "conditions"}
    result = _merge_patch(status, rest)
    if "conditions" in patch:
        conds = patch["conditions"]
        if conds is None:
            result.pop("conditions", None)
        else:
            merged: list[Obj] = list((status or {}).get("conditions") or [])
            for item in conds:
                ctype = item.get("type")
                if item.get("$patch") == "delete":
                    merged = [c for c in merged if c.get("type") != ctype]
                    continue
                for i, cond in enumerate(merged):
                    if cond.get("type") == ctype:
                        merged[i] = _merge_patch(cond, item)
                        break
                else:
                    merged.append(_merge_patch(None, item))
            result["conditions"] = merged
    return result


def set_condition(conditions: list[Obj] | None, condition: Obj, now: str) -> list[Obj]:
    """``podutil.UpdatePodCondition``: replace (or append) the condition of the same type with
    ``condition`` + ``lastTransitionTime`` (the old one's if the status is unchanged)."""
    new = {**condition, "lastTransitionTime": now}
    out = list(conditions or [])
    for i, old in enumerate(out):
        if old.get("type") == condition["type"]:
            if old.get("status") == condition.get("status") and "lastTransitionTime" in old:
                new["lastTransitionTime"] = old["lastTransitionTime"]
            out[i] = new
            return out
    out.append(new)
    return out
