"""Kubeconfig files pointing at ``kubesched serve``.

The file has one cluster, user and context, all named ``kubesched`` (the current context), with
``server: http://127.0.0.1:PORT`` (plain HTTP, no credentials), as ``kubectl config view`` shows
(``k8s.io/client-go/tools/clientcmd/api/v1``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kubesched.atomic_file import atomic_write_text

__all__ = ["CONTEXT", "kubeconfig_dict", "write_kubeconfig"]

#: Name of the cluster, user and context written.
CONTEXT = "kubesched"


def kubeconfig_dict(server_url: str, namespace: str = "default") -> dict[str, Any]:
    """A ``Config`` (kubeconfig v1) for ``server_url`` with context ``kubesched``."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [{"name": CONTEXT, "cluster": {"server": server_url}}],
        "users": [{"name": CONTEXT, "user": {}}],
        "contexts": [
            {"name": CONTEXT, "context": {"cluster": CONTEXT, "user": CONTEXT, "namespace": namespace}}
        ],
        "current-context": CONTEXT,
    }


def write_kubeconfig(path: str | Path, server_url: str) -> Path:
    """Write the kubeconfig for ``server_url`` to ``path`` atomically (mode 0600, parent directories
    created); returns the path. Raises OSError."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(kubeconfig_dict(server_url), sort_keys=False)
    atomic_write_text(target, text, mode=0o600)
    return target
