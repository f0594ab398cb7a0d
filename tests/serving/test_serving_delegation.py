"""The delegated authentication/authorization flags of ``kubesched run`` (Go durations, pflag
string slices, booleans) reach the authenticator and authorizer, and their caches keep answers
for exactly the configured TTLs (a fake clock, no sleeps)."""

from __future__ import annotations

import logging
import socket
from pathlib import Path
from typing import Any

import pytest
from cert_support import Issued, make_ca, make_client_cert
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.embedded.apiserver import write_kubeconfig
from kubesched.embedded.apiserver.reviews import AbacPolicy, Reviews, StaticToken
from kubesched.errors import ConfigError
from kubesched.modes.run import RunOptions
from kubesched.serving.authn import ANONYMOUS, Authenticator, AuthRequest, Unauthorized, UserInfo
from kubesched.serving.authn_lookup import AUTHENTICATION_CONFIGMAP_PATH
from kubesched.serving.authn_requestheader import RequestHeaderAuthenticator
from kubesched.serving.authn_sources import CertificateSources
from kubesched.serving.authn_token import TokenReviewAuthenticator
from kubesched.serving.authn_x509 import ClientCertAuthenticator
from kubesched.serving.authz import Authorizer, Decision
from kubesched.serving.delegation import DelegationOptions, build_request_auth
from kubesched.serving.review_client import ReviewError
from kubesched.serving.ttl_cache import TTLCache

REVIEWS = Reviews(
    {"t1": StaticToken("alice", "u1")}, [AbacPolicy(user="alice", non_resource_path="/metrics")]
)


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class Poster:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(body["kind"])
        if body["kind"] == "TokenReview":
            return REVIEWS.token_review(body)
        return REVIEWS.subject_access_review(body)


def test_authorizer_reuses_allowed_and_denied_answers_for_their_own_ttls() -> None:
    clock, poster = Clock(), Poster()
    authz = Authorizer(poster, allow_ttl=30.0, deny_ttl=5.0, now=clock)
    alice, bob = UserInfo("alice"), UserInfo("bob")
    assert authz.authorize(alice, "GET", "/metrics") == Decision(True)
    assert authz.authorize(bob, "GET", "/metrics") == Decision(False, "No policy matched.")
    assert len(poster.calls) == 2
    clock.t += 4.9  # both cached
    assert authz.authorize(alice, "GET", "/metrics").allowed
    assert not authz.authorize(bob, "GET", "/metrics").allowed
    assert len(poster.calls) == 2
    clock.t += 0.1  # 5 s: the denial expired, the allowance did not
    assert not authz.authorize(bob, "GET", "/metrics").allowed
    assert authz.authorize(alice, "GET", "/metrics").allowed
    assert len(poster.calls) == 3
    clock.t += 25.0  # 30 s after the first answer: asked again
    assert authz.authorize(alice, "GET", "/metrics").allowed
    assert len(poster.calls) == 4


def test_zero_ttl_asks_every_time() -> None:
    clock, poster = Clock(), Poster()
    authn = Authenticator([TokenReviewAuthenticator(poster, 0.0, TTLCache(now=clock))])
    authz = Authorizer(poster, allow_ttl=0.0, deny_ttl=0.0, now=clock)
    for _ in range(3):
        user = authn.authenticate(AuthRequest.of({"Authorization": "Bearer t1"}))
        assert authz.authorize(user, "GET", "/metrics").allowed
    assert poster.calls == ["TokenReview", "SubjectAccessReview"] * 3


def _run_options(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, RunOptions | None]:
    seen: list[RunOptions] = []

    def fake_run(opts: RunOptions) -> int:
        seen.append(opts)
        return 0

    monkeypatch.setattr("kubesched.cli.run.run_scheduler", fake_run)
    res = CliRunner().invoke(main, ["run", *args])
    return res.exit_code, res.output, seen[0] if seen else None


def test_flag_defaults_are_upstreams(monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, opts = _run_options(monkeypatch)
    assert code == 0, out
    assert opts is not None and opts.delegation == DelegationOptions(
        always_allow_paths=("/healthz", "/readyz", "/livez"),
        token_cache_ttl=10.0,
        allow_ttl=10.0,
        deny_ttl=10.0,
        requestheader_username_headers=("x-remote-user",),
        requestheader_group_headers=("x-remote-group",),
        requestheader_extra_headers_prefix=("x-remote-extra-",),
        skip_lookup=False,
        tolerate_lookup_failure=True,
    )


def test_flags_parse_as_pflag(monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, opts = _run_options(
        monkeypatch,
        "--authentication-token-webhook-cache-ttl=1m30s",
        "--authorization-webhook-cache-authorized-ttl",
        "2m",
        "--authorization-webhook-cache-unauthorized-ttl=0s",
        "--client-ca-file=/etc/ca.crt",
        "--requestheader-client-ca-file",
        "/etc/proxy.crt",
        "--requestheader-allowed-names=front-proxy,aggregator",
        "--requestheader-allowed-names=other",
        "--requestheader-username-headers=X-User",
        "--requestheader-uid-headers=X-Remote-Uid",
        "--requestheader-group-headers=X-Group,X-Team",
        "--requestheader-extra-headers-prefix=X-Extra-",
        "--authentication-skip-lookup",
        "--authentication-tolerate-lookup-failure=false",
    )
    assert code == 0, out
    assert opts is not None and opts.delegation == DelegationOptions(
        token_cache_ttl=90.0,
        allow_ttl=120.0,
        deny_ttl=0.0,
        client_ca_file="/etc/ca.crt",
        requestheader_client_ca_file="/etc/proxy.crt",
        requestheader_allowed_names=("front-proxy", "aggregator", "other"),
        requestheader_username_headers=("X-User",),
        requestheader_uid_headers=("X-Remote-Uid",),
        requestheader_group_headers=("X-Group", "X-Team"),
        requestheader_extra_headers_prefix=("X-Extra-",),
        skip_lookup=True,
        tolerate_lookup_failure=False,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--authentication-token-webhook-cache-ttl=10",),
            "Invalid value for '--authentication-token-webhook-cache-ttl': time: missing unit in duration \"10\"",
        ),
        (
            ("--authorization-webhook-cache-authorized-ttl=1d",),
            'Invalid value for \'--authorization-webhook-cache-authorized-ttl\': time: unknown unit "d" in duration "1d"',
        ),
        (
            ("--authorization-webhook-cache-unauthorized-ttl=-1s",),
            "Invalid value for '--authorization-webhook-cache-unauthorized-ttl': must not be negative",
        ),
        (
            ("--requestheader-group-headers=X-G, ",),
            'error: --requestheader-group-headers: empty value in "requestheader-group-headers"',
        ),
    ],
)
def test_bad_flags_are_refused(monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], message: str) -> None:
    code, out, opts = _run_options(monkeypatch, *args)
    assert code == 2 and opts is None
    assert message in " ".join(out.split()), out


def _dead_kubeconfig(tmp_path: Path) -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return str(write_kubeconfig(tmp_path / "kc.yaml", f"http://127.0.0.1:{port}"))


def test_build_request_auth_wires_ttls_and_the_chain(tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_bytes(make_ca("c").pem)
    opts = DelegationOptions(
        token_cache_ttl=90.0,
        allow_ttl=120.0,
        deny_ttl=1.5,
        client_ca_file=str(ca),
        requestheader_client_ca_file=str(ca),
        requestheader_allowed_names=("p",),
    )
    delegated = build_request_auth(opts, _dead_kubeconfig(tmp_path))  # both files given: no lookup
    chain = delegated.authenticator.authenticators
    assert [type(a) for a in chain] == [
        RequestHeaderAuthenticator,
        ClientCertAuthenticator,
        TokenReviewAuthenticator,
    ]
    rh = delegated.sources.request_header()
    assert rh is not None and rh.allowed_names == ("p",) and rh.username_headers == ("x-remote-user",)
    token = chain[2]
    assert isinstance(token, TokenReviewAuthenticator) and token.cache_ttl == 90.0
    assert (delegated.authorizer.allow_ttl, delegated.authorizer.deny_ttl) == (120.0, 1.5)
    assert delegated.client_ca_pem.count(b"BEGIN CERTIFICATE") == 2


def test_failed_lookup_is_tolerated_by_default_else_fatal(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kc = _dead_kubeconfig(tmp_path)
    with caplog.at_level(logging.WARNING, "kubesched.serving.delegation"):
        delegated = build_request_auth(DelegationOptions(), kc)
    assert (delegated.sources.client_ca(), delegated.sources.request_header(), delegated.client_ca_pem) == (
        None,
        None,
        b"",
    )
    assert (
        "Error looking up in-cluster authentication configuration: GET /api/v1/namespaces/kube-system/"
        "configmaps/extension-apiserver-authentication" in caplog.text
    )
    with pytest.raises(
        ConfigError,
        match="^--authentication-tolerate-lookup-failure: unable to load configmap based "
        "request-header-client-ca-file: GET /api/v1/namespaces/kube-system/",
    ):
        build_request_auth(DelegationOptions(tolerate_lookup_failure=False), kc)
    # skipped: no request at all, even when failures are fatal
    build_request_auth(DelegationOptions(skip_lookup=True, tolerate_lookup_failure=False), kc)


def _cert_request(ca: Issued, cn: str) -> AuthRequest:
    return AuthRequest.of({}, make_client_cert(ca, cn).der)


def test_ca_file_changes_are_followed(tmp_path: Path) -> None:
    ca_a, ca_b = make_ca("a"), make_ca("b")
    path = tmp_path / "ca.crt"
    path.write_bytes(ca_a.pem)
    sources = CertificateSources(DelegationOptions(client_ca_file=str(path), skip_lookup=True), None)
    sources.load()
    authn = Authenticator([ClientCertAuthenticator(sources.client_ca)])
    assert authn.authenticate(_cert_request(ca_a, "alice")).name == "alice"
    assert not sources.refresh()  # same content
    path.write_bytes(ca_b.pem)
    assert sources.refresh() and sources.pem == ca_b.pem.strip()
    assert authn.authenticate(_cert_request(ca_b, "bob")).name == "bob"
    with pytest.raises(Unauthorized):
        authn.authenticate(_cert_request(ca_a, "alice"))
    path.write_text("garbage")  # a bad rewrite keeps the last good bundle
    assert not sources.refresh()
    assert authn.authenticate(_cert_request(ca_b, "bob")).name == "bob"


def test_configmap_changes_are_followed() -> None:
    proxy_ca = make_ca("proxy")
    answers: list[Any] = [ReviewError("not found", 404)]

    def get(path: str) -> dict[str, Any]:
        assert path == AUTHENTICATION_CONFIGMAP_PATH
        a = answers[0]
        if isinstance(a, Exception):
            raise a
        return {"data": a}

    sources = CertificateSources(DelegationOptions(), get)
    sources.load()
    assert sources.request_header() is None
    answers[0] = {
        "requestheader-client-ca-file": proxy_ca.pem.decode(),
        "requestheader-username-headers": '["X-Remote-User"]',
        "requestheader-allowed-names": "[]",
    }
    assert sources.refresh()
    authn = Authenticator([RequestHeaderAuthenticator(sources.request_header)])
    req = AuthRequest.of({"X-Remote-User": "carol"}, make_client_cert(proxy_ca, "front-proxy").der)
    assert authn.authenticate(req).name == "carol"
    answers[0] = ReviewError("GET: HTTP 500", 500)  # the API server fails: the settings stay
    assert not sources.refresh() and authn.authenticate(req).name == "carol"
    answers[0] = ReviewError("not found", 404)  # the ConfigMap is gone: so are its settings
    assert sources.refresh() and sources.request_header() is None
    assert authn.authenticate(req) == ANONYMOUS
