"""The secure port's authentication and authorization flags of ``kubesched run``, named, defaulted
and parsed as kube-scheduler's (``k8s.io/apiserver/pkg/server/options`` ``DelegatingAuthenticationOptions.AddFlags``
and ``DelegatingAuthorizationOptions.AddFlags``): durations in Go syntax (``10s``, ``1m30s``),
lists comma-separated and repeatable (pflag ``StringSlice``: a repeated flag adds entries), booleans
with an optional value. See :mod:`kubesched.serving.delegation` for what they do."""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from kubesched.cli.pflag import bool_flag_options, duration_flag
from kubesched.serving.authn_requestheader import (
    DEFAULT_EXTRA_PREFIXES,
    DEFAULT_GROUP_HEADERS,
    DEFAULT_USERNAME_HEADERS,
)
from kubesched.serving.delegation import DelegationOptions, check_header_names

__all__ = ["delegation_flags", "delegation_options"]

F = TypeVar("F", bound=Callable[..., Any])


def _slice(values: Sequence[str], default: Sequence[str]) -> tuple[str, ...]:
    """pflag ``StringSlice``: each occurrence is CSV; absent: ``default``."""
    if not values:
        return tuple(default)
    out: list[str] = []
    for v in values:
        if v:
            out.extend(next(csv.reader([v])))
    return tuple(out)


def delegation_flags(f: F) -> F:
    """Add the options to a command (their values arrive as keyword arguments; see
    :func:`delegation_options`)."""
    path = click.Path(dir_okay=False)
    options = [
        click.option(
            "--authentication-kubeconfig",
            type=path,
            default=None,
            help="Kubeconfig of the API server that checks bearer tokens (TokenReview) of requests to the "
            "endpoints (default: the scheduler's own kubeconfig, else in-cluster).",
        ),
        click.option(
            "--authentication-token-webhook-cache-ttl",
            callback=duration_flag,
            default="10s",
            show_default=True,
            help="How long a TokenReview answer is reused (Go duration; 0s: not cached).",
        ),
        click.option(
            "--client-ca-file",
            type=path,
            default=None,
            help="CA bundle (PEM): a request with a client certificate it issued authenticates as the "
            "certificate's CommonName, groups its Organizations (default: the cluster's "
            "kube-system/extension-apiserver-authentication client-ca-file).",
        ),
        click.option(
            "--requestheader-client-ca-file",
            type=path,
            default=None,
            help="CA bundle (PEM) of front proxies: a client certificate it issued (with a CN in "
            "--requestheader-allowed-names) is trusted to name the user in --requestheader-username-headers "
            "(default: the cluster's kube-system/extension-apiserver-authentication ConfigMap).",
        ),
        click.option(
            "--requestheader-allowed-names",
            multiple=True,
            help="Client certificate CommonNames allowed to name users in headers (empty: any certificate "
            "of --requestheader-client-ca-file).",
        ),
        click.option(
            "--requestheader-username-headers",
            multiple=True,
            help="Request headers to inspect for usernames. Default x-remote-user.",
        ),
        click.option(
            "--requestheader-uid-headers",
            multiple=True,
            help="Request headers to inspect for UIDs (X-Remote-Uid is suggested). Default none.",
        ),
        click.option(
            "--requestheader-group-headers",
            multiple=True,
            help="Request headers to inspect for groups. Default x-remote-group.",
        ),
        click.option(
            "--requestheader-extra-headers-prefix",
            multiple=True,
            help="Request header prefixes to inspect for extra user attributes. Default x-remote-extra-.",
        ),
        click.option(
            "--authentication-skip-lookup",
            **bool_flag_options(),
            help="Never look up missing client-certificate and front-proxy settings in the cluster "
            "(default false).",
        ),
        click.option(
            "--authentication-tolerate-lookup-failure",
            **bool_flag_options(),
            help="A failed lookup of those settings is logged, not fatal (default true, as kube-scheduler; "
            "requests may then be anonymous).",
        ),
        click.option(
            "--authorization-kubeconfig",
            type=path,
            default=None,
            help="Kubeconfig of the API server that authorises requests to the endpoints "
            "(SubjectAccessReview; default: the scheduler's own kubeconfig, else in-cluster).",
        ),
        click.option(
            "--authorization-always-allow-paths",
            default="/healthz,/readyz,/livez",
            show_default=True,
            help="Comma-separated paths served without authorization (a trailing * matches a prefix).",
        ),
        click.option(
            "--authorization-webhook-cache-authorized-ttl",
            callback=duration_flag,
            default="10s",
            show_default=True,
            help="How long an allowed SubjectAccessReview answer is reused (Go duration).",
        ),
        click.option(
            "--authorization-webhook-cache-unauthorized-ttl",
            callback=duration_flag,
            default="10s",
            show_default=True,
            help="How long a denied SubjectAccessReview answer is reused (Go duration).",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def delegation_options(kw: dict[str, Any]) -> DelegationOptions:
    """Pop the values of :func:`delegation_flags` out of ``kw``. Raises ConfigError for a blank
    header name or allowed name (``empty value in "requestheader-username-headers"``)."""

    def names(key: str, default: Sequence[str] = ()) -> tuple[str, ...]:
        return check_header_names(key.replace("_", "-"), _slice(kw.pop(key), default))

    skip = kw.pop("authentication_skip_lookup")
    tolerate = kw.pop("authentication_tolerate_lookup_failure")
    return DelegationOptions(
        authentication_kubeconfig=kw.pop("authentication_kubeconfig"),
        authorization_kubeconfig=kw.pop("authorization_kubeconfig"),
        always_allow_paths=tuple(
            p for p in kw.pop("authorization_always_allow_paths").split(",") if p.strip()
        ),
        token_cache_ttl=kw.pop("authentication_token_webhook_cache_ttl"),
        allow_ttl=kw.pop("authorization_webhook_cache_authorized_ttl"),
        deny_ttl=kw.pop("authorization_webhook_cache_unauthorized_ttl"),
        client_ca_file=kw.pop("client_ca_file") or None,
        requestheader_client_ca_file=kw.pop("requestheader_client_ca_file") or None,
        requestheader_allowed_names=names("requestheader_allowed_names"),
        requestheader_username_headers=names("requestheader_username_headers", DEFAULT_USERNAME_HEADERS),
        requestheader_uid_headers=names("requestheader_uid_headers"),
        requestheader_group_headers=names("requestheader_group_headers", DEFAULT_GROUP_HEADERS),
        requestheader_extra_headers_prefix=names(
            "requestheader_extra_headers_prefix", DEFAULT_EXTRA_PREFIXES
        ),
        skip_lookup=bool(skip),
        tolerate_lookup_failure=True if tolerate is None else bool(tolerate),
    )
