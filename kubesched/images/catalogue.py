"""Image catalogue: images as ordered lists of content-addressed layers with compressed sizes.

File format (YAML; the shipped default is ``kubesched/data/image-catalogue.yaml``, whose header
documents every field)::

    version: 1
    images:
      - name: redis:latest              # any reference; stored normalised (docker.io/library/redis:latest)
        class: cpu                      # cpu | gpu
        size_bytes: 55474442            # optional: sourced compressed total, checked against the layers
        source: "github.com/docker-library/repo-info ..."
        confidence: verified            # verified | secondary | derived
        layers_derived: false           # optional (default false): the layer split is synthetic
        note: "..."                     # optional
        manifest_digest: sha256:...     # optional: reported as the name@digest form in node status
        layers:                         # bottom (base) layer first
          - {digest: sha256:6b37..., size_bytes: 29830418, note: debian trixie rootfs}
          - {id: my-synthetic-layer, size_bytes: 1000}

A layer is identified by its ``digest`` (``sha256:<64 hex>``) or, when the digest is unknown, a
synthetic ``id``; the same identifier in two images is one shared blob and must have the same size
everywhere. Sizes are bytes, compressed (registry transfer size).

Errors: :class:`~kubesched.errors.ConfigError` whose ``where`` is the file and whose path names the
field, e.g. ``image-catalogue.yaml: images[3].layers[1].size_bytes: must be a positive integer``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from kubesched.api.document_file import parse_document, read_text
from kubesched.errors import ConfigError
from kubesched.images.names import ImageRef, InvalidImageReference, parse_image_ref

__all__ = [
    "Layer",
    "CatalogueImage",
    "ImageCatalogue",
    "ImageClass",
    "load_catalogue",
    "parse_catalogue",
    "default_catalogue",
    "DEFAULT_CATALOGUE_RESOURCE",
]

ImageClass = Literal["gpu", "cpu"]
DEFAULT_CATALOGUE_RESOURCE = "image-catalogue.yaml"
_CONFIDENCE = ("verified", "secondary", "derived")
_CLASSES = ("gpu", "cpu")
_SHA256 = re.compile(r"^sha256:[a-f0-9]{64}$")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/+-]*$")
_IMAGE_KEYS = {
    "name",
    "class",
    "size_bytes",
    "source",
    "confidence",
    "layers_derived",
    "note",
    "manifest_digest",
    "layers",
}
_LAYER_KEYS = {"digest", "id", "size_bytes", "note"}


@dataclass(frozen=True, slots=True)
class Layer:
    """A content-addressed layer blob: ``id`` (digest or synthetic id), ``size_bytes`` (compressed)."""

    id: str
    size_bytes: int
    note: str = ""


@dataclass(frozen=True, slots=True)
class CatalogueImage:
    """One image of the catalogue.

    ``name`` is the canonical reference (``docker.io/library/redis:latest``), ``layers`` bottom
    first (a layer may repeat; ``unique_layers`` drops repeats, keeping first occurrences),
    ``size_bytes`` the compressed total of ``layers`` (what containerd reports as the image size).
    """

    name: str
    ref: ImageRef
    image_class: ImageClass
    layers: tuple[Layer, ...]
    source: str
    confidence: str
    layers_derived: bool = False
    note: str = ""
    manifest_digest: str | None = None
    unique_layers: tuple[Layer, ...] = field(default=(), compare=False)

    @property
    def size_bytes(self) -> int:
        """Compressed size in bytes: the sum of the image's layers (each listed layer once)."""
        return sum(layer.size_bytes for layer in self.layers)

    @property
    def digest_name(self) -> str | None:
        """``name@digest`` (the kubelet's RepoDigests form) when the manifest digest is known."""
        if self.ref.digest is not None:
            return self.ref.digested
        if self.manifest_digest is not None:
            return f"{self.ref.name}@{self.manifest_digest}"
        return None


class ImageCatalogue:
    """Images by canonical name, in file order, plus the shared layer table.

    ``catalogue["nginx"]`` normalises the key first and raises KeyError for an unknown image;
    :meth:`get` returns None instead. :meth:`of_class` lists the images of one class in file
    order (the popularity rank used by :class:`~kubesched.images.assign.ImageAssigner`).
    """

    def __init__(self, images: Sequence[CatalogueImage], where: str = "<catalogue>") -> None:
        self.where = where
        self._images: dict[str, CatalogueImage] = {}
        self.layers: dict[str, Layer] = {}
        for image in images:
            if image.name in self._images:
                raise ConfigError("images", f"duplicate image {image.name}", where)
            self._images[image.name] = image
            for layer in image.layers:
                self.layers.setdefault(layer.id, layer)

    def __len__(self) -> int:
        return len(self._images)

    def __iter__(self) -> Iterator[CatalogueImage]:
        return iter(self._images.values())

    def __contains__(self, ref: object) -> bool:
        return isinstance(ref, str) and self.get(ref) is not None

    def __getitem__(self, ref: str) -> CatalogueImage:
        image = self.get(ref)
        if image is None:
            raise KeyError(f"image {ref!r} is not in the catalogue {self.where}")
        return image

    def get(self, ref: str) -> CatalogueImage | None:
        """The image for reference ``ref`` (any form: ``nginx``, ``docker.io/library/nginx:latest``),
        or None when absent or invalid."""
        image = self._images.get(ref)
        if image is not None:
            return image
        try:
            canonical = parse_image_ref(ref).canonical
        except InvalidImageReference:
            return None
        return self._images.get(canonical)

    @property
    def names(self) -> list[str]:
        """Canonical names in file order."""
        return list(self._images)

    def of_class(self, image_class: ImageClass) -> list[CatalogueImage]:
        """Images whose ``class`` is ``image_class``, in file order."""
        return [image for image in self._images.values() if image.image_class == image_class]


def _fail(path: str, message: str, where: str) -> ConfigError:
    return ConfigError(path, message, where)


def _positive_int(value: Any, path: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise _fail(path, f"must be a positive integer, got {value!r}", where)
    return value


def _string(value: Any, path: str, where: str, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise _fail(path, f"must be a non-empty string, got {value!r}", where)
    return value


def _parse_layer(raw: Any, path: str, where: str) -> Layer:
    if not isinstance(raw, Mapping):
        raise _fail(path, f"must be a mapping with digest or id and size_bytes, got {raw!r}", where)
    unknown = sorted(set(raw) - _LAYER_KEYS)
    if unknown:
        raise _fail(
            f"{path}.{unknown[0]}", f"unknown field (allowed: {', '.join(sorted(_LAYER_KEYS))})", where
        )
    if ("digest" in raw) == ("id" in raw):
        raise _fail(path, "exactly one of digest or id is required", where)
    if "digest" in raw:
        ident = raw["digest"]
        if not isinstance(ident, str) or not _SHA256.match(ident):
            raise _fail(f"{path}.digest", f"must be sha256:<64 lowercase hex>, got {ident!r}", where)
    else:
        ident = raw["id"]
        if not isinstance(ident, str) or not _ID.match(ident):
            raise _fail(
                f"{path}.id", f"must be a non-empty identifier ([A-Za-z0-9._:/+-]), got {ident!r}", where
            )
        if _SHA256.match(ident):
            raise _fail(f"{path}.id", "a sha256 digest belongs in digest, not id", where)
    if "size_bytes" not in raw:
        raise _fail(f"{path}.size_bytes", "required", where)
    size = _positive_int(raw["size_bytes"], f"{path}.size_bytes", where)
    note = _string(raw.get("note"), f"{path}.note", where, required=False)
    return Layer(ident, size, note)


def _parse_image(raw: Any, path: str, where: str, seen_layers: dict[str, tuple[int, str]]) -> CatalogueImage:
    if not isinstance(raw, Mapping):
        raise _fail(path, f"must be a mapping, got {raw!r}", where)
    unknown = sorted(set(raw) - _IMAGE_KEYS)
    if unknown:
        raise _fail(
            f"{path}.{unknown[0]}", f"unknown field (allowed: {', '.join(sorted(_IMAGE_KEYS))})", where
        )
    for key in ("name", "class", "source", "confidence", "layers"):
        if key not in raw:
            raise _fail(f"{path}.{key}", "required", where)
    name_text = _string(raw["name"], f"{path}.name", where)
    try:
        ref = parse_image_ref(name_text)
    except InvalidImageReference as err:
        raise _fail(f"{path}.name", str(err), where) from None
    image_class = raw["class"]
    if image_class not in _CLASSES:
        raise _fail(f"{path}.class", f"must be one of {', '.join(_CLASSES)}, got {image_class!r}", where)
    source = _string(raw["source"], f"{path}.source", where)
    confidence = raw["confidence"]
    if confidence not in _CONFIDENCE:
        raise _fail(
            f"{path}.confidence", f"must be one of {', '.join(_CONFIDENCE)}, got {confidence!r}", where
        )
    derived = raw.get("layers_derived", False)
    if not isinstance(derived, bool):
        raise _fail(f"{path}.layers_derived", f"must be true or false, got {derived!r}", where)
    note = _string(raw.get("note"), f"{path}.note", where, required=False)
    manifest_digest = raw.get("manifest_digest")
    if manifest_digest is not None and (
        not isinstance(manifest_digest, str) or not _SHA256.match(manifest_digest)
    ):
        raise _fail(
            f"{path}.manifest_digest", f"must be sha256:<64 lowercase hex>, got {manifest_digest!r}", where
        )
    raw_layers = raw["layers"]
    if not isinstance(raw_layers, list) or not raw_layers:
        raise _fail(f"{path}.layers", "must be a non-empty list", where)
    layers: list[Layer] = []
    for j, raw_layer in enumerate(raw_layers):
        lpath = f"{path}.layers[{j}]"
        layer = _parse_layer(raw_layer, lpath, where)
        previous = seen_layers.get(layer.id)
        if previous is not None and previous[0] != layer.size_bytes:
            raise _fail(
                f"{lpath}.size_bytes",
                f"layer {layer.id} is {layer.size_bytes} bytes here but {previous[0]} at {previous[1]}",
                where,
            )
        seen_layers.setdefault(layer.id, (layer.size_bytes, lpath))
        layers.append(layer)
    unique: dict[str, Layer] = {}
    for layer in layers:
        unique.setdefault(layer.id, layer)
    image = CatalogueImage(
        name=ref.canonical,
        ref=ref,
        image_class=image_class,
        layers=tuple(layers),
        source=source,
        confidence=confidence,
        layers_derived=derived,
        note=note,
        manifest_digest=manifest_digest,
        unique_layers=tuple(unique.values()),
    )
    if "size_bytes" in raw:
        total = _positive_int(raw["size_bytes"], f"{path}.size_bytes", where)
        if total != image.size_bytes:
            raise _fail(
                f"{path}.size_bytes", f"is {total} but the layers add up to {image.size_bytes}", where
            )
    return image


def parse_catalogue(data: Any, where: str = "<catalogue>") -> ImageCatalogue:
    """Build an :class:`ImageCatalogue` from parsed YAML ``data``; ``where`` names the source in
    errors. Raises :class:`~kubesched.errors.ConfigError` naming the field on any invalid value
    (unknown fields, bad reference, bad digest, size mismatch, duplicate image, a shared layer
    with two sizes)."""
    if not isinstance(data, Mapping):
        raise _fail("", "the catalogue must be a mapping with an images list", where)
    unknown = sorted(set(data) - {"version", "images"})
    if unknown:
        raise _fail(unknown[0], "unknown field (allowed: images, version)", where)
    version = data.get("version", 1)
    if version != 1:
        raise _fail("version", f"unsupported version {version!r} (supported: 1)", where)
    raw_images = data.get("images")
    if not isinstance(raw_images, list) or not raw_images:
        raise _fail("images", "must be a non-empty list", where)
    seen_layers: dict[str, tuple[int, str]] = {}
    images: list[CatalogueImage] = []
    names: dict[str, int] = {}
    for i, raw in enumerate(raw_images):
        image = _parse_image(raw, f"images[{i}]", where, seen_layers)
        if image.name in names:
            raise _fail(
                f"images[{i}].name", f"duplicate image {image.name} (also images[{names[image.name]}])", where
            )
        names[image.name] = i
        images.append(image)
    return ImageCatalogue(images, where)


def load_catalogue(path: str | Path | None = None) -> ImageCatalogue:
    """Load a catalogue YAML file; ``None`` loads the shipped default. Raises ConfigError (bad file
    content, YAML syntax, unreadable file)."""
    if path is None:
        return default_catalogue()
    where = str(path)
    return _parse_text(read_text(path, _fail), where)


def _parse_text(text: str, where: str) -> ImageCatalogue:
    data = parse_document(text, where, error=_fail)
    return parse_catalogue(data, where)


@lru_cache(maxsize=1)
def default_catalogue() -> ImageCatalogue:
    """The shipped catalogue (``kubesched/data/image-catalogue.yaml``), parsed once."""
    text = (
        resources.files("kubesched").joinpath("data", DEFAULT_CATALOGUE_RESOURCE).read_text(encoding="utf-8")
    )
    return _parse_text(text, DEFAULT_CATALOGUE_RESOURCE)
