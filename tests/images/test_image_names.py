"""Image reference normalisation (distribution/reference ParseNormalizedNamed + TagNameOnly)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.errors import KubeschedError
from kubesched.images.names import (
    ImageRef,
    InvalidImageReference,
    normalize_image,
    parse_image_ref,
    same_image,
)

D = "sha256:" + "ab" * 32


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("nginx", "docker.io/library/nginx:latest"),
        ("nginx:1.25", "docker.io/library/nginx:1.25"),
        ("user/app", "docker.io/user/app:latest"),
        ("docker.io/nginx", "docker.io/library/nginx:latest"),
        ("docker.io/library/nginx:1.25", "docker.io/library/nginx:1.25"),
        ("index.docker.io/nginx", "docker.io/library/nginx:latest"),
        ("index.docker.io/user/app:v1", "docker.io/user/app:v1"),
        ("registry.k8s.io/pause:3.10.1", "registry.k8s.io/pause:3.10.1"),
        ("localhost:5000/app", "localhost:5000/app:latest"),
        ("localhost:5000/team/app:v2", "localhost:5000/team/app:v2"),
        ("localhost/app", "localhost/app:latest"),
        ("[::1]:5000/app", "[::1]:5000/app:latest"),
        (
            "nvcr.io/nvidia/tritonserver:24.03-trtllm-python-py3",
            "nvcr.io/nvidia/tritonserver:24.03-trtllm-python-py3",
        ),
        (f"nginx@{D}", f"docker.io/library/nginx@{D}"),
        (f"nginx:1.25@{D}", f"docker.io/library/nginx:1.25@{D}"),
        ("a__b/c-d.e", "docker.io/a__b/c-d.e:latest"),
        ("Registry.Example.com/app", "Registry.Example.com/app:latest"),
    ],
)
def test_canonical(text: str, canonical: str) -> None:
    assert normalize_image(text) == canonical


def test_fields() -> None:
    assert parse_image_ref("localhost:5000/team/app:v2") == ImageRef("localhost:5000", "team/app", "v2", None)
    ref = parse_image_ref(f"nginx:1.25@{D}")
    assert (ref.domain, ref.path, ref.tag, ref.digest) == ("docker.io", "library/nginx", "1.25", D)
    assert ref.name == "docker.io/library/nginx"
    assert ref.tagged == "docker.io/library/nginx:1.25"
    assert ref.digested == f"docker.io/library/nginx@{D}"
    digest_only = parse_image_ref(f"nginx@{D}")
    assert digest_only.tag is None and digest_only.tagged is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Nginx", "invalid reference format: repository name (library/Nginx) must be lowercase"),
        ("user/App:1", "invalid reference format: repository name (user/App) must be lowercase"),
        ("ab" * 32, f"invalid repository name ({'ab' * 32}), cannot specify 64-byte hexadecimal strings"),
        ("nginx@sha256:abc", "invalid reference format: 'nginx@sha256:abc'"),
        ("nginx:", "invalid reference format: 'nginx:'"),
        ("-x", "invalid reference format: '-x'"),
        ("", "invalid reference format: repository name must have at least one component"),
        (f"nginx@sha256:{'AB' * 32}", f"invalid checksum digest format: 'sha256:{'AB' * 32}'"),
        ("nginx@md5:" + "a" * 32, "unsupported digest algorithm in 'md5:" + "a" * 32 + "'"),
    ],
)
def test_errors(text: str, message: str) -> None:
    with pytest.raises(InvalidImageReference) as info:
        parse_image_ref(text)
    assert str(info.value) == message
    assert isinstance(info.value, KubeschedError)


def test_name_too_long() -> None:
    with pytest.raises(InvalidImageReference, match="must not be more than 255 characters"):
        parse_image_ref("a" * 250 + "/bcdef")


def test_same_image() -> None:
    assert same_image("nginx", "docker.io/library/nginx:latest")
    assert same_image("index.docker.io/library/nginx:1.25", "nginx:1.25")
    assert not same_image("nginx:1.25", "nginx:1.26")
    assert not same_image("nginx", "nginx:1.25")
    assert same_image(f"nginx:1.25@{D}", f"docker.io/library/nginx@{D}")
    assert not same_image(f"nginx@{D}", f"redis@{D}")
    assert not same_image("nginx:1.25", f"nginx:1.25@{D}")


_component = st.from_regex(r"\A[a-z0-9]{1,6}(?:(?:[._]|__|-{1,2})[a-z0-9]{1,6}){0,2}\Z")
_domain = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "docker.io",
            "index.docker.io",
            "localhost",
            "localhost:5000",
            "ghcr.io",
            "nvcr.io",
            "registry.k8s.io",
            "my-reg.example.com:443",
            "[::1]:5000",
            "Reg.Example",
        ]
    ),
)
_tag = st.one_of(st.none(), st.from_regex(r"\A[\w][\w.-]{0,20}\Z", alphabet=st.characters(codec="ascii")))
_digest = st.one_of(st.none(), st.from_regex(r"\Asha256:[a-f0-9]{64}\Z"))


@st.composite
def references(draw: st.DrawFn) -> str:
    domain = draw(_domain)
    path = "/".join(draw(st.lists(_component, min_size=1, max_size=3)))
    text = path if domain is None else f"{domain}/{path}"
    tag = draw(_tag)
    if tag is not None:
        text += ":" + tag
    digest = draw(_digest)
    if digest is not None:
        text += "@" + digest
    return text


@given(references())
def test_normalisation_idempotent(text: str) -> None:
    canonical = normalize_image(text)
    assert normalize_image(canonical) == canonical


@given(references())
def test_canonical_reparses_to_itself(text: str) -> None:
    ref = parse_image_ref(text)
    again = parse_image_ref(ref.canonical)
    assert again == ref
    assert same_image(text, ref.canonical)
    assert ref.tag is not None or ref.digest is not None


def test_first_component_not_a_valid_domain() -> None:
    # splitDockerDomain takes "0_0.0" for a registry, but the grammar only accepts it as a path
    # component, so Go's Parse yields a name without a domain; it stays stable on re-parse.
    ref = parse_image_ref("0_0.0/0")
    assert ref == ImageRef("", "0_0.0/0", "latest", None)
    assert ref.canonical == "0_0.0/0:latest"
    assert normalize_image(ref.canonical) == ref.canonical
