"""Give trace pods images: seeded, deterministic Zipf popularity over a catalogue.

The shared traces carry no image names, so the replay assigns one. Two modes:

* ``per-job`` -- every pod is its own job and draws its image independently:
  ``image = pool[zipf(pod name)]``.
* ``per-app`` -- pods belong to ``apps`` applications per pod kind (GPU / CPU); a pod first draws
  its application with Zipf popularity (``app = zipf_apps(pod name)``), and each application
  has one image, drawn once with Zipf popularity over the pool (``image = pool[zipf(app)]``).
  Pods of one application share their image exactly, as replicas of one workload do.

Draws hash ``(seed, purpose, key)`` with BLAKE2b into a uniform number in [0, 1) and invert the
Zipf CDF (weights ``1 / rank ** zipf_s``, rank 1 = first in the pool), so a pod's image depends
only on the seed and its own name, never on the order pods are asked about.

Defaults (documented choices, not measured facts -- the trace has no image data):
``mode="per-app"``, ``zipf_s=1.1`` (a common skew for popularity of content),
``apps=200`` per pod kind, GPU pool = catalogue images of class ``gpu`` in file order,
CPU pool = class ``cpu`` in file order (the file order is the popularity rank).
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Sequence
from typing import Literal

from kubesched.errors import ConfigError
from kubesched.images.catalogue import CatalogueImage, ImageCatalogue

__all__ = ["ImageAssigner", "AssignMode", "zipf_cdf", "DEFAULT_APPS", "DEFAULT_ZIPF_S", "DEFAULT_MODE"]

AssignMode = Literal["per-job", "per-app"]
DEFAULT_MODE: AssignMode = "per-app"
DEFAULT_ZIPF_S = 1.1
DEFAULT_APPS = 200


def zipf_cdf(n: int, s: float) -> list[float]:
    """Cumulative Zipf probabilities for ranks 1..n with exponent ``s`` (last entry exactly 1.0)."""
    weights = [1.0 / (k**s) for k in range(1, n + 1)]
    total = sum(weights)
    cdf: list[float] = []
    acc = 0.0
    for w in weights:
        acc += w
        cdf.append(acc / total)
    cdf[-1] = 1.0
    return cdf


def _uniform(seed: int, purpose: str, key: str) -> float:
    digest = hashlib.blake2b(f"{seed}\x00{purpose}\x00{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


class ImageAssigner:
    """Deterministic image per pod: ``assigner.image_for(pod_name, gpu=True)``.

    Args: ``catalogue``; ``seed`` (int); ``mode`` (``"per-job"`` | ``"per-app"``); ``zipf_s``
    (> 0); ``apps`` (applications per pod kind, >= 1, used in per-app mode); ``gpu_images`` /
    ``cpu_images`` (references in popularity order; default: the catalogue's class gpu / cpu
    images in file order). Raises ConfigError (path ``imageAssignment.<field>``) for a bad value
    or an image missing from the catalogue.
    """

    def __init__(
        self,
        catalogue: ImageCatalogue,
        seed: int = 0,
        mode: AssignMode = DEFAULT_MODE,
        zipf_s: float = DEFAULT_ZIPF_S,
        apps: int = DEFAULT_APPS,
        gpu_images: Sequence[str] | None = None,
        cpu_images: Sequence[str] | None = None,
    ) -> None:
        if mode not in ("per-job", "per-app"):
            raise ConfigError("imageAssignment.mode", f"must be per-job or per-app, got {mode!r}")
        if not zipf_s > 0:
            raise ConfigError("imageAssignment.zipfS", f"must be > 0, got {zipf_s!r}")
        if isinstance(apps, bool) or not isinstance(apps, int) or apps < 1:
            raise ConfigError("imageAssignment.apps", f"must be an integer >= 1, got {apps!r}")
        self.catalogue = catalogue
        self.seed = seed
        self.mode: AssignMode = mode
        self.zipf_s = zipf_s
        self.apps = apps
        self.gpu_pool = self._pool(gpu_images, "gpu", "gpuImages")
        self.cpu_pool = self._pool(cpu_images, "cpu", "cpuImages")
        self._image_cdf = {
            "gpu": zipf_cdf(len(self.gpu_pool), zipf_s),
            "cpu": zipf_cdf(len(self.cpu_pool), zipf_s),
        }
        self._app_cdf = zipf_cdf(apps, zipf_s)
        self._app_image: dict[tuple[str, int], CatalogueImage] = {}

    def _pool(
        self, refs: Sequence[str] | None, image_class: Literal["gpu", "cpu"], field: str
    ) -> list[CatalogueImage]:
        if refs is None:
            pool = self.catalogue.of_class(image_class)
            if not pool:
                raise ConfigError(
                    f"imageAssignment.{field}",
                    f"the catalogue {self.catalogue.where} has no images of class {image_class}",
                )
            return pool
        if not refs:
            raise ConfigError(f"imageAssignment.{field}", "must not be empty")
        pool = []
        for i, ref in enumerate(refs):
            image = self.catalogue.get(ref)
            if image is None:
                raise ConfigError(
                    f"imageAssignment.{field}[{i}]",
                    f"image {ref!r} is not in the catalogue {self.catalogue.where}",
                )
            pool.append(image)
        return pool

    @staticmethod
    def _rank(cdf: list[float], u: float) -> int:
        return min(bisect.bisect_right(cdf, u), len(cdf) - 1)

    def app_of(self, pod_name: str, gpu: bool) -> int:
        """The application index (0 = most popular) of a pod in per-app mode."""
        kind = "gpu" if gpu else "cpu"
        return self._rank(self._app_cdf, _uniform(self.seed, f"app/{kind}", pod_name))

    def image_for(self, pod_name: str, gpu: bool) -> CatalogueImage:
        """The image of pod ``pod_name`` (a GPU pod draws from the GPU pool, a CPU pod from the CPU pool)."""
        kind: Literal["gpu", "cpu"] = "gpu" if gpu else "cpu"
        pool = self.gpu_pool if gpu else self.cpu_pool
        cdf = self._image_cdf[kind]
        if self.mode == "per-job":
            return pool[self._rank(cdf, _uniform(self.seed, f"image/{kind}", pod_name))]
        app = self.app_of(pod_name, gpu)
        cached = self._app_image.get((kind, app))
        if cached is None:
            cached = pool[self._rank(cdf, _uniform(self.seed, f"app-image/{kind}", str(app)))]
            self._app_image[(kind, app)] = cached
        return cached
