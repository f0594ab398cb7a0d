"""``--plugin-module``: out-of-tree plugins registered by a module's ``register(registry)``."""

from __future__ import annotations

import importlib
from typing import Any

from kubesched.errors import ConfigError

__all__ = ["load_plugin_modules"]


def load_plugin_modules(registry: Any, modules: tuple[str, ...]) -> None:
    """Import each module and call its ``register(registry)`` (out-of-tree plugins without an
    installed entry point). Raises ConfigError naming the module."""
    for name in modules:
        try:
            mod = importlib.import_module(name)
        except ImportError as e:
            raise ConfigError("--plugin-module", f"cannot import {name}: {e}") from None
        register = getattr(mod, "register", None)
        if not callable(register):
            raise ConfigError("--plugin-module", f"module {name} has no register(registry) function")
        register(registry)
