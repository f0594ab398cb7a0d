"""Reading a kubelet image-model settings file (``--kubelet`` / ``--kubelet-config``): a YAML
mapping of camelCase :class:`~kubesched.embedded.kubelet.config.KubeletImageConfig` keys."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kubesched.api.yaml_limits import YAMLLimitError, safe_load
from kubesched.errors import ConfigError

__all__ = ["read_kubelet_settings"]


def read_kubelet_settings(path: str | None) -> dict[str, Any]:
    """The settings in YAML file ``path`` (``{}`` for None or an empty file). Raises ConfigError
    naming the file when it cannot be read, is not YAML or is not a mapping."""
    if path is None:
        return {}
    try:
        data = safe_load(Path(path).read_text(encoding="utf-8"))  # aliases and nesting bounded
    except OSError as e:
        raise ConfigError("", f"cannot read the kubelet settings: {e.strerror or e}", path) from None
    except (yaml.YAMLError, YAMLLimitError) as e:
        raise ConfigError("", f"invalid YAML: {e}".replace("\n", " "), path) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError("", "must be a mapping of kubelet image settings (camelCase)", path)
    return data
