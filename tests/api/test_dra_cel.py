"""The DRA CEL environment: device variable, quantity and semver libraries, upstream's error texts."""

from __future__ import annotations

import pytest

from kubesched.api.dra import ResourceSlice
from kubesched.api.dra.cel import (
    CelCache,
    CelRuntimeError,
    compile_expression,
    device_input,
    enhance_runtime_error,
)

DRIVER = "gpu.example.com"


def _device() -> object:
    s = ResourceSlice.from_obj(
        {
            "metadata": {"name": "s"},
            "spec": {
                "driver": DRIVER,
                "pool": {"name": "n1", "resourceSliceCount": 1},
                "nodeName": "n1",
                "devices": [
                    {
                        "name": "gpu-0",
                        "attributes": {
                            "model": {"string": "A100"},
                            "index": {"int": 3},
                            "nvlink": {"bool": True},
                            "driverVersion": {"version": "1.2.3-rc.1+b7"},
                            "numa.example.com/node": {"int": 1},
                        },
                        "capacity": {"memory": {"value": "80Gi"}, "cores": {"value": "1500m"}},
                    }
                ],
            },
        }
    )
    return device_input(DRIVER, s.devices[0])


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('device.driver == "gpu.example.com"', True),
        ('device.attributes["gpu.example.com"].model == "A100"', True),
        (
            'device.attributes["gpu.example.com"].index > 2 && device.attributes["gpu.example.com"].nvlink',
            True,
        ),
        ('device.attributes["numa.example.com"].node == 1', True),
        ('has(device.attributes["other.example.com"].model)', False),
        ('"gpu.example.com" in device.attributes', True),
        ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) > 0', True),
        ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("80Gi"))', False),
        ('device.capacity["gpu.example.com"].memory == quantity("80Gi")', True),
        ('device.capacity["gpu.example.com"].cores.isInteger()', False),
        ('device.capacity["gpu.example.com"].cores.add(1).compareTo(quantity("2500m")) == 0', True),
        ('device.capacity["gpu.example.com"].memory.asInteger() == 85899345920', True),
        ('quantity("1") == quantity("1000m") && isQuantity("1Gi") && !isQuantity("1.5.0")', True),
        ('device.attributes["gpu.example.com"].driverVersion.isLessThan(semver("1.2.3"))', True),
        ('device.attributes["gpu.example.com"].driverVersion == semver("1.2.3-rc.1")', True),
        (
            'semver("v1.2", true).compareTo(semver("1.2.0")) == 0 && isSemver("1.0.0") && !isSemver("1.0")',
            True,
        ),
        (
            'cel.bind(g, device.attributes["gpu.example.com"], g.model == "A100" && g.driverVersion.major() == 1)',
            True,
        ),
        ('device.attributes["gpu.example.com"].?missing.orValue("x") == "x"', True),
        ('device.attributes["gpu.example.com"].model.lowerAscii() == "a100"', True),
    ],
)
def test_selector_results(expression: str, expected: bool) -> None:
    r = compile_expression(expression)
    assert r.error is None
    assert r.device_matches(_device()) is expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ('device.attributes["other.example.com"].model == "x"', "no such key: model"),
        ('device.attributes["gpu.example.com"].model > 1', "no such overload"),
        (
            'quantity("1.5.0") == quantity("1")',
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        ('device.capacity["gpu.example.com"].cores.asInteger() == 1', "cannot convert value to integer"),
        (
            'device.attributes["gpu.example.com"].model',
            "CEL result of type string could not be converted to bool: type conversion error from string to 'bool'",
        ),
        ("1 / 0 == 1", "division by zero"),
    ],
)
def test_runtime_errors_in_cel_go_words(expression: str, message: str) -> None:
    r = compile_expression(expression)
    assert r.error is None
    with pytest.raises(CelRuntimeError) as e:
        r.device_matches(_device())  # type: ignore[arg-type]
    assert str(e.value) == message


def test_compile_errors() -> None:
    r = compile_expression("1 +")
    assert r.error is not None and r.error.type == "Invalid"
    assert str(r.error).startswith(
        "compilation failed: ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>'"
    )
    r = compile_expression('"a" + 1 == "a1"')
    assert str(r.error) == (
        "compilation failed: ERROR: <input>:1:5: found no matching overload for '_+_' applied "
        'to \'(string, int)\'\n | "a" + 1 == "a1"\n | ....^'
    )
    assert str(compile_expression("1").error) == "must evaluate to bool or the unknown type, not int"
    assert str(compile_expression('"x"').error) == "must evaluate to bool or the unknown type, not string"


def test_enhanced_no_such_key() -> None:
    assert enhance_runtime_error("no such key: model") == (
        "no such key: model. Consider using CEL optional chaining (?), has() macro, or orValue() for optional fields"
    )
    assert enhance_runtime_error("no such overload") == "no such overload"


def test_cache_is_lru_and_returns_the_same_result() -> None:
    c = CelCache(max_entries=2)
    a = c.get_or_compile("true")
    assert c.get_or_compile("true") is a
    c.get_or_compile("false")
    c.get_or_compile("1 == 1")
    assert len(c) == 2
    assert c.get_or_compile("true") is not a
