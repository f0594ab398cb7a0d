"""The image facts of the pre-pull controller: the image catalogue, then the registry lookups the
image plugins use (:class:`~kubesched.images.registry_layers.RegistryLayerSource`, one per
registry-settings file and process, so the scheduler's plugins and the controller share lookups
and cache).

:meth:`ImageFacts.get` answers from the catalogue or the lookups' cache and never waits for the
network (it is called from informer handlers): an image seen for the first time is unknown until
its background lookup completes, as for the plugins. So that the planner sees registry images at
its first tick with them, the controller calls :meth:`ImageFacts.prefetch` with every image
reference of the tick's pods and nodes, on its own thread, before the planner runs: new references
are looked up and the tick waits for them, at most ``wait_seconds``. A failed lookup leaves the
image unknown (the planner skips applications with unknown images) and is retried after the
settings' ``errorTtlSeconds``.

Without a registry-settings file the facts are the catalogue's alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from kubesched.images.catalogue import CatalogueImage, ImageCatalogue

if TYPE_CHECKING:
    from kubesched.config.types import KubeSchedulerConfiguration
    from kubesched.images.registry_layers import RegistryLayerSource

__all__ = ["ImageFacts", "REGISTRY_PLUGINS", "registry_settings_of"]

#: plugins whose ``registrySettingsPath`` argument names the registry settings of a profile
REGISTRY_PLUGINS = ("ImagePullTimeSaved", "ImageCacheWait")


def registry_settings_of(config: KubeSchedulerConfiguration | None) -> str | None:
    """The first ``registrySettingsPath`` in the profiles' ``pluginConfig`` of the
    :data:`REGISTRY_PLUGINS` (profile order), or None."""
    for profile in config.profiles if config is not None else ():
        for pc in profile.plugin_config:
            path = (pc.args or {}).get("registrySettingsPath") if pc.name in REGISTRY_PLUGINS else None
            if isinstance(path, str) and path:
                return path
    return None


class ImageFacts:
    """Catalogue images, else registry lookups (see the module docstring). ``source``: the
    registry layer source (None: catalogue only); ``wait_seconds``: most a :meth:`prefetch` waits."""

    def __init__(
        self, catalogue: ImageCatalogue, source: RegistryLayerSource | None = None, wait_seconds: float = 2.0
    ) -> None:
        self.catalogue = catalogue
        self.source = source
        self.wait_seconds = wait_seconds
        self._asked: set[str] = set()

    def get(self, ref: str) -> CatalogueImage | None:
        """The catalogue image of ``ref`` (any spelling), else the registry's (cached), else None."""
        image = self.catalogue.get(ref)
        if image is None and self.source is not None:
            image = self.source.lookup(ref)
        return image

    def prefetch(self, refs: Iterable[str]) -> int:
        """Look up the references not asked before and missing from the catalogue, then wait for
        the lookups (at most ``wait_seconds``). Returns how many were asked."""
        if self.source is None:
            return 0
        asked = 0
        for ref in refs:
            if ref in self._asked or not ref:
                continue
            self._asked.add(ref)
            if self.catalogue.get(ref) is None:
                self.source.lookup(ref)
                asked += 1
        if asked:
            self.source.wait_idle(self.wait_seconds)
        return asked
