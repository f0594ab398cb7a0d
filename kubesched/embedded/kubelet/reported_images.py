"""Images the kubelet model knows only from what nodes report: a node's ``status.images`` entry
whose image the catalogue lacks, modelled as one opaque layer of the entry's ``sizeBytes``.

The one rule both the replay (:mod:`kubesched.modes.record.recording`) and ``serve --kubelet``
(:mod:`kubesched.embedded.kubelet.live`) follow: an image's size and layers come from the
catalogue, else (replay only) the registry cache, else one opaque layer of the size a node's
``status.images`` (or a ``Pulled`` Event) reported, else (``serve --kubelet`` only) a default.

Names are matched as the container runtime resolves them (:func:`kubesched.images.names.normalize_image`):
``nginx:1.25`` in a pod is ``docker.io/library/nginx:1.25`` in node status; a digest name
(``docker.io/library/nginx@sha256:...``) keys its digest form only. No upstream counterpart
(the kubelet learns image sizes from the runtime, ``pkg/kubelet/nodestatus/setters.go: Images``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.images.catalogue import CatalogueImage, Layer
from kubesched.images.names import InvalidImageReference, normalize_image, parse_image_ref

__all__ = ["opaque_image", "status_entry_names", "status_entry_size", "status_image_sizes"]


def opaque_image(ref: str, size_bytes: int, source: str, digest_name: str | None = None) -> CatalogueImage:
    """``ref`` (any form; named by its canonical reference) as one opaque layer of ``size_bytes``
    (compressed bytes, > 0), layer id ``image:<canonical>`` so every node shares it. ``digest_name``
    (a ``name@sha256:...`` a node reported for it) gives the manifest digest, so the image keeps
    that name in ``status.images``. Raises :class:`InvalidImageReference` for a bad ``ref``."""
    parsed = parse_image_ref(ref)
    layer = Layer(f"image:{parsed.canonical}", size_bytes, "not in the catalogue")
    digest = None
    if digest_name is not None and parsed.digest is None:
        try:
            reported = parse_image_ref(digest_name)
        except InvalidImageReference:
            reported = None
        if reported is not None and reported.digest is not None and reported.name == parsed.name:
            digest = reported.digest
    return CatalogueImage(
        name=parsed.canonical,
        ref=parsed,
        image_class="cpu",
        layers=(layer,),
        source=source,
        confidence="derived",
        layers_derived=True,
        manifest_digest=digest,
        unique_layers=(layer,),
    )


def status_entry_names(entry: object) -> list[str]:
    """Canonical names of one ``status.images[]`` entry (unparseable names left out)."""
    names = entry.get("names") if isinstance(entry, Mapping) else None
    out: list[str] = []
    for name in names if isinstance(names, list) else []:
        try:
            out.append(normalize_image(str(name)))
        except InvalidImageReference:
            continue
    return out


def status_entry_size(entry: object) -> int | None:
    """The ``sizeBytes`` (bytes) of one ``status.images[]`` entry; None unless a positive integer."""
    size = entry.get("sizeBytes") if isinstance(entry, Mapping) else None
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        return None
    return size


def status_image_sizes(nodes: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Image sizes (bytes) the nodes' ``status.images`` report, by canonical name (every name of an
    entry; the first node reporting a name wins). Entries without a positive integer
    ``sizeBytes`` are skipped."""
    sizes: dict[str, int] = {}
    for node in nodes:
        for entry in (node.get("status") or {}).get("images") or []:
            size = status_entry_size(entry)
            if size is None:
                continue
            for canon in status_entry_names(entry):
                sizes.setdefault(canon, size)
    return sizes
