"""Plugin registry: name -> plugin class (``pkg/scheduler/framework/runtime/registry.go``).

In-tree plugins come as ``"module:Class"`` strings (imported lazily, see
:mod:`kubesched.plugins`); third-party plugins come from the Python entry-point group
``kubesched.plugins`` (``name = "package.module:Class"``), so installing a package is
enough to make its plugins nameable in a ``KubeSchedulerConfiguration``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from importlib.metadata import entry_points

from kubesched.errors import ConfigError, NotImplementedPluginError
from kubesched.framework.interfaces import Plugin

ENTRY_POINT_GROUP = "kubesched.plugins"


class Registry:
    """Maps plugin names to classes; resolves lazily and caches."""

    def __init__(
        self,
        lazy: Mapping[str, str] | None = None,
        classes: Mapping[str, type[Plugin]] | None = None,
        *,
        load_entry_points: bool = True,
    ) -> None:
        self._lazy: dict[str, str] = dict(lazy or {})
        self._classes: dict[str, type[Plugin]] = dict(classes or {})
        self._entry_points_loaded = not load_entry_points

    def register(self, cls: type[Plugin], name: str | None = None) -> None:
        """Register ``cls`` under ``name`` (default ``cls.NAME``); raises ``ValueError`` on a duplicate."""
        n = name or cls.NAME
        if n in self._classes or n in self._lazy:
            raise ValueError(f"a plugin named {n} already exists")
        self._classes[n] = cls

    def _load_entry_points(self) -> None:
        if self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name not in self._classes and ep.name not in self._lazy:
                self._lazy[ep.name] = ep.value

    def names(self) -> list[str]:
        """Every registered name (sorted)."""
        self._load_entry_points()
        return sorted(set(self._classes) | set(self._lazy))

    def __contains__(self, name: object) -> bool:
        self._load_entry_points()
        return name in self._classes or name in self._lazy

    def get(self, name: str, path: str = "") -> type[Plugin]:
        """The class for ``name``.

        Raises :class:`NotImplementedPluginError` for an in-tree upstream plugin whose module is not
        available yet, and :class:`ConfigError` (``plugin "X" does not exist``) for an unknown name.
        """
        cls = self._classes.get(name)
        if cls is not None:
            return cls
        if name not in self._lazy:
            self._load_entry_points()
        target = self._lazy.get(name)
        if target is None:
            raise ConfigError(path, f'plugin "{name}" does not exist')
        module, _, attr = target.partition(":")
        in_tree = module.startswith("kubesched.")
        origin = (
            f"plugin {name!r} ({target})"
            if in_tree
            else f"plugin {name!r} (entry point {name} = {target!r} in group {ENTRY_POINT_GROUP})"
        )
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as e:
            if in_tree and e.name == module:
                raise NotImplementedPluginError(
                    path, f"plugin {name} is not implemented yet in kubesched"
                ) from None
            raise ConfigError(path, f"{origin}: cannot import {module}: {e}") from None
        except Exception as e:  # a third-party module may fail in any way while importing
            raise ConfigError(path, f"{origin}: importing {module} failed: {type(e).__name__}: {e}") from None
        cls = getattr(mod, attr, None)
        if cls is None:
            raise ConfigError(path, f"{origin}: module {module} has no attribute {attr!r}")
        if not (isinstance(cls, type) and issubclass(cls, Plugin)):
            raise ConfigError(
                path,
                f"{origin}: {target} is not a kubesched plugin class "
                "(derive it from kubesched.framework.Plugin and an extension-point interface)",
            )
        self._classes[name] = cls
        return cls

    def available(self, name: str) -> bool:
        """True if ``name`` resolves to an importable plugin class."""
        try:
            self.get(name)
        except ConfigError:
            return False
        return True
