"""Error types raised by kubesched.

Every error a user can cause (bad manifest, bad config, bad flag) is a
``KubeschedError``; the CLI prints ``str(err)`` as one line and exits with
code 2. Messages name the object and the field path, e.g.
``cluster.yaml doc 3 (Pod default/web-1): spec.containers[0].resources.requests.cpu: invalid quantity "1.5.0"``.
"""

from __future__ import annotations

from typing import Self


class KubeschedError(Exception):
    """Base class of every user-facing kubesched error (CLI exit code 2)."""


class FieldError(KubeschedError):
    """A value at ``path`` (dotted/indexed field path such as
    ``spec.containers[0].resources.requests.cpu``) is invalid.

    ``where`` optionally prefixes the object (``cluster.yaml doc 3 (Pod default/web-1)``).
    """

    def __init__(self, path: str, message: str, where: str = "") -> None:
        self.path = path
        self.message = message
        self.where = where
        super().__init__(self._render())

    def _render(self) -> str:
        body = f"{self.path}: {self.message}" if self.path else self.message
        return f"{self.where}: {body}" if self.where else body

    def located(self, where: str) -> Self:
        """Return a copy of this error prefixed with ``where`` (file/doc/object)."""
        return type(self)(self.path, self.message, where)

    def under(self, prefix: str) -> Self:
        """Return a copy whose path is nested under ``prefix`` (``spec`` + ``x`` -> ``spec.x``)."""
        if not prefix:
            return self
        if not self.path:
            path = prefix
        elif self.path.startswith("["):
            path = prefix + self.path
        else:
            path = f"{prefix}.{self.path}"
        return type(self)(path, self.message, self.where)


class ManifestError(FieldError):
    """A Kubernetes manifest (Pod, Node, ...) is malformed."""


class ConfigError(FieldError):
    """A ``KubeSchedulerConfiguration`` is invalid; ``path`` is like
    ``profiles[0].pluginConfig[1].args.scoringStrategy.type``."""


class NotImplementedPluginError(ConfigError):
    """A config names an upstream plugin kubesched does not implement yet."""


class MissingFileError(KubeschedError, FileNotFoundError):
    """An input file does not exist: ``trace file traces/day1/nodes.csv not found`` (``what``:
    the file's role, ``path``: the file). Also a ``FileNotFoundError``, so the Python API's
    callers catching that keep working; the CLI prints it as every other input error."""

    def __init__(self, path: object, what: str = "file") -> None:
        self.path = str(path)
        self.what = what
        KubeschedError.__init__(self, f"{what} {path} not found")


class NotFoundError(KubeschedError):
    """An API object does not exist (HTTP 404 equivalent)."""


class ConflictError(KubeschedError):
    """A write conflicts with the stored object (HTTP 409 equivalent), e.g.
    binding a pod that is already bound."""


class AlreadyExistsError(ConflictError):
    """Creating an object whose kind/namespace/name already exists (HTTP 409, reason AlreadyExists),
    e.g. ``pods "web-1" already exists``."""


class GoneError(KubeschedError):
    """A watch asked for a resourceVersion that was compacted (HTTP 410 Gone)."""


class ListenError(KubeschedError):
    """A server cannot listen: ``cannot listen on 127.0.0.1:6443 (--address, --port): Address
    already in use``. ``flags`` names the command's flags that choose the address and port."""

    def __init__(self, address: str, port: int, flags: str, error: OSError) -> None:
        import os

        if error.errno and error.errno > 0:  # asyncio's message wraps strerror in its own words
            reason = os.strerror(error.errno)
        else:  # e.g. socket.gaierror (negative EAI_* codes)
            reason = error.strerror or str(error) or type(error).__name__
        self.address, self.port, self.flags, self.reason = address, port, flags, reason
        host = f"[{address}]" if ":" in address else address
        super().__init__(f"cannot listen on {host}:{port} ({flags}): {reason}")
