"""Resource-name checks used by extender validation.

Source: ``k8s.io/apimachinery/pkg/util/validation`` (``IsQualifiedName``, ``IsDNS1123Subdomain``)
and ``pkg/apis/core/v1/helper`` (``IsExtendedResourceName``, ``IsNativeResource``); messages as upstream.
"""

from __future__ import annotations

from kubesched.api.label_validation import dns1123_subdomain_errors, qualified_name_errors

RESOURCE_DEFAULT_NAMESPACE_PREFIX = "kubernetes.io/"
RESOURCE_REQUESTS_PREFIX = "requests."

#: upstream ``IsQualifiedName`` / ``IsDNS1123Subdomain`` (error messages, empty when valid)
is_qualified_name = qualified_name_errors
is_dns1123_subdomain = dns1123_subdomain_errors


def is_native_resource(name: str) -> bool:
    """Upstream ``IsNativeResource``: no ``/`` or contains ``kubernetes.io/``."""
    return "/" not in name or RESOURCE_DEFAULT_NAMESPACE_PREFIX in name


def is_extended_resource_name(name: str) -> bool:
    """Upstream ``IsExtendedResourceName``: not native, not ``requests.``-prefixed, and
    ``requests.<name>`` is a qualified name."""
    if is_native_resource(name) or name.startswith(RESOURCE_REQUESTS_PREFIX):
        return False
    return not is_qualified_name(RESOURCE_REQUESTS_PREFIX + name)
