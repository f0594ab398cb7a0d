"""Reading a kubelet image-model settings file (``--kubelet`` / ``--kubelet-config``): a YAML
mapping of camelCase :class:`~kubesched.embedded.kubelet.config.KubeletImageConfig` keys."""

from __future__ import annotations

from typing import Any

from kubesched.api.document_file import read_document
from kubesched.errors import ConfigError

__all__ = ["read_kubelet_settings"]


def read_kubelet_settings(path: str | None) -> dict[str, Any]:
    """The settings in YAML file ``path`` (``{}`` for None or an empty file). Raises ConfigError
    naming the file when it cannot be read, is not YAML or is not a mapping."""
    if path is None:
        return {}
    data = read_document(path)  # aliases and nesting bounded; errors name the file and line
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError("", "must be a mapping of kubelet image settings (camelCase)", path)
    return data
