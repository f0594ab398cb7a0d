"""Registry lookups in the background, for images the catalogue does not know.

:class:`RegistryLayerSource` answers :meth:`~RegistryLayerSource.lookup` from its cache only; it
never waits for the network, so it is safe inside a scheduling cycle. The first sighting of an
image returns None (the plugins score it as one opaque layer) and queues a lookup on a small
thread pool (``workers``); once it is done, :attr:`~RegistryLayerSource.generation` grows and the
next cycles see the image's layers (:class:`~kubesched.images.layer_index.ImageLayerIndex` drops
its caches when the generation changes). A fetched image is trusted for ``ttl_seconds``, then
looked up again in the background while the old answer is still served; a failed lookup is
logged once per image and message and retried after ``error_ttl_seconds``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from kubesched.errors import ConfigError
from kubesched.images.catalogue import CatalogueImage
from kubesched.images.names import InvalidImageReference, parse_image_ref
from kubesched.images.registry import RegistryClient, RegistryError
from kubesched.images.registry_settings import RegistrySettings, load_registry_settings

__all__ = ["RegistryLayerSource", "close_shared_registry_sources", "shared_registry_source"]

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Entry:
    image: CatalogueImage | None
    expires: float
    error: str = ""


class RegistryLayerSource:
    """Cached, non-blocking image layers from registries (see the module docstring).

    ``client``: the :class:`RegistryClient` (its settings give the TTLs and workers unless
    ``settings`` is given); ``clock``: monotonic seconds (tests pass a fake)."""

    def __init__(
        self,
        client: RegistryClient,
        settings: RegistrySettings | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.settings = settings or client.settings
        self.clock = clock
        self.generation = 0
        self.lookups = 0
        self.failures = 0
        self._entries: dict[str, _Entry] = {}
        self._pending: set[str] = set()
        self._logged: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._pool = ThreadPoolExecutor(
            max_workers=self.settings.workers, thread_name_prefix="registry-lookup"
        )
        self._closed = False

    def lookup(self, ref: str) -> CatalogueImage | None:
        """The image's layers if a lookup has completed (possibly stale), else None; queues a lookup
        when there is none or it expired. Never blocks on the network."""
        try:
            parsed = parse_image_ref(ref)
        except InvalidImageReference:
            return None
        if not parsed.domain:
            return None
        key = parsed.canonical
        with self._lock:
            entry = self._entries.get(key)
            if (
                (entry is None or entry.expires <= self.clock())
                and key not in self._pending
                and not self._closed
            ):
                self._pending.add(key)
                self._pool.submit(self._fetch, key)
            return entry.image if entry is not None else None

    def _fetch(self, key: str) -> None:
        image: CatalogueImage | None = None
        error = ""
        try:
            image = self.client.image_layers(key).to_catalogue_image()
        except (RegistryError, ConfigError) as e:
            error = str(e)
        except Exception as e:  # noqa: BLE001 - a lookup must never kill the worker
            error = f"image {key}: {type(e).__name__}: {e}"
        now = self.clock()
        with self._lock:
            self.lookups += 1
            old = self._entries.get(key)
            if error:
                self.failures += 1
                if (key, error) not in self._logged:
                    self._logged.add((key, error))
                    log.warning("registry lookup failed (the image counts as one opaque layer): %s", error)
                # keep a previous good answer: a registry outage does not forget layers
                self._entries[key] = _Entry(
                    old.image if old is not None else None, now + self.settings.error_ttl_seconds, error
                )
            else:
                self._entries[key] = _Entry(image, now + self.settings.ttl_seconds)
            if (old.image if old is not None else None) != (self._entries[key].image):
                self.generation += 1
            self._pending.discard(key)
            self._idle.notify_all()

    def error(self, ref: str) -> str:
        """The last lookup error of ``ref`` ("" when none)."""
        try:
            key = parse_image_ref(ref).canonical
        except InvalidImageReference:
            return ""
        with self._lock:
            entry = self._entries.get(key)
            return entry.error if entry is not None else ""

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no lookup is queued or running (tests, the CLI); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
            return True

    def close(self) -> None:
        """Stop taking lookups, wait for the running ones, close the HTTP clients."""
        with self._lock:
            self._closed = True
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.client.close()


_SHARED: dict[str, RegistryLayerSource] = {}
_SHARED_LOCK = threading.Lock()


def shared_registry_source(settings_path: str) -> RegistryLayerSource:
    """One source per settings file for the whole process, so the plugins of every profile share
    lookups and cache. Raises ConfigError for a bad settings file."""
    with _SHARED_LOCK:
        source = _SHARED.get(settings_path)
        if source is None:
            settings = load_registry_settings(settings_path)
            source = _SHARED[settings_path] = RegistryLayerSource(RegistryClient(settings))
        return source


def close_shared_registry_sources() -> None:
    """Close every shared source (at shutdown; tests)."""
    with _SHARED_LOCK:
        sources = list(_SHARED.values())
        _SHARED.clear()
    for source in sources:
        source.close()
