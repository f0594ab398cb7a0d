"""The Kubernetes CEL quantity library (``staging/src/k8s.io/apiserver/pkg/cel/library/quantity.go``):

``quantity(string)``, ``isQuantity(string)``, and on a quantity ``sign()``, ``isInteger()``,
``asInteger()``, ``asApproximateFloat()``, ``add(quantity|int)``, ``sub(quantity|int)``,
``isLessThan(quantity)``, ``isGreaterThan(quantity)``, ``compareTo(quantity)``.

Values are exact (:class:`fractions.Fraction`, as :func:`kubesched.api.quantity.parse_quantity`
reads them). Errors are upstream's texts: a malformed string ``quantities must match the regular
expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'``, ``asInteger`` of a fraction or of a
value beyond int64 ``cannot convert value to integer``.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

from cel_expr_python import cel

from kubesched.api.dra.cel.types import QUANTITY_TYPE, QuantityMessage
from kubesched.api.quantity import QuantityError, parse_quantity

ERR_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
ERR_TO_INT = "cannot convert value to integer"

Q = cel.Type(QUANTITY_TYPE)
_INT64 = (-(2**63), 2**63 - 1)


def canonical(v: Fraction) -> str:
    """The message text of value ``v`` (``"3/2"``, ``"1024"``)."""
    return str(v)


def to_message(v: Fraction) -> Any:
    """``v`` as a ``kubernetes.Quantity`` CEL value."""
    return QuantityMessage(canonical=canonical(v))


@lru_cache(maxsize=4096)
def _value(text: str) -> Fraction:
    return Fraction(text)


def value_of(q: Any) -> Fraction:
    """The exact value of a ``kubernetes.Quantity`` message."""
    return _value(q.canonical)


def _quantity(text: str) -> Any:
    try:
        return to_message(parse_quantity(text))
    except QuantityError:
        raise ValueError(ERR_FORMAT) from None


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


def _sign(q: Any) -> int:
    v = value_of(q)
    return (v > 0) - (v < 0)


def _is_integer(q: Any) -> bool:
    v = value_of(q)
    return v.denominator == 1 and _INT64[0] <= v <= _INT64[1]


def _as_integer(q: Any) -> int:
    if not _is_integer(q):
        raise ValueError(ERR_TO_INT)
    return int(value_of(q))


def _as_float(q: Any) -> float:
    return float(value_of(q))


def _add(q: Any, other: Any) -> Any:
    return to_message(value_of(q) + (Fraction(other) if isinstance(other, int) else value_of(other)))


def _sub(q: Any, other: Any) -> Any:
    return to_message(value_of(q) - (Fraction(other) if isinstance(other, int) else value_of(other)))


def _cmp(a: Any, b: Any) -> int:
    x, y = value_of(a), value_of(b)
    return (x > y) - (x < y)


def overloads() -> dict[str, list[cel.Overload]]:
    """The library's functions: name -> overloads with their implementations (upstream overload ids)."""
    STR, BOOL, INT, DBL = cel.Type.STRING, cel.Type.BOOL, cel.Type.INT, cel.Type.DOUBLE
    ov = cel.Overload
    return {
        "quantity": [ov("string_to_quantity", Q, [STR], impl=_quantity)],
        "isQuantity": [ov("is_quantity_string", BOOL, [STR], impl=_is_quantity)],
        "sign": [ov("quantity_sign", INT, [Q], is_member=True, impl=_sign)],
        "isInteger": [ov("quantity_is_integer", BOOL, [Q], is_member=True, impl=_is_integer)],
        "asInteger": [ov("quantity_get_integer", INT, [Q], is_member=True, impl=_as_integer)],
        "asApproximateFloat": [ov("quantity_get_float", DBL, [Q], is_member=True, impl=_as_float)],
        "add": [
            ov("quantity_add", Q, [Q, Q], is_member=True, impl=_add),
            ov("quantity_add_int", Q, [Q, INT], is_member=True, impl=_add),
        ],
        "sub": [
            ov("quantity_sub", Q, [Q, Q], is_member=True, impl=_sub),
            ov("quantity_sub_int", Q, [Q, INT], is_member=True, impl=_sub),
        ],
        "isLessThan": [ov("quantity_less", BOOL, [Q, Q], is_member=True, impl=lambda a, b: _cmp(a, b) < 0)],
        "isGreaterThan": [
            ov("quantity_greater", BOOL, [Q, Q], is_member=True, impl=lambda a, b: _cmp(a, b) > 0)
        ],
        "compareTo": [ov("quantity_compare_to", INT, [Q, Q], is_member=True, impl=_cmp)],
    }


#: the comparison functions shared by name with the other library (see the compiler's ``_functions``)
IMPLS = {
    "isLessThan": lambda a, b: _cmp(a, b) < 0,
    "isGreaterThan": lambda a, b: _cmp(a, b) > 0,
    "compareTo": _cmp,
}
OVERLOAD_IDS = {
    "isLessThan": "quantity_less",
    "isGreaterThan": "quantity_greater",
    "compareTo": "quantity_compare_to",
}
RESULT_TYPES = {"isLessThan": cel.Type.BOOL, "isGreaterThan": cel.Type.BOOL, "compareTo": cel.Type.INT}
