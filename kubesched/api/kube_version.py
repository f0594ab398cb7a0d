"""The Kubernetes release whose behaviour kubesched follows: one place for the version fact.

``GET /version`` of the embedded API server (``version.Info`` of
``staging/src/k8s.io/apimachinery/pkg/version/types.go``), the ``--version`` lines of the CLI and
the OpenAPI documents' ``info.version`` are built from these constants.
"""

from __future__ import annotations

from typing import Any

__all__ = ["KUBE_MAJOR", "KUBE_MINOR", "KUBE_PATCH", "KUBE_GIT_VERSION", "version_info"]

KUBE_MAJOR = 1
KUBE_MINOR = 35
KUBE_PATCH = 0
#: ``v1.35.0`` (a plain release version, so clients compute version skew as against upstream)
KUBE_GIT_VERSION = f"v{KUBE_MAJOR}.{KUBE_MINOR}.{KUBE_PATCH}"


def version_info() -> dict[str, Any]:
    """``GET /version``: ``{"major": "1", "minor": "35", "gitVersion": "v1.35.0", ...}``."""
    return {
        "major": str(KUBE_MAJOR),
        "minor": str(KUBE_MINOR),
        "gitVersion": KUBE_GIT_VERSION,
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "",
        "compiler": "python",
        "platform": "linux/amd64",
    }
