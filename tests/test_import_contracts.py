"""The import-linter contracts in ``pyproject.toml`` cover the whole tree: the plugin independence
contract lists exactly the packages of the in-tree plugin registry, and every package and top-level
module of ``kubesched`` sits in a layer."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import kubesched
from kubesched.plugins import IN_TREE

ROOT = Path(__file__).resolve().parents[1]


def _contracts() -> list[dict[str, Any]]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return list(data["tool"]["importlinter"]["contracts"])


def _contract(name_start: str) -> dict[str, Any]:
    found = [c for c in _contracts() if str(c["name"]).startswith(name_start)]
    assert len(found) == 1, name_start
    return found[0]


def test_plugin_independence_lists_every_in_tree_plugin_package() -> None:
    listed = set(_contract("Plugins are independent of each other")["modules"])
    registry = {spec.split(":")[0].rsplit(".", 1)[0] for spec in IN_TREE.values()}
    assert listed == registry


def test_every_package_of_kubesched_is_in_a_layer() -> None:
    layers = _contract("Layers: each package imports only the packages below it")["layers"]
    in_layers = {name.strip() for layer in layers for name in str(layer).split("|")}
    pkg = Path(kubesched.__file__).parent
    packages = {p.name for p in pkg.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in pkg.glob("*.py")} - {"__init__", "testing"}
    assert packages | modules == in_layers
