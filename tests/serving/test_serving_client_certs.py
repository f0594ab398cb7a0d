"""Client certificates (``--client-ca-file``) and the front proxy (``--requestheader-*``) on the
scheduler's HTTPS endpoint: real TLS requests with client certificates made in the test, the
authenticator chain in upstream's order (request header, x509, bearer token, anonymous), and the
user each SubjectAccessReview was asked about."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cert_support import NOW, Issued, client_context, make_ca, make_client_cert
from cryptography.x509.oid import ExtendedKeyUsageOID

from kubesched.embedded.apiserver.reviews import AbacPolicy, Reviews, StaticToken
from kubesched.errors import ConfigError
from kubesched.serving.authn import AuthenticationFailed, Authenticator, AuthRequest, UserInfo
from kubesched.serving.authn_requestheader import RequestHeaderAuthenticator, RequestHeaderConfig
from kubesched.serving.authn_token import TokenReviewAuthenticator
from kubesched.serving.authn_x509 import CABundle, ClientCertAuthenticator, verify_client_certificate
from kubesched.serving.authz import Authorizer
from kubesched.serving.http import RequestAuth, StatusServer
from kubesched.serving.tls import accept_client_certificates, server_context

REVIEWS = Reviews(
    {"t1": StaticToken("alice", "u1", ("devs",))},
    [
        AbacPolicy(user="alice", non_resource_path="/metrics", readonly=True),
        AbacPolicy(user="bob", non_resource_path="/metrics", readonly=True),
    ],
)


class Poster:
    """Answers reviews with ``serve``'s logic and keeps every review body."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.bodies.append(body)
        if body["kind"] == "TokenReview":
            return REVIEWS.token_review(body)
        return REVIEWS.subject_access_review(body)

    def sar_users(self) -> list[tuple[str, list[str], dict[str, list[str]]]]:
        return [
            (b["spec"]["user"], b["spec"]["groups"], b["spec"].get("extra", {}))
            for b in self.bodies
            if b["kind"] == "SubjectAccessReview"
        ]

    def kinds(self) -> list[str]:
        return [b["kind"] for b in self.bodies]


class PKI:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.client_ca = make_ca("client-ca")
        self.proxy_ca = make_ca("front-proxy-ca")
        self.other_ca = make_ca("somebody-else")

    def issue(self, ca: Issued, name: str, cn: str | None, orgs: tuple[str, ...] = ()) -> tuple[Path, Path]:
        return make_client_cert(ca, cn, orgs).write(self.tmp, name)


@pytest.fixture
def pki(tmp_path: Path) -> PKI:
    return PKI(tmp_path)


@pytest.fixture
def served(pki: PKI) -> Iterator[tuple[StatusServer, Poster]]:
    poster = Poster()
    client_ca = CABundle.from_pem(pki.client_ca.pem, "client-ca.crt", "--client-ca-file")
    proxy = RequestHeaderConfig(
        CABundle.from_pem(pki.proxy_ca.pem, "proxy-ca.crt", "--requestheader-client-ca-file"),
        allowed_names=("front-proxy-client",),
        uid_headers=("X-Remote-Uid",),
    )
    chain = Authenticator(
        [
            RequestHeaderAuthenticator(lambda: proxy),
            ClientCertAuthenticator(lambda: client_ca),
            TokenReviewAuthenticator(poster),
        ]
    )
    tls = server_context("127.0.0.1")
    accept_client_certificates(tls, pki.proxy_ca.pem + pki.client_ca.pem)
    server = StatusServer(
        "127.0.0.1", 0, synced=lambda: True, tls=tls, auth=RequestAuth(chain, Authorizer(poster))
    ).start()
    try:
        yield server, poster
    finally:
        server.stop()


def _get(
    server: StatusServer,
    path: str,
    cert: tuple[Path, Path] | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, str]:
    r = httpx.get(f"{server.url}{path}", verify=client_context(cert), headers=headers or {}, timeout=10)
    if r.status_code in (401, 403):
        return r.status_code, json.loads(r.text)["message"]
    return r.status_code, r.text


def test_client_certificate_user_is_cn_and_groups_are_o(
    served: tuple[StatusServer, Poster], pki: PKI
) -> None:
    server, poster = served
    alice = pki.issue(pki.client_ca, "alice", "alice", ("devs", "ops"))
    code, body = _get(server, "/metrics", alice)
    assert code == 200 and "# HELP" in body
    mallory = pki.issue(pki.client_ca, "mallory", "mallory")
    assert _get(server, "/metrics", mallory) == (
        403,
        'forbidden: User "mallory" cannot get path "/metrics": No policy matched.',
    )
    assert poster.sar_users() == [
        ("alice", ["devs", "ops", "system:authenticated"], {}),
        ("mallory", ["system:authenticated"], {}),
    ]
    assert poster.kinds() == ["SubjectAccessReview"] * 2  # no TokenReview for a certificate


def test_certificate_comes_before_the_bearer_token_and_headers_need_the_proxy_ca(
    served: tuple[StatusServer, Poster], pki: PKI
) -> None:
    server, poster = served
    alice = pki.issue(pki.client_ca, "alice", "alice")
    # a bad token next to a valid certificate: the certificate wins, the token is never reviewed
    assert _get(server, "/metrics", alice, {"Authorization": "Bearer made-up"})[0] == 200
    # a client certificate cannot name another user in the proxy's headers
    assert _get(server, "/metrics", alice, {"X-Remote-User": "bob"})[0] == 200
    assert poster.sar_users() == [("alice", ["system:authenticated"], {})]
    assert poster.kinds() == ["SubjectAccessReview"]
    # no certificate: the bearer token, then anonymous
    assert _get(server, "/metrics", None, {"Authorization": "Bearer t1"})[0] == 200
    assert _get(server, "/metrics", None, {"Authorization": "Bearer made-up"}) == (401, "Unauthorized")
    assert _get(server, "/metrics", None, {"X-Remote-User": "bob"}) == (
        403,
        'forbidden: User "system:anonymous" cannot get path "/metrics": No policy matched.',
    )
    # a certificate without a CN has no opinion, but the front-proxy verifier rejected it (not the
    # proxy's CA): with no authenticator left to vouch for the request, upstream's union fails it
    nameless = pki.issue(pki.client_ca, "nameless", None, ("devs",))
    assert _get(server, "/metrics", nameless) == (401, "Unauthorized")
    assert poster.sar_users()[1:] == [
        ("alice", ["devs", "system:authenticated"], {}),
        ("system:anonymous", ["system:unauthenticated"], {}),
    ]


def test_front_proxy_headers(served: tuple[StatusServer, Poster], pki: PKI) -> None:
    server, poster = served
    proxy = pki.issue(pki.proxy_ca, "proxy", "front-proxy-client")
    headers = {
        "X-Remote-User": "bob",
        "X-Remote-Uid": "b-1",
        "X-Remote-Group": "devs",
        "X-Remote-Extra-Scopes": "read",
        "X-Remote-Extra-Acme.com%2fProject": "p1",
    }
    code, _ = _get(server, "/metrics", proxy, headers)
    assert code == 200
    sar = [b for b in poster.bodies if b["kind"] == "SubjectAccessReview"][0]["spec"]
    assert sar == {
        "user": "bob",
        "uid": "b-1",
        "groups": ["devs", "system:authenticated"],
        "extra": {"scopes": ["read"], "acme.com/project": ["p1"]},
        "nonResourceAttributes": {"path": "/metrics", "verb": "get"},
    }
    # a proxy whose CN is not allowed: 401, the headers are never believed
    stranger = pki.issue(pki.proxy_ca, "stranger", "other-proxy")
    assert _get(server, "/metrics", stranger, headers) == (401, "Unauthorized")
    # an allowed proxy that names no user: the next authenticators decide; its certificate is no
    # client certificate of --client-ca-file, so the request fails (as upstream's union)
    assert _get(server, "/metrics", proxy) == (401, "Unauthorized")
    assert len(poster.sar_users()) == 1


def test_certificate_of_an_unknown_ca_never_gets_an_answer(
    served: tuple[StatusServer, Poster], pki: PKI
) -> None:
    server, poster = served
    eve = pki.issue(pki.other_ca, "eve", "alice")
    with pytest.raises(httpx.TransportError):
        _get(server, "/metrics", eve)
    assert poster.bodies == []


def _req(issued: Issued, **headers: str) -> AuthRequest:
    return AuthRequest.of(headers, issued.der)


def test_x509_verification_rules(pki: PKI) -> None:
    bundle = CABundle.from_pem(pki.client_ca.pem + pki.other_ca.pem, "cas.pem", "--client-ca-file")
    x509_authn = ClientCertAuthenticator(lambda: bundle)
    ok = make_client_cert(pki.other_ca, "carol", ("a", "b"))  # any certificate of the bundle is an anchor
    assert x509_authn.authenticate(_req(ok)) == UserInfo("carol", groups=("a", "b"))
    no_eku = make_client_cert(pki.client_ca, "dave", usages=())
    assert x509_authn.authenticate(_req(no_eku)) == UserInfo("dave")
    server_only = make_client_cert(pki.client_ca, "srv", usages=(ExtendedKeyUsageOID.SERVER_AUTH,))
    with pytest.raises(AuthenticationFailed, match="incompatible key usage"):
        x509_authn.authenticate(_req(server_only))
    expired = make_client_cert(pki.client_ca, "old", not_after=NOW - datetime.timedelta(minutes=1))
    with pytest.raises(AuthenticationFailed, match="expired or is not yet valid"):
        x509_authn.authenticate(_req(expired))
    foreign = make_client_cert(pki.proxy_ca, "x")
    with pytest.raises(AuthenticationFailed, match="x509: certificate signed by unknown authority"):
        verify_client_certificate(foreign.der, bundle)
    assert x509_authn.authenticate(AuthRequest.of({})) is None
    assert ClientCertAuthenticator(lambda: None).authenticate(_req(ok)) is None


def test_request_header_rules(pki: PKI) -> None:
    proxy = make_client_cert(pki.proxy_ca, "any-proxy")
    cfg = RequestHeaderConfig(
        CABundle.from_pem(pki.proxy_ca.pem, "p", "f"),
        username_headers=("X-User", "X-Remote-User"),
        group_headers=("X-Remote-Group", "X-G"),
    )
    authn = RequestHeaderAuthenticator(lambda: cfg)
    req = AuthRequest.of(
        [
            ("x-remote-user", "zed"),
            ("X-User", ""),
            ("X-G", "g3"),
            ("X-Remote-Group", "g1"),
            ("x-remote-group", "g2"),
            ("X-Remote-Group", ""),
            ("X-Remote-Extra-Bad%zzKey", "v"),
            ("X-Remote-Extra-bad%zzkey", "w"),
        ],
        proxy.der,
    )
    # empty allowed names: any proxy certificate; the first non-empty user header; groups in header order
    assert authn.authenticate(req) == UserInfo("zed", "", ("g1", "g2", "g3"), {"bad%zzkey": ("v", "w")})


def test_ca_files_are_checked(tmp_path: Path) -> None:
    bad = tmp_path / "ca.pem"
    bad.write_text("hello\n")
    with pytest.raises(ConfigError) as e:
        CABundle.from_file(str(bad), "--client-ca-file")
    assert str(e.value) == f"--client-ca-file: {bad}: no PEM certificate found"
    with pytest.raises(ConfigError) as e:
        CABundle.from_file(str(tmp_path / "missing.pem"), "--requestheader-client-ca-file")
    assert str(e.value) == (
        f"--requestheader-client-ca-file: cannot read {tmp_path / 'missing.pem'}: No such file or directory"
    )


def test_plain_http_never_trusts_proxy_headers(pki: PKI) -> None:
    poster = Poster()
    proxy = RequestHeaderConfig(
        CABundle.from_pem(pki.proxy_ca.pem, "proxy-ca.crt", "--requestheader-client-ca-file")
    )
    chain = Authenticator([RequestHeaderAuthenticator(lambda: proxy), TokenReviewAuthenticator(poster)])
    server = StatusServer(
        "127.0.0.1", 0, synced=lambda: True, auth=RequestAuth(chain, Authorizer(poster))
    ).start()
    try:
        r = httpx.get(f"{server.url}/metrics", headers={"X-Remote-User": "bob"}, timeout=10)
        assert (r.status_code, json.loads(r.text)["message"]) == (
            403,
            'forbidden: User "system:anonymous" cannot get path "/metrics": No policy matched.',
        )
    finally:
        server.stop()


def test_a_ca_added_while_serving_applies_to_new_connections(pki: PKI) -> None:
    poster = Poster()
    bundle: list[CABundle | None] = [None]
    chain = Authenticator([ClientCertAuthenticator(lambda: bundle[0]), TokenReviewAuthenticator(poster)])
    tls = server_context("127.0.0.1")
    accept_client_certificates(tls, b"")  # nothing yet: no certificate is asked for
    server = StatusServer(
        "127.0.0.1", 0, synced=lambda: True, tls=tls, auth=RequestAuth(chain, Authorizer(poster))
    ).start()
    try:
        alice = pki.issue(pki.client_ca, "alice", "alice")
        assert _get(server, "/metrics", alice)[0] == 403  # the certificate is not even requested: anonymous
        bundle[0] = CABundle.from_pem(pki.client_ca.pem, "client-ca.crt", "--client-ca-file")
        accept_client_certificates(tls, pki.client_ca.pem)
        assert _get(server, "/metrics", alice)[0] == 200
        assert [u for u, _, _ in poster.sar_users()] == ["system:anonymous", "alice"]
    finally:
        server.stop()
