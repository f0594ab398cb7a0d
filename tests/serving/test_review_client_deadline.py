"""The delegated-authentication client's 10 s timeout bounds the whole request (Go's
``http.Client.Timeout``): a TokenReview answered one byte at a time ends at the timeout, an
oversized answer is refused, a good answer is read."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from extender_support import http_answer, trickling_server

from kubesched.serving.review_client import ReviewClient, ReviewError

REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "status": {"authenticated": True}}


def kubeconfig(tmp_path: Path, url: str) -> str:
    p = tmp_path / "kubeconfig"
    p.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "clusters": [{"name": "c", "cluster": {"server": url}}],
                "users": [{"name": "u", "user": {"token": "t0k"}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
            }
        )
    )
    return str(p)


def test_trickled_review_ends_at_the_timeout(tmp_path: Path) -> None:
    with trickling_server(http_answer(json.dumps(REVIEW).encode()), interval=0.2) as srv:
        client = ReviewClient(kubeconfig(tmp_path, srv.url), "--authentication-kubeconfig", timeout=1.0)
        start = time.monotonic()
        with pytest.raises(ReviewError) as e:
            client("/apis/authentication.k8s.io/v1/tokenreviews", {"kind": "TokenReview"})
        took = time.monotonic() - start
        client.close()
    assert str(e.value) == "POST /apis/authentication.k8s.io/v1/tokenreviews: no answer within 1s"
    assert 1.0 <= took < 1.5


def test_review_answer_read_and_oversized_answer_refused(tmp_path: Path) -> None:
    with trickling_server(http_answer(json.dumps(REVIEW).encode()), trickle_from=1 << 30) as srv:
        client = ReviewClient(kubeconfig(tmp_path, srv.url), "--authentication-kubeconfig")
        assert client("/apis/authentication.k8s.io/v1/tokenreviews", {"kind": "TokenReview"}) == REVIEW
        client.close()
    big = json.dumps({**REVIEW, "x": "y" * (4 * 1024 * 1024)}).encode()
    with trickling_server(http_answer(big), trickle_from=1 << 30) as srv:
        client = ReviewClient(kubeconfig(tmp_path, srv.url), "--authentication-kubeconfig")
        with pytest.raises(ReviewError) as e:
            client("/apis/authentication.k8s.io/v1/tokenreviews", {"kind": "TokenReview"})
        client.close()
    assert (
        str(e.value) == "POST /apis/authentication.k8s.io/v1/tokenreviews: answer larger than 4194304 bytes"
    )
