"""The Kubernetes DRA CEL environment (``staging/src/k8s.io/dynamic-resource-allocation/cel``) on
top of Google's CEL runtime (``cel-expr-python``): ``device.driver``,
``device.attributes["domain"].name``, ``device.capacity["domain"].name``, the Kubernetes quantity
and semver libraries, ``cel.bind``, optional types and the extended string functions."""

from kubesched.api.dra.cel.compiler import (
    CelCache,
    CelError,
    CelRuntimeError,
    CompilationResult,
    DeviceInput,
    compile_expression,
    device_input,
    enhance_runtime_error,
)

__all__ = [
    "CelCache",
    "CelError",
    "CelRuntimeError",
    "CompilationResult",
    "DeviceInput",
    "compile_expression",
    "device_input",
    "enhance_runtime_error",
]
