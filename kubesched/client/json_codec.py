"""Compact JSON for API bodies and watch streams, through ``orjson``.

The API client encodes the bodies it sends and decodes every answer and watch event with these,
and ``kubesched serve`` encodes its watch events and answers with :func:`dumps`: ``orjson`` is
several times faster than the standard library's ``json`` on a pod, per event, in the process
whose one core (the GIL) bounds the scheduler's throughput.

The output is the same JSON value as ``json.dumps(obj, separators=(",", ":"))`` (non-ASCII text is
written as UTF-8 instead of ``\\u`` escapes, as the Kubernetes API server writes it). What
``orjson`` refuses goes through the standard library instead, so nothing that ``json`` accepts is
rejected: integers outside 64 bits, non-string keys (encoding), ``NaN``/``Infinity`` (decoding).
Decoding never turns an integer into a float: documents with integers outside 64 bits are decoded
by ``json``.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["dumps", "loads"]

#: every digit -> "0", every other byte -> " ": a run of 19 zeros after the translation is a number
#: of 19 or more digits, which may not fit 64 bits (orjson would make it a float): from 19 digits
#: on a negative integer can be below -2**63, from 20 on a positive one above 2**64 - 1
_DIGITS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_RUN = b"0" * 19


def dumps(obj: Any) -> bytes:
    """``obj`` as compact JSON (UTF-8 bytes). Raises TypeError/ValueError as ``json.dumps`` does."""
    try:
        return orjson.dumps(obj)
    except TypeError:  # orjson.JSONEncodeError: a 65-bit integer, a non-str key, a subclass it refuses
        return json.dumps(obj, separators=(",", ":")).encode()


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """The value of JSON document ``data``. Raises ValueError (``json.JSONDecodeError`` or a
    ``UnicodeDecodeError``) for what is not JSON, as ``json.loads`` does."""
    raw = data.encode() if isinstance(data, str) else bytes(data) if not isinstance(data, bytes) else data
    if _LONG_RUN not in raw.translate(_DIGITS):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # e.g. NaN, which json accepts; json raises the error if it is no JSON at all
    return json.loads(raw)
