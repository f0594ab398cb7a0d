"""``matchAttribute`` constraints (``structured/internal/stable/allocator_stable.go``:
``matchAttributeConstraint``, ``lookupAttribute``).

Constraints are monotonic: once a device does not fit, adding more devices never makes it fit,
so the search backtracks as soon as ``add`` refuses a device.
"""

from __future__ import annotations

from kubesched.api.dra import Device, DeviceAttribute


def lookup_attribute(device: Device, driver: str, name: str) -> DeviceAttribute | None:
    """``lookupAttribute``: the fully qualified name, else the bare id when the domain is the driver."""
    attr = device.attributes.get(name)
    if attr is not None:
        return attr
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)


class MatchAttributeConstraint:
    """All devices of the constrained requests share one value of ``attribute_name`` (a device
    without the attribute never fits). ``request_names`` empty means every request of the claim;
    an entry may name a request (all its sub-requests) or ``request/subrequest``."""

    __slots__ = ("request_names", "attribute_name", "attribute", "num_devices")

    def __init__(self, request_names: tuple[str, ...], attribute_name: str) -> None:
        self.request_names = frozenset(request_names)
        self.attribute_name = attribute_name
        self.attribute: DeviceAttribute | None = None
        self.num_devices = 0

    def _applies(self, request: str, sub_request: str) -> bool:
        if not self.request_names:
            return True
        if not sub_request:
            return request in self.request_names
        return request in self.request_names or f"{request}/{sub_request}" in self.request_names

    def add(self, request: str, sub_request: str, device: Device, driver: str) -> bool:
        """Whether ``device`` may join; it is counted when it may."""
        if not self._applies(request, sub_request):
            return True
        attr = lookup_attribute(device, driver, self.attribute_name)
        if attr is None:
            return False
        if self.num_devices == 0:
            self.attribute = attr
            self.num_devices = 1
            return True
        assert self.attribute is not None
        if attr.kind != self.attribute.kind or attr.value != self.attribute.value:
            return False
        if attr.kind in ("int", "bool") and type(attr.value) is not type(self.attribute.value):
            return False
        self.num_devices += 1
        return True

    def remove(self, request: str, sub_request: str) -> None:
        """Undo one successful ``add`` of the same request."""
        if not self._applies(request, sub_request):
            return
        self.num_devices -= 1
