"""What ``kubesched images estimate`` predicts for one image: its layers, from where, and the
idle-node pull seconds of the pull model (:class:`~kubesched.images.pull_model.PullModel`).

An image reference is resolved as the rest of kubesched resolves it:

1. the image catalogue (any spelling: tag or digest form, normalised) -> ``source: catalogue``;
2. else its registry, through :class:`~kubesched.images.registry.RegistryClient` (manifest ->
   platform manifest -> layer digests and sizes) -> ``source: registry``;
3. else (no registry lookup allowed, or the lookup failed) the fallback of the simulated kubelet
   (``serve --kubelet``) and of the image plugins' first sighting: one opaque layer of
   :data:`OPAQUE_IMAGE_BYTES` -> ``source: default``, with ``note`` saying why.

Errors: :class:`~kubesched.errors.KubeschedError` for a reference that does not parse (the kubelet
would refuse it with ``InvalidImageName``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from kubesched.errors import KubeschedError
from kubesched.images.catalogue import CatalogueImage, ImageCatalogue
from kubesched.images.names import InvalidImageReference, parse_image_ref
from kubesched.images.pull_model import PullModel

if TYPE_CHECKING:
    from kubesched.images.registry import RegistryClient

__all__ = ["ImageEstimate", "OPAQUE_IMAGE_BYTES", "Source", "estimate_image", "estimate_size"]

#: compressed bytes of the one opaque layer an image of unknown layers is modelled as
OPAQUE_IMAGE_BYTES = 100_000_000

#: where an estimate's layers come from; ``size``: given by the caller
Source = Literal["catalogue", "registry", "default", "size"]


@dataclass(frozen=True, slots=True)
class ImageEstimate:
    """``image`` (canonical name; None for a bare size), ``bytes`` (compressed, distinct layers),
    ``layers`` (count), ``seconds`` (idle-node pull, rounded to ms), ``source`` and ``note`` (why
    the default was used; "" otherwise)."""

    image: str | None
    bytes: int
    layers: int
    seconds: float
    source: Source
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """``{"image", "bytes", "layers", "seconds", "source"}`` plus ``"note"`` when there is one."""
        out: dict[str, Any] = {
            "image": self.image,
            "bytes": self.bytes,
            "layers": self.layers,
            "seconds": self.seconds,
            "source": self.source,
        }
        if self.note:
            out["note"] = self.note
        return out


def estimate_size(model: PullModel, size_bytes: int, layers: int = 1) -> ImageEstimate:
    """The estimate of an image of ``size_bytes`` in ``layers`` layers (``source: size``)."""
    return ImageEstimate(None, size_bytes, layers, round(model.seconds(size_bytes, layers), 3), "size")


def _of(model: PullModel, image: CatalogueImage, source: Source) -> ImageEstimate:
    size = sum(layer.size_bytes for layer in image.unique_layers)
    layers = len(image.unique_layers)
    return ImageEstimate(image.name, size, layers, round(model.seconds(size, layers), 3), source)


def estimate_image(
    ref: str, model: PullModel, catalogue: ImageCatalogue, registry: RegistryClient | None = None
) -> ImageEstimate:
    """The estimate for image ``ref`` (see the module docstring); ``registry`` None: no lookup.
    Raises KubeschedError for an unparseable reference."""
    found = catalogue.get(ref)
    if found is not None:
        return _of(model, found, "catalogue")
    try:
        parsed = parse_image_ref(ref)
    except InvalidImageReference as e:
        raise KubeschedError(f"image {ref!r}: {e}") from None
    if registry is None:
        why = "not in the image catalogue; registry lookup disabled"
    else:
        from kubesched.images.registry import RegistryError  # httpx only when a registry is asked

        try:
            return _of(model, registry.image_layers(parsed).to_catalogue_image(), "registry")
        except RegistryError as e:
            why = f"not in the image catalogue; registry lookup failed: {e}"
    seconds = round(model.seconds(OPAQUE_IMAGE_BYTES, 1), 3)
    note = (
        f"{why}. Modelled as one opaque layer of {OPAQUE_IMAGE_BYTES} bytes, as `kubesched serve --kubelet` "
        "models it; give --size SIZE [--layers N] for a better estimate"
    )
    return ImageEstimate(parsed.canonical, OPAQUE_IMAGE_BYTES, 1, seconds, "default", note)
