"""The two opaque CEL types of the Kubernetes libraries, ``kubernetes.Quantity`` and
``kubernetes.Semver``, as protobuf messages in a private descriptor pool (the CEL runtime's only
way to carry a custom type).

Each message has one field holding the value's canonical text, so CEL's ``==`` on two messages is
the value equality upstream's ``Quantity.Equal`` / ``Semver.Equal`` give: a quantity as its exact
reduced fraction (``quantity("1") == quantity("1000m")``), a version without its build metadata
(``semver("1.0.0+a") == semver("1.0.0")``). Deviation: the field is visible to expressions
(``quantity("1").canonical``), which upstream's opaque types do not allow.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

QUANTITY_TYPE = "kubernetes.Quantity"
SEMVER_TYPE = "kubernetes.Semver"


def _build_pool() -> tuple[descriptor_pool.DescriptorPool, Any, Any]:
    fdp = descriptor_pb2.FileDescriptorProto(
        name="kubesched/dra_cel_types.proto", package="kubernetes", syntax="proto3"
    )
    for name in ("Quantity", "Semver"):
        m = fdp.message_type.add(name=name)
        m.field.add(
            name="canonical",
            number=1,
            type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
            label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
        )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    quantity = message_factory.GetMessageClass(pool.FindMessageTypeByName(QUANTITY_TYPE))
    semver = message_factory.GetMessageClass(pool.FindMessageTypeByName(SEMVER_TYPE))
    return pool, quantity, semver


POOL, QuantityMessage, SemverMessage = _build_pool()
