"""Kubernetes resource quantities (``k8s.io/apimachinery/pkg/api/resource``).

``parse_quantity("1.5Gi")`` returns the exact value as a :class:`fractions.Fraction`;
``milli_value`` / ``value`` round **up** to an integer exactly as upstream
``Quantity.MilliValue()`` / ``Quantity.Value()`` do. CPU is tracked in millicores,
every other resource in base units (bytes, counts).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_RE = re.compile(r"^([+-]?)(\d+\.?\d*|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?$")


class QuantityError(ValueError):
    """The string is not a valid Kubernetes quantity; ``str()`` is ``invalid quantity "<s>"``."""

    def __init__(self, text: object) -> None:
        super().__init__(f'invalid quantity "{text}"')


@lru_cache(maxsize=4096)
def _parse_str(text: str) -> Fraction:
    m = _RE.match(text.strip())
    if m is None:
        raise QuantityError(text)
    sign, number, suffix, exponent = m.groups()
    value = Fraction(number)
    if suffix in _BINARY:
        value *= _BINARY[suffix]
    elif suffix is not None:
        value *= _DECIMAL[suffix]
    elif exponent is not None:
        value *= Fraction(10) ** int(exponent)
    return -value if sign == "-" else value


def parse_quantity(q: object) -> Fraction:
    """Parse a quantity given as a string (``"100m"``, ``"1.5Gi"``, ``"2e3"``) or a JSON number.

    Raises :class:`QuantityError` for anything else (booleans, malformed strings).
    """
    if isinstance(q, bool):
        raise QuantityError(q)
    if isinstance(q, int):
        return Fraction(q)
    if isinstance(q, float):
        if math.isnan(q) or math.isinf(q):
            raise QuantityError(q)
        return Fraction(str(q))
    if isinstance(q, str):
        return _parse_str(q)
    raise QuantityError(q)


def _ceil(x: Fraction) -> int:
    return -((-x.numerator) // x.denominator)


def milli_value(q: object) -> int:
    """``Quantity.MilliValue()``: the value in thousandths, rounded up (``"0.1"`` -> 100, ``"1n"`` -> 1)."""
    return _ceil(parse_quantity(q) * 1000)


def value(q: object) -> int:
    """``Quantity.Value()``: the value in base units, rounded up (``"1.5"`` -> 2, ``"1Ki"`` -> 1024)."""
    return _ceil(parse_quantity(q))


#: (resource name, quantity string) -> :func:`resource_value`; manifests repeat a few strings
#: (``"100m"``, ``"128Mi"``) thousands of times, and parsing one costs a ``Fraction``. Only
#: successes are kept, and only up to :data:`_MEMO_LIMIT` entries.
_memo: dict[tuple[str, str], int] = {}
_MEMO_LIMIT = 4096


def resource_value(name: str, q: object) -> int:
    """The scheduler's integer for resource ``name``: millicores for ``cpu``, base units otherwise.
    Raises :class:`QuantityError` as :func:`parse_quantity` does."""
    if type(q) is str:
        key = (name, q)
        found = _memo.get(key)
        if found is not None:
            return found
        v = milli_value(q) if name == "cpu" else value(q)
        if len(_memo) < _MEMO_LIMIT:
            _memo[key] = v
        return v
    return milli_value(q) if name == "cpu" else value(q)


def format_quantity(name: str, amount: int) -> str:
    """Render an integer amount of ``name`` back into a quantity string (``cpu`` 1500 -> ``"1500m"``)."""
    if name == "cpu":
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    return str(amount)
