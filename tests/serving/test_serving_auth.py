"""Delegated authentication/authorization of the scheduler's endpoints (kubesched.serving) and the
review answers of ``kubesched serve`` (kubesched.embedded.apiserver.reviews), without processes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubesched.embedded.apiserver.reviews import (
    AbacPolicy,
    Reviews,
    StaticToken,
    load_policy_file,
    load_token_file,
)
from kubesched.errors import ConfigError
from kubesched.serving.authn import ANONYMOUS, Authenticator, AuthRequest, Unauthorized, UserInfo
from kubesched.serving.authn_token import TokenReviewAuthenticator, bearer_token
from kubesched.serving.authz import AuthorizationError, Authorizer, Decision, PathMatcher, forbidden_message
from kubesched.serving.review_client import ReviewError
from kubesched.serving.ttl_cache import TTLCache


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def req(authorization: str | None) -> AuthRequest:
    return AuthRequest.of({"Authorization": authorization} if authorization is not None else {})


def token_chain(poster: Poster | None, ttl: float = 10.0, cache: TTLCache | None = None) -> Authenticator:
    return Authenticator([TokenReviewAuthenticator(poster, ttl, cache)])


class Poster:
    """Answers reviews with ``serve``'s logic and counts them."""

    def __init__(self, reviews: Reviews, fail: bool = False) -> None:
        self.reviews = reviews
        self.calls: list[str] = []
        self.fail = fail

    def __call__(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(body["kind"])
        if self.fail:
            raise ReviewError("POST: connection refused")
        if body["kind"] == "TokenReview":
            return self.reviews.token_review(body)
        return self.reviews.subject_access_review(body)


REVIEWS = Reviews(
    {"t1": StaticToken("alice", "u1", ("devs",)), "root": StaticToken("admin", "u0", ("system:masters",))},
    [
        AbacPolicy(user="alice", non_resource_path="/metrics", readonly=True),
        AbacPolicy(group="devs", non_resource_path="/debug/pprof/*"),
    ],
)


@pytest.mark.parametrize(
    ("header", "token"),
    [
        (None, None),
        ("", None),
        ("Bearer abc", "abc"),
        ("bearer abc", "abc"),
        ("BEARER  abc", None),
        ("Basic abc", None),
        ("Bearer", None),
        ("Bearer abc def", "abc"),
    ],
)
def test_bearer_token(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


def test_authenticator_caches_answers_for_the_ttl() -> None:
    clock = Clock()
    poster = Poster(REVIEWS)
    tokens = TokenReviewAuthenticator(poster, 10.0, TTLCache(now=clock))
    authn = Authenticator([tokens])
    assert authn.authenticate(req(None)) == ANONYMOUS
    alice = UserInfo("alice", "u1", ("devs", "system:authenticated"))
    assert authn.authenticate(req("Bearer t1")) == alice
    with pytest.raises(Unauthorized):
        authn.authenticate(req("Bearer nope"))
    clock.t += 9.9
    assert authn.authenticate(req("Bearer t1")) == alice
    with pytest.raises(Unauthorized):
        authn.authenticate(req("Bearer nope"))
    assert poster.calls == ["TokenReview", "TokenReview"]
    clock.t += 0.2
    authn.authenticate(req("Bearer t1"))
    assert poster.calls == ["TokenReview"] * 3
    assert all(len(k) == 32 for k in tokens.cache._items)  # SHA-256 digests, never the token


def test_failed_token_review_is_401_and_not_cached() -> None:
    poster = Poster(REVIEWS, fail=True)
    authn = token_chain(poster)
    for _ in range(2):
        with pytest.raises(Unauthorized, match="token review failed: POST: connection refused"):
            authn.authenticate(req("Bearer t1"))
    assert len(poster.calls) == 2
    assert token_chain(None).authenticate(req(None)) == ANONYMOUS
    with pytest.raises(Unauthorized):
        token_chain(None).authenticate(req("Bearer t1"))


def test_authorizer_order_cache_and_messages() -> None:
    poster = Poster(REVIEWS)
    authz = Authorizer(poster)
    alice = UserInfo("alice", "u1", ("devs", "system:authenticated"))
    admin = UserInfo("admin", "u0", ("system:masters",))
    assert authz.authorize(ANONYMOUS, "GET", "/healthz") == Decision(True)
    assert authz.authorize(admin, "DELETE", "/anything") == Decision(True)
    assert poster.calls == []
    assert authz.authorize(alice, "GET", "/metrics") == Decision(True)
    assert authz.authorize(alice, "POST", "/metrics") == Decision(False, "No policy matched.")  # readonly
    assert authz.authorize(alice, "GET", "/debug/pprof/profile") == Decision(True)
    assert authz.authorize(ANONYMOUS, "GET", "/metrics") == Decision(False, "No policy matched.")
    assert authz.authorize(ANONYMOUS, "GET", "/metrics") == Decision(False, "No policy matched.")
    assert poster.calls == ["SubjectAccessReview"] * 4
    assert forbidden_message(ANONYMOUS, "GET", "/metrics", "No policy matched.") == (
        'forbidden: User "system:anonymous" cannot get path "/metrics": No policy matched.'
    )
    assert forbidden_message(alice, "HEAD", "/x", "") == 'forbidden: User "alice" cannot get path "/x"'
    with pytest.raises(AuthorizationError):
        Authorizer(Poster(REVIEWS, fail=True)).authorize(alice, "GET", "/metrics")
    assert Authorizer(None).authorize(alice, "GET", "/metrics") == Decision(False)


def test_path_matcher() -> None:
    m = PathMatcher(["/healthz", "readyz", "/debug/*", " "])
    assert [
        m.matches(p) for p in ("/healthz", "/readyz", "/debug/pprof/profile", "/healthz/x", "/metrics")
    ] == [True, True, True, False, False]
    with pytest.raises(
        ConfigError, match='--authorization-always-allow-paths: only trailing "\\*" allowed in "/a\\*b"'
    ):
        PathMatcher(["/a*b"])


def test_serve_review_answers() -> None:
    tr = REVIEWS.token_review({"kind": "TokenReview", "spec": {"token": "t1"}})
    assert tr["status"] == {
        "authenticated": True,
        "user": {"username": "alice", "uid": "u1", "groups": ["devs", "system:authenticated"]},
    }
    assert "token" not in tr["spec"]
    assert REVIEWS.token_review({"kind": "TokenReview", "spec": {"token": "x"}})["status"] == {
        "authenticated": False,
        "user": {},
    }
    sar = REVIEWS.subject_access_review(
        {
            "kind": "SubjectAccessReview",
            "spec": {
                "user": "bob",
                "groups": ["devs"],
                "resourceAttributes": {"verb": "get", "resource": "pods"},
            },
        }
    )
    assert sar["status"] == {"allowed": False, "reason": "No policy matched."}
    with pytest.raises(ValueError, match="exactly one of nonResourceAttributes or resourceAttributes"):
        REVIEWS.subject_access_review({"kind": "SubjectAccessReview", "spec": {"user": "bob"}})
    res = Reviews(
        policies=[AbacPolicy(user="*", namespace="*", resource="pods", api_group="*", readonly=True)]
    )
    allowed = res.subject_access_review(
        {
            "kind": "SubjectAccessReview",
            "spec": {
                "user": "bob",
                "resourceAttributes": {"verb": "list", "resource": "pods", "namespace": "a"},
            },
        }
    )
    assert allowed["status"] == {"allowed": True}


def test_token_and_policy_files(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('abc,alice,u1,"devs,ops"\n\nxyz,bob,u2\n')
    assert load_token_file(str(tokens)) == {
        "abc": StaticToken("alice", "u1", ("devs", "ops")),
        "xyz": StaticToken("bob", "u2"),
    }
    tokens.write_text("abc,alice\n")
    with pytest.raises(ConfigError) as e:
        load_token_file(str(tokens))
    assert str(e.value) == (
        f"--token-auth-file: {tokens} line 1: at least 3 columns (token, user name, user uid), found 2"
    )
    policy = tmp_path / "policy.jsonl"
    policy.write_text(
        '# scrapers\n{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", '
        '"spec": {"user": "alice", "nonResourcePath": "/metrics", "readonly": true}}\n'
    )
    assert load_policy_file(str(policy)) == [
        AbacPolicy(user="alice", non_resource_path="/metrics", readonly=True)
    ]
    policy.write_text(
        '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", '
        '"spec": {"users": "alice"}}\n'
    )
    with pytest.raises(ConfigError) as e:
        load_policy_file(str(policy))
    assert str(e.value) == (
        f"--authorization-policy-file: {policy} line 1: spec.users: unknown field (known: user, "
        "group, readonly, apiGroup, resource, namespace, nonResourcePath)"
    )


def test_profile_of_an_idle_process_loads(tmp_path: Path) -> None:
    """pstats refuses an empty profile: the profiling thread's own wait is always in it."""
    import pstats

    from kubesched.serving.profiling import cpu_profile

    path = tmp_path / "p.pstats"
    path.write_bytes(cpu_profile(0.0))
    stats = pstats.Stats(str(path))
    assert any(name == "_profiled_interval" for _, _, name in stats.stats)  # type: ignore[attr-defined]
