"""The scheduler's own HTTP endpoint (``kubesched run``): health, readiness, metrics, profiling.

See :mod:`kubesched.serving.http` for the routes, :mod:`kubesched.serving.profiling` for the CPU
profile format and :mod:`kubesched.serving.tls` for the serving certificate.
"""

from kubesched.serving.http import StatusServer

__all__ = ["StatusServer"]
