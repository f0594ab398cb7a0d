"""Decoding of ``application/vnd.kubernetes.protobuf`` request bodies into JSON objects.

kubectl's typed commands (``kubectl create namespace|deployment|job|priorityclass|...``) send their
object as protobuf, as every client-go typed client does. The body is the envelope of
``staging/src/k8s.io/apimachinery/pkg/runtime/serializer/protobuf/protobuf.go`` (``Serializer.Decode``):
the 4-byte magic ``k8s\\x00`` followed by a ``runtime.Unknown`` message whose ``typeMeta`` names
``apiVersion``/``kind`` and whose ``raw`` bytes are the object's own message
(``staging/src/k8s.io/api/<group>/<version>/generated.proto``).

Field numbers come from ``kubesched/data/proto_fields.json`` (written by ``scripts/proto_fields.py``
from upstream's ``generated.proto`` files of the same release). The JSON produced follows the
objects' JSON encoding: field names as in the API, ``metav1.Time`` as RFC 3339 text,
``resource.Quantity`` as its string, ``intstr.IntOrString`` as an int or a string,
``runtime.RawExtension`` as the JSON it carries, ``bytes`` as base64; empty strings, ``false`` and
the zero time are left out (the ``omitempty`` of almost every such field; a typed client sends every
non-pointer field), and so is ``metadata.generation`` 0. Unknown field numbers are skipped, as protobuf decoders do.

Errors: :class:`ProtobufError` (a ``ValueError``) for a body that is not a Kubernetes protobuf
envelope or whose kind has no table entry.
"""

from __future__ import annotations

import base64
import json
import struct
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["MAGIC", "ProtobufError", "decode_object"]

Obj = dict[str, Any]

#: Prefix of every Kubernetes protobuf body.
MAGIC = b"k8s\x00"

_UNKNOWN = "k8s.io.apimachinery.pkg.runtime.Unknown"
_TIME = "k8s.io.apimachinery.pkg.apis.meta.v1.Time"
_MICRO_TIME = "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime"
_QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
_RAW_EXTENSION = "k8s.io.apimachinery.pkg.runtime.RawExtension"
_DURATION = "k8s.io.apimachinery.pkg.apis.meta.v1.Duration"
_OBJECT_META = "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta"

#: API group -> protobuf package of its types (``k8s.io.api.<package>.<version>``).
_GROUP_PACKAGES = {
    "": "core",
    "apps": "apps",
    "batch": "batch",
    "policy": "policy",
    "scheduling.k8s.io": "scheduling",
    "storage.k8s.io": "storage",
    "coordination.k8s.io": "coordination",
    "events.k8s.io": "events",
    "resource.k8s.io": "resource",
}


class ProtobufError(ValueError):
    """A request body that cannot be decoded as a Kubernetes protobuf object."""


@cache
def _table() -> dict[str, dict[int, tuple[str, str, bool]]]:
    raw = json.loads(resources.files("kubesched").joinpath("data", "proto_fields.json").read_text())
    return {
        msg: {int(n): (f[0], f[1], f[2] == "repeated") for n, f in fields.items()}
        for msg, fields in raw.items()
    }


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(data):
            raise ProtobufError("truncated varint")
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7
        if shift > 63:
            raise ProtobufError("varint too long")


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """``(field number, wire type, value)`` of a message: int for varints and fixed, bytes for
    length-delimited fields."""
    out: list[tuple[int, int, Any]] = []
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 1:
            value, i = data[i : i + 8], i + 8
        elif wire == 2:
            size, i = _varint(data, i)
            if i + size > len(data):
                raise ProtobufError("truncated length-delimited field")
            value, i = data[i : i + size], i + size
        elif wire == 5:
            value, i = data[i : i + 4], i + 4
        else:
            raise ProtobufError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _scalar(type_name: str, wire: int, value: Any) -> list[Any]:
    if wire == 2 and type_name not in ("string", "bytes"):  # packed repeated scalars
        out: list[Any] = []
        i = 0
        while i < len(value):
            v, i = _varint(value, i)
            out.append(_scalar(type_name, 0, v)[0])
        return out
    if type_name == "string":
        return [bytes(value).decode("utf-8")]
    if type_name == "bytes":
        return [base64.b64encode(value).decode("ascii")]
    if type_name == "bool":
        return [bool(value)]
    if type_name == "double":
        return [struct.unpack("<d", value)[0]]
    if type_name == "float":
        return [struct.unpack("<f", value)[0]]
    if type_name in ("int32", "int64"):
        return [_signed(value)]
    return [value]


def _time(fields: Obj, micro: bool) -> str | None:
    seconds = fields.get("seconds", 0)
    nanos = fields.get("nanos", 0)
    if not seconds and not nanos:
        return None
    t = datetime.fromtimestamp(seconds, UTC)
    if micro:
        return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos // 1000:06d}Z"
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _message(type_name: str, data: bytes) -> Any:
    table = _table()
    fields = table.get(type_name)
    if fields is None:
        raise ProtobufError(f"no protobuf table for {type_name}")
    obj: Obj = {}
    for number, wire, value in _fields(data):
        spec = fields.get(number)
        if spec is None:
            continue
        name, ftype, repeated = spec
        if ftype.startswith("map:"):
            entry = dict(_map_entry(ftype[4:], value))
            obj.setdefault(name, {}).update(entry)
            continue
        if ftype in table:
            values = [_message(ftype, value)]
        else:
            values = _scalar(ftype, wire, value)
        if repeated:
            obj.setdefault(name, []).extend(values)
        else:
            obj[name] = values[-1]
    return _special(type_name, obj)


def _map_entry(value_type: str, data: bytes) -> list[tuple[str, Any]]:
    key, value = "", None
    for number, wire, raw in _fields(data):
        if number == 1:
            key = bytes(raw).decode("utf-8")
        elif number == 2:
            value = _message(value_type, raw) if value_type in _table() else _scalar(value_type, wire, raw)[0]
    if value is None:
        value = "" if value_type == "string" else None
    return [(key, value)]


def _special(type_name: str, obj: Obj) -> Any:
    """The JSON form of the types with a custom JSON encoding; other messages without their empty
    strings, ``false`` booleans and zero times."""
    if type_name == _TIME:
        return _time(obj, micro=False)
    if type_name == _MICRO_TIME:
        return _time(obj, micro=True)
    if type_name == _QUANTITY:
        return obj.get("string", "")
    if type_name == _INT_OR_STRING:
        return obj.get("strVal", "") if obj.get("type") == 1 else obj.get("intVal", 0)
    if type_name == _RAW_EXTENSION:
        raw = obj.get("raw")
        return json.loads(base64.b64decode(raw)) if raw else None
    if type_name == _DURATION:
        return f"{obj.get('duration', 0) / 1e9:g}s"
    if type_name == _OBJECT_META and obj.get("generation") == 0:
        del obj["generation"]  # int64 with omitempty: 0 is not written by the API server
    return {k: v for k, v in obj.items() if not (v is None or v is False or v == "")}


def decode_object(body: bytes) -> Obj:
    """The JSON object of a Kubernetes protobuf request ``body`` (magic + ``runtime.Unknown``),
    with ``apiVersion`` and ``kind`` from its type meta. Raises :class:`ProtobufError`."""
    if not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the Kubernetes protobuf prefix")
    unknown = _message(_UNKNOWN, body[len(MAGIC) :])
    type_meta = unknown.get("typeMeta") or {}
    api_version, kind = type_meta.get("apiVersion", ""), type_meta.get("kind", "")
    group, _, version = api_version.rpartition("/")
    package = _GROUP_PACKAGES.get(group)
    if package is None or not kind:
        raise ProtobufError(
            f"no protobuf decoding for {kind or 'an object'} in {api_version or 'no API version'}"
        )
    raw = base64.b64decode(unknown.get("raw", ""))
    obj = _message(f"k8s.io.api.{package}.{version}.{kind}", raw)
    return {"apiVersion": api_version, "kind": kind, **obj}
