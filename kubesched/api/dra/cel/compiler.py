"""Compiling and evaluating DRA device selectors (``staging/src/k8s.io/dynamic-resource-allocation/cel/
compile.go``: ``CompileCELExpression``, ``DeviceMatches``; ``celcache.go``: ``Cache``).

The environment: one variable ``device`` with ``driver`` (string), ``attributes`` (domain -> id ->
int | bool | string | ``kubernetes.Semver``) and ``capacity`` (domain -> id ->
``kubernetes.Quantity``); an attribute or capacity name without a domain gets the driver's name as
domain (``parseQualifiedName``); looking up an unknown domain yields an empty map, so
``device.attributes["other.io"].x`` fails with ``no such key: x`` and ``has(...)`` is false.
Libraries: quantity, semver, ``cel.bind``, optional types (``.?x.orValue(...)``) and the extended
string functions, the parts of the Kubernetes base environment device selectors use.

Errors are upstream's: a compile error is ``compilation failed: ERROR: <input>:1:5: ...`` (type
``Invalid``), an expression that is not boolean ``must evaluate to bool or the unknown type, not
int``; a runtime error is CEL's text in cel-go's words (``no such key: model``, ``no such
overload``, ``division by zero``), which the allocator wraps as ``... CEL runtime error: ...``.

Deviations (each a limit of the CEL runtime, ``cel-expr-python``):

* ``device`` is declared as ``map(string, dyn)``, so a misspelt top-level field
  (``device.drivr``) is a runtime ``no such key`` error instead of upstream's compile error;
* the unknown-domain default is given for the domains written as string literals in the
  expression (``device.attributes["gpu.example.com"]``), the form every selector uses; a domain
  computed at run time that the device lacks is a ``no such key`` error;
* no cost limit. Upstream refuses a DeviceClass or ResourceClaim whose selector's *estimated* cost
  exceeds ``CELSelectorExpressionMaxCost`` (1,000,000) when the object is validated, and aborts an
  evaluation whose *actual* cost passes the same budget (``CompileCELExpression`` with a cost
  estimator; ``DeviceMatches`` with ``cel.CostLimit``). ``cel-expr-python`` 0.1.x has neither: its
  ``Env.compile`` and ``Expression.eval`` take no cost options and report no cost, and the one
  budget of the C++ runtime underneath (the comprehension iteration limit) is not reachable from
  Python. A cost model written here would be a second CEL implementation, so kubesched accepts and
  evaluates such selectors. Device inputs are bounded (32 attributes and capacities), so only
  selectors with large literal lists or nested comprehensions come near the limit.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.dra.resource_slice import Device

# The CEL runtime and protobuf (~16 MiB) are imported on first use, so a scheduler whose pods use
# no ResourceClaims never loads them.

ERROR_TYPE_INVALID = "Invalid"
ERROR_TYPE_INTERNAL = "Internal"

#: upstream's default for the scheduler's CEL cache (``pkg/scheduler/.../dynamicresources``: 10 x classes)
DEFAULT_CACHE_SIZE = 1000


@dataclass(frozen=True, slots=True)
class CelError:
    """``apiservercel.Error``: ``str()`` is the detail, as upstream's ``Error()``."""

    type: str
    detail: str

    def __str__(self) -> str:
        return self.detail


class CelRuntimeError(Exception):
    """Evaluating a selector failed; ``str()`` is the CEL error text (``no such key: model``)."""


_STATUS = re.compile(r"^[A-Z_]+: ")
_NO_KEY = re.compile(r'Key not found in map : "?(.*?)"?$')
_STRING = re.compile(r'[rR]?("""|\'\'\'|"|\')((?:\\.|(?!\1).)*?)\1', re.S)


def _translate_runtime(message: str) -> str:
    """cel-cpp's runtime error text in cel-go's words."""
    message = _STATUS.sub("", message.strip()).removesuffix(" [NOT_FOUND]")
    m = _NO_KEY.search(message)
    if m:
        return f"no such key: {m.group(1)}"
    if message.startswith("No matching overloads found"):
        return "no such overload"
    if message == "divide by zero":
        return "division by zero"
    if message == "modulus by zero":
        return "modulus by zero"
    return message


def enhance_runtime_error(message: str) -> str:
    """``cel.EnhanceRuntimeError``: a hint after a ``no such key`` error, other texts unchanged."""
    if message.startswith("no such key:"):
        return f"{message}. Consider using CEL optional chaining (?), has() macro, or orValue() for optional fields"
    return message


def _functions() -> list[Any]:
    """The quantity and semver libraries. Both define ``isLessThan``, ``isGreaterThan`` and
    ``compareTo``; the runtime keys implementations by argument kind (both are messages), so
    such a name gets both declarations for the type checker and one implementation that
    dispatches on the receiver's message type."""
    from cel_expr_python import cel

    from kubesched.api.dra.cel import quantity_lib, semver_lib

    libs = (quantity_lib.overloads(), semver_lib.overloads())
    out = []
    for name in dict.fromkeys(n for lib in libs for n in lib):
        owners = [lib for lib in libs if name in lib]
        if len(owners) == 1:
            out.append(cel.FunctionDecl(name, owners[0][name]))
            continue
        impls = {
            quantity_lib.QuantityMessage: quantity_lib.IMPLS[name],
            semver_lib.SemverMessage: semver_lib.IMPLS[name],
        }

        def dispatch(a: Any, b: Any, _impls: dict[Any, Any] = impls) -> Any:
            return _impls[type(a)](a, b)

        out.append(
            cel.FunctionDecl(
                name,
                [
                    cel.Overload(
                        quantity_lib.OVERLOAD_IDS[name],
                        quantity_lib.RESULT_TYPES[name],
                        [quantity_lib.Q, quantity_lib.Q],
                        is_member=True,
                        impl=dispatch,
                    ),
                    cel.Overload(
                        semver_lib.OVERLOAD_IDS[name],
                        semver_lib.RESULT_TYPES[name],
                        [semver_lib.V, semver_lib.V],
                        is_member=True,
                    ),
                ],
            )
        )
    return out


_env_lock = threading.Lock()
_env: Any = None


def environment() -> Any:
    """The DRA CEL environment (built once)."""
    global _env
    with _env_lock:
        if _env is None:
            from cel_expr_python import cel
            from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

            from kubesched.api.dra.cel.types import POOL

            _env = cel.NewEnv(
                descriptor_pool=POOL,
                variables={"device": cel.Type.Map(cel.Type.STRING, cel.Type.DYN)},
                extensions=[ext_bindings.ExtBindings(), ext_strings.ExtStrings(), ext_optional.ExtOptional()],
                functions=_functions(),
            )
        return _env


def _qualified(name: str, driver: str) -> tuple[str, str]:
    """``parseQualifiedName``: ``(domain, id)``, the driver as the default domain."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def _attribute_value(kind: str, v: Any) -> Any:
    if kind == "version":
        from kubesched.api.dra.cel import semver_lib

        return semver_lib.to_message(semver_lib.parse(str(v)))
    return v


class DeviceInput:
    """One device as the ``device`` variable (``cel.Device``), built once per (driver, device) and
    kept with its evaluation activation; ``activation(extra_domains)`` adds empty maps for domains
    the device does not have."""

    __slots__ = (
        "data",
        "attribute_domains",
        "capacity_domains",
        "_activations",
        "error",
        "results",
        "all_results",
    )

    data: dict[str, Any]

    def __init__(self, driver: str, device: Device) -> None:
        attributes: dict[str, dict[str, Any]] = {}
        capacity: dict[str, dict[str, Any]] = {}
        self.error = ""
        for name, attr in device.attributes.items():
            domain, ident = _qualified(name, driver)
            try:
                attributes.setdefault(domain, {})[ident] = _attribute_value(attr.kind, attr.value)
            except ValueError as e:
                self.error = f"attribute {name}: parse semantic version: {e}"
        if device.capacity:
            from kubesched.api.dra.cel import quantity_lib
        for name, q in device.capacity.items():
            domain, ident = _qualified(name, driver)
            capacity.setdefault(domain, {})[ident] = quantity_lib.to_message(q)
        self.data = {"driver": driver, "attributes": attributes, "capacity": capacity}
        self.attribute_domains = frozenset(attributes)
        self.capacity_domains = frozenset(capacity)
        self._activations: dict[frozenset[str], Any] = {}
        #: expression -> result (True/False) or runtime error text; a selector's result for one
        #: device never changes, so it is computed once per device object
        self.results: dict[str, bool | str] = {}
        #: selectors (in order) -> whether all are true, for selector lists that evaluated without
        #: an error (so a later evaluation cannot raise either)
        self.all_results: dict[tuple[str, ...], bool] = {}

    def activation(self, literals: frozenset[str]) -> Any:
        missing = (literals - self.attribute_domains) | (literals - self.capacity_domains)
        key = frozenset(missing)
        act = self._activations.get(key)
        if act is None:
            data = self.data
            if key:
                data = {
                    "driver": data["driver"],
                    "attributes": {**{d: {} for d in key}, **data["attributes"]},
                    "capacity": {**{d: {} for d in key}, **data["capacity"]},
                }
            act = environment().Activation({"device": data})
            self._activations[key] = act
        return act


def device_input(driver: str, device: Device) -> DeviceInput:
    """The ``device`` variable for ``device`` of a slice of ``driver``."""
    return DeviceInput(driver, device)


@dataclass(slots=True)
class CompilationResult:
    """``CompilationResult``: ``error`` is None when ``program`` can be evaluated."""

    expression: str
    error: CelError | None
    program: Any = None
    literals: frozenset[str] = field(default_factory=frozenset)

    def device_matches(self, device: DeviceInput) -> bool:
        """``DeviceMatches``: evaluate for one device. Raises :class:`CelRuntimeError` (CEL's text).
        The result is remembered on ``device`` (an expression's value for a device is fixed)."""
        known = device.results.get(self.expression)
        if known is None:
            try:
                known = self._evaluate(device)
            except CelRuntimeError as e:
                known = str(e)
            device.results[self.expression] = known
        if isinstance(known, str):
            raise CelRuntimeError(known)
        return known

    def _evaluate(self, device: DeviceInput) -> bool:
        if device.error:
            raise CelRuntimeError(device.error)
        from cel_expr_python import cel

        r = self.program.eval(device.activation(self.literals))
        v = r.value()
        if r.type() == cel.Type.ERROR:
            raise CelRuntimeError(_translate_runtime(str(v)))
        if not isinstance(v, bool):
            raise CelRuntimeError(
                f"CEL result of type {_type_name(r.type())} could not be converted to bool: "
                f"type conversion error from {_type_name(r.type())} to 'bool'"
            )
        return v


def _type_name(t: Any) -> str:
    name = str(t.name())
    return name.lower() if name.isupper() else name


def compile_expression(expression: str) -> CompilationResult:
    """``CompileCELExpression``: a compile error comes back in ``error`` (never raised)."""
    from cel_expr_python import cel

    try:
        program = environment().compile(expression)
    except RuntimeError as e:
        text = _STATUS.sub("", str(e)).removesuffix(" [INVALID_ARGUMENT]")
        return CompilationResult(expression, CelError(ERROR_TYPE_INVALID, "compilation failed: " + text))
    out = program.return_type()
    if out != cel.Type.BOOL and out != cel.Type.DYN:
        return CompilationResult(
            expression,
            CelError(ERROR_TYPE_INVALID, f"must evaluate to bool or the unknown type, not {_type_name(out)}"),
        )
    literals = frozenset(m.group(2) for m in _STRING.finditer(expression) if "\\" not in m.group(2))
    return CompilationResult(expression, None, program, literals)


class CelCache:
    """``cel.Cache``: compiled expressions by text, least recently used dropped past ``max_entries``.
    Thread-safe."""

    def __init__(self, max_entries: int = DEFAULT_CACHE_SIZE) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[str, CompilationResult] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_compile(self, expression: str) -> CompilationResult:
        with self._lock:
            hit = self._entries.get(expression)
            if hit is not None:
                self._entries.move_to_end(expression)
                return hit
        result = compile_expression(expression)
        with self._lock:
            self._entries[expression] = result
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return result

    def __len__(self) -> int:
        return len(self._entries)


def as_mapping(inp: DeviceInput) -> Mapping[str, Any]:
    """The ``device`` variable's value (for tests and explanations)."""
    return inp.data
