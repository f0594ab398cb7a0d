"""Image reference normalisation as container runtimes do it.

Follows ``github.com/distribution/reference`` (vendored by containerd and the docker CLI):
``ParseNormalizedNamed`` (``normalize.go``: ``splitDockerDomain``, the lowercase check and the
64-hex "identifier" check), the ``Parse`` grammar (``regexp.go`` / ``reference.go``) and
``TagNameOnly`` (``helpers.go``: a reference with neither tag nor digest gets ``:latest``).

Examples (input -> :attr:`ImageRef.canonical`)::

    nginx                         -> docker.io/library/nginx:latest
    user/app                      -> docker.io/user/app:latest
    docker.io/nginx               -> docker.io/library/nginx:latest
    index.docker.io/user/app:1    -> docker.io/user/app:1
    registry.k8s.io/pause:3.10.1  -> registry.k8s.io/pause:3.10.1
    localhost:5000/app            -> localhost:5000/app:latest
    nginx@sha256:<64 hex>         -> docker.io/library/nginx@sha256:<64 hex>   (no tag added)
    nginx:1.25@sha256:<64 hex>    -> docker.io/library/nginx:1.25@sha256:<64 hex>

Errors (all :class:`InvalidImageReference`) carry the messages of the Go package, e.g.
``invalid reference format: repository name (library/Nginx) must be lowercase``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from kubesched.errors import KubeschedError

__all__ = ["ImageRef", "InvalidImageReference", "parse_image_ref", "normalize_image", "same_image"]

DEFAULT_DOMAIN = "docker.io"
LEGACY_DEFAULT_DOMAIN = "index.docker.io"
OFFICIAL_REPO_PREFIX = "library/"
LOCALHOST = "localhost"
NAME_TOTAL_LENGTH_MAX = 255

# regexp.go (distribution/reference v0.6)
_ALPHANUMERIC = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_PATH_COMPONENT = _ALPHANUMERIC + r"(?:" + _SEPARATOR + _ALPHANUMERIC + r")*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN_NAME = _DOMAIN_COMPONENT + r"(?:\." + _DOMAIN_COMPONENT + r")*"
_IPV6 = r"\[(?:[a-fA-F0-9:]+)\]"
_DOMAIN_AND_PORT = r"(?:" + _DOMAIN_NAME + r"|" + _IPV6 + r")(?::[0-9]+)?"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}"
_REMOTE_NAME = _PATH_COMPONENT + r"(?:/" + _PATH_COMPONENT + r")*"
_NAME = r"(?:" + _DOMAIN_AND_PORT + r"/)?" + _REMOTE_NAME
_REFERENCE_RE = re.compile(r"^(" + _NAME + r")(?::(" + _TAG + r"))?(?:@(" + _DIGEST + r"))?$")
_ANCHORED_NAME_RE = re.compile(r"^(?:(" + _DOMAIN_AND_PORT + r")/)?(" + _REMOTE_NAME + r")$")
_IDENTIFIER_RE = re.compile(r"^[a-f0-9]{64}$")
# go-digest: registered algorithms and their encoded forms (digest.Parse -> Validate)
_DIGEST_ENCODINGS = {
    "sha256": re.compile(r"^[a-f0-9]{64}$"),
    "sha384": re.compile(r"^[a-f0-9]{96}$"),
    "sha512": re.compile(r"^[a-f0-9]{128}$"),
}


class InvalidImageReference(KubeschedError, ValueError):
    """An image reference the runtime would refuse to pull (bad grammar, uppercase repository,
    unsupported or malformed digest, name over 255 characters)."""


@dataclass(frozen=True, slots=True)
class ImageRef:
    """A fully-qualified image reference.

    ``domain`` is the registry host (with ``:port`` when given; empty in the rare case Go's grammar
    leaves a name without one, e.g. ``a_b.c/d``), ``path`` the repository path
    (``library/nginx``), ``tag`` the tag (None only when a digest is given without a tag) and
    ``digest`` the manifest digest (``sha256:<hex>``) or None.
    """

    domain: str
    path: str
    tag: str | None
    digest: str | None

    @property
    def name(self) -> str:
        """Repository name without tag or digest: ``docker.io/library/nginx``."""
        return f"{self.domain}/{self.path}" if self.domain else self.path

    @property
    def canonical(self) -> str:
        """``name[:tag][@digest]``, the form containerd records (``reference.TagNameOnly`` applied)."""
        text = self.name
        if self.tag is not None:
            text += ":" + self.tag
        if self.digest is not None:
            text += "@" + self.digest
        return text

    @property
    def tagged(self) -> str | None:
        """``name:tag`` (the kubelet's RepoTags entry) or None without a tag."""
        return None if self.tag is None else f"{self.name}:{self.tag}"

    @property
    def digested(self) -> str | None:
        """``name@digest`` (the kubelet's RepoDigests entry) or None without a digest."""
        return None if self.digest is None else f"{self.name}@{self.digest}"

    def __str__(self) -> str:
        return self.canonical


def _split_docker_domain(name: str) -> tuple[str, str]:
    """``splitDockerDomain``: the first component is a registry only if it has ``.`` or ``:``, is
    ``localhost`` or has an uppercase letter; ``index.docker.io`` becomes ``docker.io``;
    single-component Docker Hub names get ``library/``."""
    i = name.find("/")
    first = name[:i] if i >= 0 else ""
    if i == -1 or (not any(c in first for c in ".:") and first != LOCALHOST and first.lower() == first):
        domain, remainder = DEFAULT_DOMAIN, name
    else:
        domain, remainder = first, name[i + 1 :]
    if domain == LEGACY_DEFAULT_DOMAIN:
        domain = DEFAULT_DOMAIN
    if domain == DEFAULT_DOMAIN and "/" not in remainder:
        remainder = OFFICIAL_REPO_PREFIX + remainder
    return domain, remainder


def _validate_digest(text: str) -> None:
    alg, _, encoded = text.partition(":")
    pattern = _DIGEST_ENCODINGS.get(alg)
    if pattern is None:
        raise InvalidImageReference(f"unsupported digest algorithm in {text!r}")
    if not pattern.match(encoded):
        raise InvalidImageReference(f"invalid checksum digest format: {text!r}")


@lru_cache(maxsize=8192)
def parse_image_ref(text: str) -> ImageRef:
    """Parse and normalise ``text`` like ``reference.ParseNormalizedNamed`` + ``TagNameOnly``.

    Raises :class:`InvalidImageReference` with the Go package's message when the runtime would
    refuse the reference. Results are cached (the replay parses the same few names often).
    """
    if not isinstance(text, str) or text == "":
        raise InvalidImageReference(
            "invalid reference format: repository name must have at least one component"
        )
    if _IDENTIFIER_RE.match(text):
        raise InvalidImageReference(
            f"invalid repository name ({text}), cannot specify 64-byte hexadecimal strings"
        )
    domain, remainder = _split_docker_domain(text)
    tag_sep = remainder.find(":")
    remote = remainder[:tag_sep] if tag_sep >= 0 else remainder
    if remote.lower() != remote:
        raise InvalidImageReference(f"invalid reference format: repository name ({remote}) must be lowercase")
    full = f"{domain}/{remainder}"
    m = _REFERENCE_RE.match(full)
    if m is None:
        if _REFERENCE_RE.match(full.lower()):
            raise InvalidImageReference(
                f"invalid reference format: repository name ({remote}) must be lowercase"
            )
        raise InvalidImageReference(f"invalid reference format: {text!r}")
    name, tag, digest = m.group(1), m.group(2), m.group(3)
    if len(name) > NAME_TOTAL_LENGTH_MAX:
        raise InvalidImageReference(
            f"repository name must not be more than {NAME_TOTAL_LENGTH_MAX} characters: {text!r}"
        )
    if digest is not None:
        _validate_digest(digest)
    nm = _ANCHORED_NAME_RE.match(name)
    assert nm is not None  # the reference regexp already matched the same name grammar
    ref_domain, path = nm.group(1), nm.group(2)
    if tag is None and digest is None:
        tag = "latest"
    # As Go's Parse: when the first component looked like a registry to splitDockerDomain but the
    # grammar only accepts it as a path component (e.g. "a_b.c/d"), the name has no domain.
    return ImageRef(domain=ref_domain or "", path=path, tag=tag, digest=digest)


def normalize_image(text: str) -> str:
    """The canonical string of ``text`` (``parse_image_ref(text).canonical``); raises
    :class:`InvalidImageReference`."""
    return parse_image_ref(text).canonical


def same_image(a: str | ImageRef, b: str | ImageRef) -> bool:
    """True when the two references name the same image content as a runtime resolves them.

    Both are normalised first. When both carry a digest, the digest decides (with the same
    repository): a runtime pulling ``name:tag@digest`` fetches the digest and ignores the tag.
    Otherwise the canonical strings must be equal (``nginx`` == ``docker.io/library/nginx:latest``;
    a tag-only reference never equals a digest-only one, since the tag's digest is unknown).
    Raises :class:`InvalidImageReference` for an invalid reference.
    """
    ra = a if isinstance(a, ImageRef) else parse_image_ref(a)
    rb = b if isinstance(b, ImageRef) else parse_image_ref(b)
    if ra.digest is not None and rb.digest is not None:
        return ra.name == rb.name and ra.digest == rb.digest
    return ra.canonical == rb.canonical
