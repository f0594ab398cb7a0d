"""Loading, defaulting and validating a ``KubeSchedulerConfiguration`` file.

Source: ``cmd/kube-scheduler/app/options/configfile.go`` (``loadConfigFromFile``: strict decode +
defaulting) followed by ``validation.ValidateKubeSchedulerConfiguration``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from kubesched.api.document_file import parse_document, read_document
from kubesched.config.args import drop_nulls
from kubesched.config.defaults import apply_defaults
from kubesched.config.field_path import config_error_from_validation
from kubesched.config.types import API_VERSION, KIND, KubeSchedulerConfiguration
from kubesched.config.validation import validate_config
from kubesched.errors import ConfigError


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys (upstream's strict decoder does)."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    out: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in out:
            line = key_node.start_mark.line + 1
            raise ConfigError("", f'line {line}: key "{key}" already set in map')
        out[key] = loader.construct_object(value_node, deep=True)
    return out


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _reject_duplicate_json_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ConfigError("", f'key "{key}" already set in map')
        out[key] = value
    return out


def _read_document(path: Path) -> Any:
    """The document of ``path`` through the shared reader (:mod:`kubesched.api.document_file`),
    duplicate keys refused. Raises ConfigError (located by the caller)."""
    return read_document(path, loader=_StrictLoader, object_pairs_hook=_reject_duplicate_json_keys)


def parse_config(document: Any) -> KubeSchedulerConfiguration:
    """Decode a parsed v1 document (the mapping read from YAML/JSON), apply defaults and validate.

    Checks ``apiVersion: kubescheduler.config.k8s.io/v1`` and ``kind: KubeSchedulerConfiguration``,
    decodes strictly (unknown fields, wrong types and bad durations are errors), applies
    :func:`kubesched.config.defaults.apply_defaults`, then :func:`kubesched.config.validation.validate_config`.

    Raises:
        ConfigError: path relative to the document, e.g. ``profiles[0].plugins.score.enabled[0].weight:
            Input should be a valid integer``; not located in a file (see :func:`load_config`).
    """
    if document is None:
        raise ConfigError("", "empty configuration document")
    if not isinstance(document, Mapping):
        raise ConfigError("", f"configuration must be a mapping, got {type(document).__name__}")
    data = drop_nulls(document)
    api_version = data.get("apiVersion")
    kind = data.get("kind")
    if not api_version:
        raise ConfigError("apiVersion", f'Required value (want "{API_VERSION}")')
    if not kind:
        raise ConfigError("kind", f'Required value (want "{KIND}")')
    if api_version != API_VERSION:
        raise ConfigError("apiVersion", f'no kind "{kind}" is registered for version "{api_version}"')
    if kind != KIND:
        raise ConfigError("kind", f'no kind "{kind}" is registered for version "{api_version}"')
    try:
        text = json.dumps(data, default=str)
    except (TypeError, ValueError) as exc:
        raise ConfigError("", f"not representable as JSON: {exc}") from None
    try:
        config = KubeSchedulerConfiguration.model_validate_json(text)
    except ValidationError as exc:
        raise config_error_from_validation(exc) from None
    config = apply_defaults(config)
    validate_config(config)
    return config


def load_config(path: str | Path) -> KubeSchedulerConfiguration:
    """Read a ``KubeSchedulerConfiguration`` v1 file (YAML, or JSON when the suffix is ``.json``),
    apply defaults and validate (see :func:`parse_config`).

    Raises:
        ConfigError: located in the file as given, e.g.
            ``sched.yaml: podMaxBackoffSeconds: must be greater than or equal to PodInitialBackoffSeconds``.
    """
    where = str(path)
    try:
        return parse_config(_read_document(Path(path)))
    except ConfigError as err:
        raise err.located(where) from None


def load_config_text(text: str, where: str) -> KubeSchedulerConfiguration:
    """:func:`load_config` for YAML (or JSON, which is YAML) held in memory, e.g. typed into a form;
    ``where`` names it in messages exactly as a file name would (``sched.yaml: profiles[0]...``).

    Raises:
        ConfigError: as :func:`load_config`, located at ``where``.
    """
    try:
        return parse_config(
            parse_document(text, where, loader=_StrictLoader, object_pairs_hook=_reject_duplicate_json_keys)
        )
    except ConfigError as err:
        raise err.located(where) from None


def default_config() -> KubeSchedulerConfiguration:
    """The configuration used without ``--config``: every field defaulted and one profile
    ``default-scheduler`` with the default plugins (``pkg/scheduler/apis/config/v1/default_plugins.go``)."""
    config = apply_defaults(KubeSchedulerConfiguration())
    validate_config(config)
    return config


def dump_config(config: KubeSchedulerConfiguration) -> dict[str, Any]:
    """The v1 document of ``config`` (camelCase keys, durations as Go strings, ``*Data`` as base64,
    unset optional fields omitted); ``parse_config(dump_config(c)) == c`` for a defaulted ``c``."""
    dumped: dict[str, Any] = config.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped
