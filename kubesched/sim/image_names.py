"""Re-export of :mod:`kubesched.api.image_names` (image reference normalisation as container
runtimes do it). The implementation lives in ``kubesched.api`` so that scheduler plugins can use
it without importing the simulator; this module keeps the historical import path working."""

from __future__ import annotations

from kubesched.api.image_names import (
    DEFAULT_DOMAIN,
    LEGACY_DEFAULT_DOMAIN,
    LOCALHOST,
    NAME_TOTAL_LENGTH_MAX,
    OFFICIAL_REPO_PREFIX,
    ImageRef,
    InvalidImageReference,
    normalize_image,
    parse_image_ref,
    same_image,
)

__all__ = [
    "ImageRef",
    "InvalidImageReference",
    "parse_image_ref",
    "normalize_image",
    "same_image",
    "DEFAULT_DOMAIN",
    "LEGACY_DEFAULT_DOMAIN",
    "OFFICIAL_REPO_PREFIX",
    "LOCALHOST",
    "NAME_TOTAL_LENGTH_MAX",
]
