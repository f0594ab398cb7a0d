"""The scheduler's own HTTP endpoint (``kubesched run``): health, readiness, metrics, profiling.

See :mod:`kubesched.server.http` for the routes, :mod:`kubesched.server.profiling` for the CPU
profile format and :mod:`kubesched.server.tls` for the serving certificate.
"""

from kubesched.server.http import StatusServer

__all__ = ["StatusServer"]
