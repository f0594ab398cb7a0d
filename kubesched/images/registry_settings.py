"""Settings of registry lookups: per-registry endpoint, TLS and credentials, platform, cache TTLs.

File format (YAML; keys camelCase, unknown keys rejected)::

    platform: linux/amd64            # os/architecture[/variant] picked from an image index
    ttlSeconds: 3600                 # how long a fetched manifest is trusted (tags move)
    errorTtlSeconds: 300             # how long a failed lookup is not retried
    timeoutSeconds: 10               # per HTTP request
    workers: 2                       # lookups running at once (background threads)
    registries:
      "registry.internal:5000":      # the registry part of image references (host[:port])
        insecure: true               # plain HTTP (as containerd's `insecure` / a `http://` endpoint)
      "registry.corp":
        endpoint: https://mirror.corp:8443   # where the /v2/ API is served (default https://<host>)
        caFile: /etc/kubesched/corp-ca.pem  # extra CA bundle for this registry's TLS
        insecureSkipVerify: false
        username: robot
        passwordFile: /etc/kubesched/registry-password   # or password: ...

A registry not listed uses ``https://<host>`` with the system CAs and no credentials, except
Docker Hub: references to ``docker.io`` (``nginx``, ``user/app``, ``index.docker.io/...``; one-name
references get ``library/``) are fetched from ``https://registry-1.docker.io``, as container
runtimes do (containerd ``remotes/docker/config/hosts.go``: ``ConfigureHosts``, whose default
host for ``docker.io`` is ``registry-1.docker.io``); Docker Hub answers anonymous requests with a
Bearer challenge whose token service (``auth.docker.io``) gives pull tokens without credentials.
An ``endpoint`` listed for ``docker.io`` (a mirror) replaces it. Other registries that serve their
API under a host other than the name in image references need that host as ``endpoint``. Errors: :class:`~kubesched.errors.ConfigError` naming the file and field.
"""

from __future__ import annotations

from dataclasses import field
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator
from pydantic.dataclasses import dataclass

from kubesched.api.document_file import read_document
from kubesched.config.args import ARGS_CONFIG, decode_args
from kubesched.errors import ConfigError
from kubesched.images.names import DEFAULT_DOMAIN

__all__ = [
    "RegistryHostSettings",
    "RegistrySettings",
    "load_registry_settings",
    "DOCKER_HUB_API_HOST",
    "default_api_host",
]

#: where Docker Hub serves the distribution API
DOCKER_HUB_API_HOST = "registry-1.docker.io"


def default_api_host(host: str) -> str:
    """The host serving the ``/v2/`` API of registry ``host`` when no endpoint is configured:
    ``registry-1.docker.io`` for ``docker.io``, ``host`` itself otherwise (containerd
    ``remotes/docker/config/hosts.go``: ``ConfigureHosts``)."""
    return DOCKER_HUB_API_HOST if host == DEFAULT_DOMAIN else host


@dataclass(config=ARGS_CONFIG)
class RegistryHostSettings:
    """One registry: ``endpoint`` (URL of the API root, None = ``https://<host>`` or
    ``http://<host>`` when ``insecure``, with ``registry-1.docker.io`` for ``docker.io``), ``insecure`` (plain HTTP), ``ca_file`` (PEM bundle),
    ``insecure_skip_verify`` (TLS without certificate checks), ``username`` with ``password`` or
    ``password_file`` (basic credentials, sent to the registry's token service or on a Basic
    challenge)."""

    endpoint: str | None = None
    insecure: bool = False
    ca_file: str | None = None
    insecure_skip_verify: bool = False
    username: str | None = None
    password: str | None = None
    password_file: str | None = None

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, v: str | None) -> str | None:
        if v is not None and not (v.startswith("http://") or v.startswith("https://")):
            raise ValueError(f"must start with http:// or https://, got {v!r}")
        return v.rstrip("/") if v else v

    def base_url(self, host: str) -> str:
        """The API root for registry ``host`` (the configured endpoint, else
        :func:`default_api_host` over HTTPS, or HTTP when ``insecure``)."""
        if self.endpoint:
            return self.endpoint
        return f"{'http' if self.insecure else 'https'}://{default_api_host(host)}"

    def credentials(self) -> tuple[str, str] | None:
        """``(username, password)`` or None; reads ``password_file`` (stripped). Raises ConfigError
        when the file cannot be read."""
        if self.username is None:
            return None
        password = self.password or ""
        if self.password_file:
            try:
                password = Path(self.password_file).read_text(encoding="utf-8").strip()
            except OSError as e:
                raise ConfigError(
                    "passwordFile", f"cannot read {self.password_file}: {e.strerror or e}"
                ) from None
        return self.username, password


@dataclass(config=ARGS_CONFIG)
class RegistrySettings:
    """Registry lookups (see the module docstring); times in seconds."""

    platform: str = "linux/amd64"
    ttl_seconds: float = Field(default=3600.0, gt=0)
    error_ttl_seconds: float = Field(default=300.0, ge=0)
    timeout_seconds: float = Field(default=10.0, gt=0)
    workers: int = Field(default=2, ge=1, le=16)
    registries: dict[str, RegistryHostSettings] = field(default_factory=dict)

    @field_validator("platform")
    @classmethod
    def _platform(cls, v: str) -> str:
        parts = v.split("/")
        if not 2 <= len(parts) <= 3 or not all(parts):
            raise ValueError(f"must be os/architecture[/variant], got {v!r}")
        return v

    @property
    def platform_parts(self) -> tuple[str, str, str | None]:
        """``(os, architecture, variant or None)``."""
        parts = self.platform.split("/")
        return parts[0], parts[1], parts[2] if len(parts) == 3 else None

    def host(self, host: str) -> RegistryHostSettings:
        """Settings of registry ``host`` (defaults when not listed)."""
        return self.registries.get(host) or RegistryHostSettings()


def load_registry_settings(path: str | None) -> RegistrySettings:
    """Read the settings file ``path`` (None: the defaults). Raises ConfigError naming the file and
    the field."""
    if path is None:
        return RegistrySettings()
    data: Any = read_document(path)
    try:
        return decode_args(RegistrySettings, data, "")
    except ConfigError as e:
        raise e.located(path) from None
