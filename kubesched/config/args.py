"""Decoding of plugin args (``profiles[].pluginConfig[].args``) into plugin-declared dataclasses.

Convention for plugin modules (upstream ``pkg/scheduler/apis/config/v1/types_pluginargs.go`` names)::

    from pydantic.dataclasses import dataclass
    from kubesched.config.args import ARGS_CONFIG

    @dataclass(config=ARGS_CONFIG)
    class ResourceSpec:
        name: str
        weight: int = 1

    @dataclass(config=ARGS_CONFIG)
    class NodeResourcesFitArgs:
        ignored_resources: list[str] = field(default_factory=list)       # file key: ignoredResources
        scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)

* Fields are snake_case; the file keys are their camelCase form (``ARGS_CONFIG`` has a camelCase
  alias generator). For a key that is not the plain camelCase of its field (acronyms such as
  ``enableHTTPS``), give the field an explicit ``pydantic.Field(alias=...)``.
* Every field needs a default (upstream defaulting): ``decode_args(T, None, path)`` must give the
  default args for a plugin without a ``pluginConfig`` entry.
* Decoding is strict and JSON-shaped (as upstream's strict decoder): unknown keys are errors, no
  ``"1"`` -> 1 coercion; str-valued ``Enum``/``Literal`` fields accept their string values; durations
  use :data:`kubesched.config.duration.GoDuration`. A ``null`` value means "unset" (the default).
* Range checks belong in the dataclass (``pydantic.Field(ge=1, le=100)`` or ``__post_init__`` /
  field validators raising ``ValueError("...")``); the message is reported under the field path.
* The ``apiVersion``/``kind`` keys that real args objects carry are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, TypeVar

from pydantic import ConfigDict, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from kubesched.config.field_path import config_error_from_validation
from kubesched.config.types import KubeSchedulerProfile
from kubesched.errors import ConfigError

T = TypeVar("T")

ARGS_CONFIG: Final = ConfigDict(
    alias_generator=to_camel,
    populate_by_name=True,
    extra="forbid",
    strict=True,
)
"""pydantic config every plugin args dataclass must use: camelCase aliases, snake_case names also
accepted from Python, unknown keys rejected, strict types."""

_TYPE_META_KEYS: Final = frozenset({"apiVersion", "kind"})


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}


def _adapter(args_type: type[Any]) -> TypeAdapter[Any]:
    adapter = _ADAPTERS.get(args_type)
    if adapter is None:
        adapter = _ADAPTERS[args_type] = TypeAdapter(args_type)
    return adapter


def drop_nulls(value: Any) -> Any:
    """Recursively remove mapping entries whose value is ``None`` (a JSON ``null`` leaves a Go field
    at its zero value / unset, so the default applies). List items are kept as they are."""
    if isinstance(value, Mapping):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value


def decode_args(args_type: type[T], raw: Mapping[str, Any] | None, path: str) -> T:
    """Decode a raw camelCase args mapping into ``args_type`` (a pydantic dataclass using
    :data:`ARGS_CONFIG`).

    Args:
        args_type: the plugin's args class.
        raw: the ``args`` mapping from the config; ``None`` gives the defaults.
            Top-level ``apiVersion``/``kind`` keys are ignored.
        path: the field path of ``raw`` used in errors, e.g. ``profiles[0].pluginConfig[1].args``.

    Raises:
        ConfigError: with the full path, e.g. ``profiles[0].pluginConfig[1].args.scoringStrategy.type:
            Input should be 'LeastAllocated', 'MostAllocated' or 'RequestedToCapacityRatio'``.
    """
    if raw is None:
        data: dict[str, Any] = {}
    elif isinstance(raw, Mapping):
        data = {k: v for k, v in drop_nulls(raw).items() if k not in _TYPE_META_KEYS}
    else:
        raise ConfigError(path, f"must be an object, got {type(raw).__name__}")
    try:
        text = json.dumps(data, default=str)
    except (TypeError, ValueError) as exc:
        raise ConfigError(path, f"not representable as JSON: {exc}") from None
    try:
        result: T = _adapter(args_type).validate_json(text)
    except ValidationError as exc:
        raise config_error_from_validation(exc, path) from None
    return result


def plugin_args(
    profile: KubeSchedulerProfile, name: str, profile_path: str = "profiles[0]"
) -> tuple[dict[str, Any] | None, str]:
    """Find the ``pluginConfig`` entry of plugin ``name`` in ``profile``.

    Returns:
        ``(raw_args, path)``: the raw args mapping (``None`` when there is no entry or it has no
        args) and its field path, ``<profile_path>.pluginConfig[<j>].args``; when there is no entry
        the path is ``<profile_path>.pluginConfig`` (only defaults are decoded then).
        The first entry wins (validation rejects repeated names).
    """
    for j, pc in enumerate(profile.plugin_config):
        if pc.name == name:
            return pc.args, f"{profile_path}.pluginConfig[{j}].args"
    return None, f"{profile_path}.pluginConfig"


def decode_plugin_args(
    args_type: type[T], profile: KubeSchedulerProfile, name: str, profile_path: str = "profiles[0]"
) -> T:
    """:func:`plugin_args` + :func:`decode_args`: the decoded (defaulted) args of plugin ``name``.

    Raises:
        ConfigError: invalid args, with the full field path.
    """
    raw, path = plugin_args(profile, name, profile_path)
    return decode_args(args_type, raw, path)
