"""``ClusterClient`` over a real Kubernetes API server, through the official ``kubernetes`` client.

Requests carry the official client's configuration (kubeconfig/in-cluster auth, TLS, bearer
tokens and exec credential plugins work as the official client does) and its headers, but are
sent through a keep-alive pool (:mod:`kubesched.client.http_pool`; watches and proxied
connections through its urllib3 pool): bodies, answers and watch events are encoded and decoded
by :mod:`kubesched.client.json_codec` straight into plain dicts, never into the client's typed
models. Every request, watches included, first takes a token from a
:class:`~kubesched.client.rate_limit.TokenBucket` (client-go's client-side QPS/burst limiter).

Errors: 404 -> ``NotFoundError``, 409 -> ``ConflictError`` (``AlreadyExistsError`` for reason
``AlreadyExists``), 410 -> ``GoneError``, anything else -> :class:`KubeApiError` (code 0 when no
HTTP answer came). Answers 429, or 5xx with a ``Retry-After`` header, are retried after that many
seconds up to ``max_retries`` times (client-go ``rest.Request``'s ``checkWait``/``maxRetries``).

Watches run on one daemon thread each. Handlers of every watch of one client are called under
:attr:`KubeClusterClient.dispatch_lock`, one at a time (as the embedded store calls them under its
lock). A watch whose stream ends normally (server timeout, dropped connection) is resumed from the
last resourceVersion it saw (events and BOOKMARKs). A watch started with a re-list callback
(``watch_resumable``'s ``on_gone``) ends and calls it -- so the informer lists again with
resourceVersion "" and reconciles, as client-go's reflector does -- when the server answers
``410 Gone``/``Expired``, ``504 Too large resource version`` (the server's history went backwards:
etcd restore, restarted ``kubesched serve``) or any other ``ERROR`` event or HTTP error, and after
:data:`WATCH_FAILURES_BEFORE_RELIST` consecutive connection failures; other failures are retried
with backoff 0.8 s doubling to 30 s. Retry warnings are rate-limited (one line per kind every 30 s).

Upstream references: ``k8s.io/client-go/rest`` (request, retries), ``tools/cache/reflector.go``
(list with ``limit``/``continue``, watch with ``allowWatchBookmarks`` and ``timeoutSeconds``).
"""

from __future__ import annotations

import builtins
import functools
import http.client
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote, urlencode, urlsplit

import urllib3
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from kubesched.api import kinds
from kubesched.api.timestamps import rfc3339_micro
from kubesched.client.client import (
    GroupVersionResource,
    ListResult,
    WatchEvent,
    WatchHandler,
)
from kubesched.client.fencing import WriteGuard
from kubesched.client.http_pool import ConnectionPool, Transport, ssl_context_for
from kubesched.client.json_codec import dumps, loads
from kubesched.client.rate_limit import TokenBucket
from kubesched.client.throttled_log import ThrottledLog
from kubesched.clock import Clock, RealClock
from kubesched.errors import AlreadyExistsError, ConfigError, ConflictError, GoneError, NotFoundError

if TYPE_CHECKING:
    from kubesched.client.client_metrics import ComponentMetrics

__all__ = [
    "KubeApiError",
    "KubeClusterClient",
    "collection_path",
    "is_too_large_resource_version",
    "object_path",
]

log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: Page size of list requests (client-go pager default).
LIST_PAGE_SIZE = 500

#: Watch retry backoff in seconds: first wait, cap (client-go reflector's 800 ms doubling to 30 s).
WATCH_BACKOFF_INITIAL = 0.8
WATCH_BACKOFF_MAX = 30.0
#: Consecutive connection failures (refused, reset, 429) after which a watch with a re-list callback
#: gives up resuming and asks its informer to re-list (the server may have restarted, with a new
#: resourceVersion history).
WATCH_FAILURES_BEFORE_RELIST = 3


class KubeApiError(Exception):
    """An API request failed with HTTP ``code`` (0: no answer, e.g. connection refused) and the
    ``Status`` body's ``reason``/``message`` (``str()`` is the message, as upstream prints status
    errors); ``retry_after`` is the ``Retry-After`` header in seconds, if any."""

    def __init__(self, code: int, reason: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)  # as client-go's StatusError.Error(): the Status message
        self.code = code
        self.reason = reason
        self.message = message
        self.retry_after = retry_after


def _row(kind: str) -> kinds.Kind:
    row = kinds.lookup(kind)
    if row is None:
        raise ValueError(f"unsupported kind {kind}")
    return row


def _api_version(kind: str) -> str:
    """``apiVersion`` of a registered kind; raises ValueError for another kind."""
    return _row(kind).group_version


@functools.lru_cache(maxsize=4096)
def collection_path(kind: str, namespace: str | None) -> str:
    """URL path of ``kind``'s collection (all namespaces when ``namespace`` is empty/None or the
    kind is cluster-scoped): ``/api/v1/namespaces/ns/pods``, ``/apis/storage.k8s.io/v1/csinodes``.
    Raises ValueError for a kind the registry (:mod:`kubesched.api.kinds`) does not have."""
    row = _row(kind)
    if not row.namespaced or not namespace:
        return f"{row.prefix()}/{row.plural}"
    return f"{row.prefix()}/namespaces/{quote(namespace, safe='')}/{row.plural}"


kinds.on_change(collection_path.cache_clear)


def object_path(kind: str, namespace: str | None, name: str) -> str:
    """URL path of one object (``.../namespaces/ns/pods/name``)."""
    if not kinds.is_cluster_scoped(kind) and not namespace:
        namespace = "default"
    return f"{collection_path(kind, namespace)}/{quote(name, safe='')}"


def _gv_prefix(gvr: GroupVersionResource) -> str:
    """``/api/v1`` for the core group, else ``/apis/{group}/{version}``."""
    return f"/apis/{gvr.group}/{gvr.version}" if gvr.group else f"/api/{gvr.version}"


def _gvr_path(gvr: GroupVersionResource, namespace: str | None) -> str:
    """The collection of ``gvr`` in ``namespace`` (all namespaces when empty/None)."""
    ns = f"/namespaces/{quote(namespace, safe='')}" if namespace else ""
    return f"{_gv_prefix(gvr)}{ns}/{quote(gvr.resource, safe='')}"


def _selector_string(sel: str | Mapping[str, str] | None) -> str | None:
    if sel is None:
        return None
    if isinstance(sel, str):
        return sel or None
    return ",".join(f"{k}={v}" for k, v in sorted(sel.items())) or None


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _retry_after(headers: Any) -> float | None:
    if not headers:
        return None
    value = headers.get("Retry-After") if hasattr(headers, "get") else None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _transport_reason(e: BaseException) -> str:
    """The useful part of a connection error (``Failed to establish a new connection: [Errno 111]
    Connection refused``), without urllib3's retry wrapper and connection repr."""
    reason = getattr(e, "reason", None)
    text = str(reason if isinstance(reason, BaseException) else e)
    if text.startswith(("HTTPConnection(", "HTTPSConnection(", "<urllib3")):
        i = text.find("): ")
        if i >= 0:
            text = text[i + 3 :]
    return text


def is_too_large_resource_version(err: BaseException) -> bool:
    """Whether ``err`` is the API server's ``504 Too large resource version`` (the client asked for
    a resourceVersion the server has not reached, e.g. after an etcd restore or a restarted
    ``kubesched serve``): client-go's ``isTooLargeResourceVersionError``."""
    return (
        isinstance(err, KubeApiError)
        and err.code == 504
        and "too large resource version" in err.message.lower()
    )


def _error_from_status(code: int, body: Any, headers: Any = None) -> Exception:
    """Map an HTTP error answer (``Status`` body, bytes or str) to kubesched's errors."""
    status: Any = None
    if isinstance(body, bytes | bytearray):
        body = body.decode("utf-8", errors="replace")
    if isinstance(body, str) and body:
        try:
            status = json.loads(body)
        except ValueError:
            status = None
    if isinstance(body, dict):
        status = body
    reason = ""
    message = body if isinstance(body, str) else ""
    if isinstance(status, dict):
        reason = str(status.get("reason") or "")
        message = str(status.get("message") or message)
    if code == 404:
        return NotFoundError(message)
    if code == 409:
        return AlreadyExistsError(message) if reason == "AlreadyExists" else ConflictError(message)
    if code == 410:
        return GoneError(message)
    return KubeApiError(code, reason, message, _retry_after(headers))


def check_kubeconfig(path: str) -> None:
    """Check that ``path`` is readable YAML shaped like a kubeconfig (a mapping whose ``clusters``,
    ``contexts`` and ``users`` are lists of named entries), so that the official loader's internal
    errors (``list indices must be integers``) never reach the user. Raises ConfigError located in
    the file, e.g. ``kc.yaml: --kubeconfig: not a kubeconfig: expected a mapping with clusters,
    contexts and users, got a list``."""
    import yaml

    from kubesched.api.yaml_limits import YAMLLimitError, safe_load

    def bad(message: str) -> ConfigError:
        return ConfigError("--kubeconfig", message, path)

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise bad(f"cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise bad("not a kubeconfig: the file is not UTF-8 text") from None
    try:
        doc = safe_load(text, yaml.SafeLoader)  # aliases and nesting bounded, as every YAML input
    except YAMLLimitError as e:
        raise bad(f"invalid YAML: {e}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise bad(f"invalid YAML{where}: {problem}") from None
    if doc is None:
        raise bad("the file is empty")
    if not isinstance(doc, dict):
        got = {str: "a string", list: "a list", int: "a number", float: "a number", bool: "a boolean"}.get(
            type(doc), type(doc).__name__
        )
        raise bad(f"not a kubeconfig: expected a mapping with clusters, contexts and users, got {got}")
    for section, inner in (("clusters", "cluster"), ("contexts", "context"), ("users", "user")):
        entries = doc.get(section)
        if entries is None:
            continue
        if not isinstance(entries, list):
            raise bad(f"{section}: must be a list of {{name, {inner}}} entries")
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise bad(f"{section}[{i}]: must be a mapping with a name and a {inner}")
            if entry.get(inner) is not None and not isinstance(entry.get(inner), dict):
                raise bad(f"{section}[{i}].{inner}: must be a mapping")
    current = doc.get("current-context")
    if current is not None and not isinstance(current, str):
        raise bad("current-context: must be a string")


class KubeClusterClient:
    """The :class:`~kubesched.client.client.ClusterClient` protocol over an API server.

    ``api_client``: a configured ``kubernetes.client.ApiClient``. ``limiter``: the shared token
    bucket (None: unlimited). ``request_timeout``: seconds per non-watch request.
    ``watch_timeout``: ``(low, high)`` seconds; each watch asks the server for a random
    ``timeoutSeconds`` in that range (client-go uses 5-10 minutes) and resumes afterwards.
    """

    def __init__(
        self,
        api_client: k8s_client.ApiClient,
        limiter: TokenBucket | None = None,
        *,
        clock: Clock | None = None,
        request_timeout: float = 30.0,
        watch_timeout: tuple[int, int] = (300, 600),
        max_retries: int = 10,
        rng: random.Random | None = None,
        transport: Transport | None = None,
        component_metrics: ComponentMetrics | None = None,
        write_guard: WriteGuard | None = None,
    ) -> None:
        self.api = api_client
        self.limiter = limiter
        self.clock = clock or RealClock()
        self.request_timeout = request_timeout
        self.watch_timeout = watch_timeout
        self.max_retries = max_retries
        self.rng = rng or random.Random()
        #: Held while any watch handler of this client runs (and by informers while re-listing).
        self.dispatch_lock = threading.RLock()
        self._watches: set[_Watch] = set()
        self._watches_lock = threading.Lock()
        #: Rate limit of the retry warnings of watches and informers (one line per kind every 30 s).
        self.retry_log = ThrottledLog(log, 30.0)
        #: ``rest_client_*`` metrics of every request (set by ``kubesched run``; None: not recorded).
        self.component_metrics: ComponentMetrics | None = component_metrics
        self._host = urlsplit(str(getattr(api_client.configuration, "host", "") or "")).netloc
        #: consulted immediately before each mutating request is sent (see kubesched.client.fencing)
        self.write_guard: WriteGuard | None = write_guard
        cfg = api_client.configuration
        self._base_url = str(cfg.host).rstrip("/") if cfg is not None else ""
        self._headers: dict[str, str] = {**(api_client.default_headers or {}), "Accept": "application/json"}
        #: transport of the non-streaming requests: ``transport``, else a keep-alive pool to the
        #: kubeconfig's server (None: a proxy is configured, the official client's urllib3 is used)
        self._fast: Transport | None = transport
        if self._fast is None and cfg is not None and not cfg.proxy:
            ctx = ssl_context_for(cfg) if self._base_url.startswith("https:") else None
            self._fast = ConnectionPool(
                self._base_url,
                ssl_context=ctx,
                server_hostname=cfg.tls_server_name or None,
                maxsize=int(cfg.connection_pool_maxsize or 32),
            )

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_kubeconfig(
        cls,
        kubeconfig: str | None,
        *,
        qps: float,
        burst: int,
        context: str | None = None,
        clock: Clock | None = None,
        **kwargs: Any,
    ) -> KubeClusterClient:
        """A client for the cluster of ``kubeconfig`` (a path), or the in-cluster service account when
        ``kubeconfig`` is None/empty (as kube-scheduler does without ``--kubeconfig``), limited to
        ``qps`` requests/second with bursts of ``burst``. Raises ConfigError when the kubeconfig
        cannot be loaded or no in-cluster configuration exists."""
        cfg = k8s_client.Configuration()
        if kubeconfig:
            check_kubeconfig(kubeconfig)
        try:
            if kubeconfig:
                k8s_config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=cfg)
            else:
                k8s_config.load_incluster_config(client_configuration=cfg)
        except Exception as e:  # noqa: BLE001 - the loader raises anything on odd content
            what = "--kubeconfig" if kubeconfig else "in-cluster configuration (no --kubeconfig given)"
            raise ConfigError("", f"cannot load {what}: {e}", kubeconfig or "") from None
        # One connection per watch (14 kinds) plus concurrent requests.
        cfg.connection_pool_maxsize = 64
        clock = clock or RealClock()
        limiter = TokenBucket(qps, burst, clock) if qps != 0 else None
        return cls(k8s_client.ApiClient(cfg), limiter, clock=clock, **kwargs)

    # ------------------------------------------------------------------ transport

    def _call(
        self,
        method: str,
        path: str,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: Any = None,
    ) -> urllib3.BaseHTTPResponse:
        """One request (after the rate limiter), retried on 429 / 5xx with Retry-After.
        Returns the undecoded response (caller reads or streams it).

        The request goes straight to the official client's urllib3 pool (keep-alive connections,
        its TLS and proxy settings) with the headers its ``call_api`` would send, credentials
        included (``update_params_for_auth``: bearer tokens, refreshed exec-plugin tokens): the
        official client's per-request model sanitising and parameter handling cost more CPU
        than the request itself, and every kubesched body is already plain JSON."""
        params = [(k, v) for k, v in (query or {}).items() if v is not None]
        if timeout is None:
            timeout = self.request_timeout
        if isinstance(timeout, int | float):
            timeout = (timeout, timeout)
        url = self._base_url + path
        if params:
            url += "?" + urlencode(params)
        data = dumps(body) if body is not None else None
        attempt = 0
        metrics = self.component_metrics
        while True:
            headers, waited = self._admit(method, path, content_type)
            started = time.monotonic()
            try:
                resp = self.api.rest_client.pool_manager.request(
                    method,
                    url,
                    body=data,
                    headers=headers,
                    preload_content=False,
                    redirect=False,
                    retries=False,
                    timeout=urllib3.Timeout(connect=timeout[0], read=timeout[1]),
                )
            except (urllib3.exceptions.HTTPError, OSError) as e:
                if metrics is not None:
                    metrics.request(method, self._host, None, time.monotonic() - started, waited)
                raise KubeApiError(0, "", f"{method} {path}: {_transport_reason(e)}") from None
            code = resp.status
            if metrics is not None:
                metrics.request(method, self._host, code, time.monotonic() - started, waited)
            if 200 <= code <= 299:
                return resp
            try:
                err_body = resp.data
            except (urllib3.exceptions.HTTPError, OSError):
                err_body = b""
            finally:
                resp.release_conn()
            err = _error_from_status(code, err_body, resp.headers)
            if self._wait_to_retry(method, path, err, code, attempt):
                attempt += 1
                continue
            raise err from None

    def _wait_to_retry(self, method: str, path: str, err: Exception, code: int, attempt: int) -> bool:
        """Sleep and return True when a failed request is to be retried: a 429 or 5xx answer with
        ``Retry-After`` (at most 30 s), up to :attr:`max_retries` times (client-go ``checkWait``).
        A resourceVersion too large is never waited for: the client is ahead and must re-list."""
        retry_after = err.retry_after if isinstance(err, KubeApiError) else None
        if is_too_large_resource_version(err) or retry_after is None:
            return False
        if not (code == 429 or code >= 500) or attempt >= self.max_retries:
            return False
        log.info("%s %s: %s; retrying in %gs (attempt %d)", method, path, err, retry_after, attempt + 1)
        self.clock.sleep(min(retry_after, 30.0))
        return True

    def _fetch(
        self,
        method: str,
        path: str,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        *,
        attempt: int = 0,
    ) -> bytes:
        """One non-streaming request through the keep-alive pool (:mod:`kubesched.client.http_pool`;
        urllib3 when the kubeconfig names a proxy), retried as :meth:`_call`; the body of a 2xx answer.
        ``attempt``: retries already made (a request first sent pipelined)."""
        if self._fast is None:
            resp = self._call(method, path, query, body, content_type)
            try:
                return bytes(resp.data)
            except (urllib3.exceptions.HTTPError, OSError) as e:
                raise KubeApiError(0, "", f"{method} {path}: {e}") from None
            finally:
                resp.release_conn()
        params = [(k, v) for k, v in (query or {}).items() if v is not None]
        target = path + ("?" + urlencode(params) if params else "")
        data = dumps(body) if body is not None else None
        timeout = (self.request_timeout, self.request_timeout)
        metrics = self.component_metrics
        while True:
            headers, waited = self._admit(method, path, content_type)
            started = time.monotonic()
            try:
                answer = self._fast.request(method, target, data, headers, timeout)
            except (http.client.HTTPException, OSError) as e:
                if metrics is not None:
                    metrics.request(method, self._host, None, time.monotonic() - started, waited)
                raise KubeApiError(0, "", f"{method} {path}: {_transport_reason(e)}") from None
            code = answer.status
            if metrics is not None:
                metrics.request(method, self._host, code, time.monotonic() - started, waited)
            if 200 <= code <= 299:
                return answer.data
            err = _error_from_status(code, answer.data, answer.headers)
            if self._wait_to_retry(method, path, err, code, attempt):
                attempt += 1
                continue
            raise err from None

    def _admit(self, method: str, path: str, content_type: str) -> tuple[dict[str, str], float]:
        """What every request does just before it is sent (both transports): take a
        token from the rate limiter, build the headers (with the bearer token, refreshed as the
        official client refreshes it) and, for a write, pass the write guard (LeaseLostError:
        never sent). Returns the headers and the seconds waited for the token."""
        waited = self.limiter.accept() if self.limiter is not None else 0.0
        headers = {**self._headers, "Content-Type": content_type}
        self.api.update_params_for_auth(headers, [], ["BearerToken"])
        if self.write_guard is not None and method != "GET":
            self.write_guard.check(method, path)
        return headers, waited

    def _json(
        self,
        method: str,
        path: str,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> Any:
        data = self._fetch(method, path, query, body, content_type)
        return loads(data) if data else None

    # ------------------------------------------------------------------ ClusterClient

    def list(
        self, kind: str, namespace: str | None = None, label_selector: str | Mapping[str, str] | None = None
    ) -> ListResult:
        """All objects (paged by :data:`LIST_PAGE_SIZE`; an expired ``continue`` token restarts the list
        unpaged). Items get ``kind``/``apiVersion`` filled in (list items omit them). Sorted by
        namespace/name."""
        path = collection_path(kind, namespace)
        sel = _selector_string(label_selector)
        items: builtins.list[Obj] = []
        cont: str | None = None
        paged = True
        while True:
            query = {"labelSelector": sel, "limit": LIST_PAGE_SIZE if paged else None, "continue": cont}
            try:
                doc = self._json("GET", path, query)
            except GoneError:
                if cont is None:
                    raise
                items, cont, paged = [], None, False  # continue token expired: full list
                continue
            api_version = _api_version(kind)
            for item in doc.get("items") or []:
                item.setdefault("kind", kind)
                item.setdefault("apiVersion", api_version)
                items.append(item)
            meta = doc.get("metadata") or {}
            cont = meta.get("continue") or None
            if not cont:
                items.sort(
                    key=lambda o: (str(_meta(o).get("namespace") or ""), str(_meta(o).get("name") or ""))
                )
                return ListResult(items, str(meta.get("resourceVersion") or ""))

    def get(self, kind: str, namespace: str | None, name: str) -> Obj:
        """``GET`` one object. Raises NotFoundError."""
        obj = self._json("GET", object_path(kind, namespace, name))
        obj.setdefault("kind", kind)
        obj.setdefault("apiVersion", _api_version(kind))
        return obj

    def create(self, obj: Obj) -> Obj:
        """``POST`` to the collection. Raises AlreadyExistsError."""
        kind = obj["kind"]
        body = {**obj, "apiVersion": obj.get("apiVersion") or _api_version(kind)}
        if kind == "Event":
            body = _normalize_event(body)
        return self._json("POST", collection_path(kind, _meta(obj).get("namespace") or "default"), body=body)

    def update(self, obj: Obj) -> Obj:
        """``PUT`` (resourceVersion precondition when set). Raises ConflictError, NotFoundError."""
        kind = obj["kind"]
        meta = _meta(obj)
        body = {**obj, "apiVersion": obj.get("apiVersion") or _api_version(kind)}
        return self._json("PUT", object_path(kind, meta.get("namespace"), str(meta.get("name"))), body=body)

    def patch_status(self, kind: str, namespace: str | None, name: str, patch: Obj) -> Obj:
        """Strategic merge patch of the ``status`` subresource (``conditions`` merge by ``type``, a
        ``None`` value deletes a field), as ``util.PatchPodStatus`` sends it."""
        return self._json(
            "PATCH",
            object_path(kind, namespace, name) + "/status",
            body={"status": patch},
            content_type="application/strategic-merge-patch+json",
        )

    def delete(self, kind: str, namespace: str | None, name: str, *, grace: bool = False) -> None:
        """``DELETE`` with default ``DeleteOptions``: the API server applies the object's grace
        period (for pods ``terminationGracePeriodSeconds``; the kubelet finishes the deletion), as
        upstream's preemption does (``DeleteOptions{}``) -- ``grace`` only matters to the embedded
        store, which has no kubelet. Raises NotFoundError."""
        self._json("DELETE", object_path(kind, namespace, name))

    def bind(self, namespace: str, name: str, uid: str, node_name: str) -> None:
        """``POST pods/<name>/binding``; the answer is a ``Status`` and is not decoded as a Binding.
        Raises NotFoundError / ConflictError (already assigned, being deleted, uid mismatch)."""
        meta: Obj = {"name": name, "namespace": namespace}
        if uid:
            meta["uid"] = uid
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": meta,
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        self._fetch("POST", object_path("Pod", namespace, name) + "/binding", body=body)

    def create_event(self, event: Obj) -> None:
        """``POST`` an ``events.k8s.io/v1`` Event (``eventTime`` written as MicroTime); the answer
        (the stored Event) is not decoded, as the event sink ignores it."""
        path, body = _event_request(event)
        self._fetch("POST", path, body=body)

    def create_events(self, events: builtins.list[Obj]) -> builtins.list[Exception | None]:
        """``POST`` several ``events.k8s.io/v1`` Events pipelined on one connection
        (:meth:`ConnectionPool.request_pipelined`), each taking its token from the rate limiter
        and passing the write guard first; the result per event is None (created) or the error
        :meth:`create_event` would raise (a transport failure is ``KubeApiError`` code 0; a 429
        or 5xx answer with ``Retry-After`` is sent again on its own after the wait, as
        :meth:`_fetch` retries). Through urllib3 (a proxy) they are created one by one. Raises
        only ``LeaseLostError`` from the write guard."""
        if self._fast is None:
            results: builtins.list[Exception | None] = []
            for ev in events:
                try:
                    self.create_event(ev)
                    results.append(None)
                except KubeApiError as e:
                    results.append(e)
            return results
        requests: builtins.list[tuple[str, str, bytes | None, dict[str, str]]] = []
        waits: builtins.list[float] = []
        bodies: builtins.list[Obj] = []
        for ev in events:
            path, body = _event_request(ev)
            headers, waited = self._admit("POST", path, "application/json")  # LeaseLostError: none sent
            requests.append(("POST", path, dumps(body), headers))
            waits.append(waited)
            bodies.append(body)
        started = time.monotonic()
        answers = self._fast.request_pipelined(requests, (self.request_timeout, self.request_timeout))
        elapsed = (time.monotonic() - started) / max(1, len(answers))
        out: builtins.list[Exception | None] = []
        metrics = self.component_metrics
        for (_m, path, _b, _h), body, waited, answer in zip(requests, bodies, waits, answers, strict=True):
            if isinstance(answer, Exception):
                if metrics is not None:
                    metrics.request("POST", self._host, None, elapsed, waited)
                out.append(KubeApiError(0, "", f"POST {path}: {_transport_reason(answer)}"))
                continue
            if metrics is not None:
                metrics.request("POST", self._host, answer.status, elapsed, waited)
            if 200 <= answer.status <= 299:
                out.append(None)
                continue
            err = _error_from_status(answer.status, answer.data, answer.headers)
            if self._wait_to_retry("POST", path, err, answer.status, 0):  # Retry-After: on its own
                try:
                    self._fetch("POST", path, body=body, attempt=1)
                    out.append(None)
                except KubeApiError as e:
                    out.append(e)
                continue
            out.append(err)
        return out

    def patch_event(self, namespace: str, name: str, patch: Obj) -> Obj:
        """Strategic merge ``PATCH`` of an ``events.k8s.io/v1`` Event (the event broadcaster's
        series updates: ``{"series": {"count": n, "lastObservedTime": ...}}``). Raises NotFoundError."""
        result: Obj = self._json(
            "PATCH",
            object_path("Event", namespace, name),
            body=patch,
            content_type="application/strategic-merge-patch+json",
        )
        return result

    # ------------------------------------------------------------------ resources by GroupVersionResource

    def serves_resource(self, gvr: GroupVersionResource) -> bool:
        """``GET /apis/{group}/{version}`` (discovery) lists ``gvr.resource``; False on 404 (the
        group/version is not served). Other errors raise."""
        try:
            doc = self._json("GET", _gv_prefix(gvr))
        except NotFoundError:
            return False
        return any(
            isinstance(r, Mapping) and r.get("name") == gvr.resource
            for r in (doc or {}).get("resources") or []
        )

    def list_resource(
        self,
        gvr: GroupVersionResource,
        namespace: str | None = None,
        label_selector: str | Mapping[str, str] | None = None,
    ) -> builtins.list[Obj]:
        """``GET`` the collection (one request, unpaged), sorted by namespace/name. Raises NotFoundError."""
        doc = self._json(
            "GET", _gvr_path(gvr, namespace), {"labelSelector": _selector_string(label_selector)}
        )
        items = [o for o in (doc or {}).get("items") or [] if isinstance(o, dict)]
        items.sort(key=lambda o: (str(_meta(o).get("namespace") or ""), str(_meta(o).get("name") or "")))
        return items

    def create_resource(self, gvr: GroupVersionResource, obj: Obj) -> Obj:
        """``POST`` to the collection of ``metadata.namespace``. Raises NotFoundError, AlreadyExistsError."""
        created: Obj = self._json("POST", _gvr_path(gvr, _meta(obj).get("namespace")), body=obj)
        return created

    def delete_resource(self, gvr: GroupVersionResource, namespace: str | None, name: str) -> None:
        """``DELETE`` one object. Raises NotFoundError."""
        self._json("DELETE", f"{_gvr_path(gvr, namespace)}/{quote(name, safe='')}")

    def with_limiter(
        self, limiter: TokenBucket | None, *, write_guard: WriteGuard | None | Literal["same"] = "same"
    ) -> KubeClusterClient:
        """A client sharing this one's credentials and metrics but taking tokens from ``limiter``
        (upstream's scheduler writes events, and elects its leader, through clients of their own,
        so neither uses the bindings' tokens). ``write_guard``: this client's (``"same"``), another
        one, or None (unfenced)."""
        return KubeClusterClient(
            self.api,
            limiter,
            clock=self.clock,
            request_timeout=self.request_timeout,
            watch_timeout=self.watch_timeout,
            max_retries=self.max_retries,
            rng=self.rng,
            component_metrics=self.component_metrics,
            write_guard=self.write_guard if isinstance(write_guard, str) else write_guard,
        )

    # ------------------------------------------------------------------ watching

    def watch(self, kind: str, resource_version: str | None, handler: WatchHandler) -> _Watch:
        """Start a resuming watch (see the module docstring). A ``410 Gone`` ends it with an error
        log, other watch errors are retried with backoff; informers use :meth:`watch_resumable` to
        re-list instead. Never raises GoneError
        synchronously: over HTTP the server reports it inside the stream."""
        return self.watch_resumable(kind, resource_version, handler, None)

    def watch_resumable(
        self,
        kind: str,
        resource_version: str | None,
        handler: WatchHandler,
        on_gone: Callable[[], None] | None,
    ) -> _Watch:
        """Like :meth:`watch`; when the informer must re-list (``410 Gone``, ``504 Too large resource
        version``, any other watch error, repeated connection failures: see the module docstring)
        the watch ends and ``on_gone()`` is called on the watch thread (outside
        :attr:`dispatch_lock`)."""
        w = _Watch(self, kind, resource_version, handler, on_gone)
        with self._watches_lock:
            self._watches.add(w)
        w.start()
        return w

    def open_watches(self) -> int:
        """Number of watches not stopped or ended."""
        with self._watches_lock:
            return len(self._watches)

    def _forget_watch(self, w: _Watch) -> None:
        with self._watches_lock:
            self._watches.discard(w)

    def close(self) -> None:
        """Stop every watch and close the connection pool."""
        with self._watches_lock:
            watches = list(self._watches)
        for w in watches:
            w.stop()
        if isinstance(self._fast, ConnectionPool):
            self._fast.close()
        try:
            self.api.close()
        except Exception:  # noqa: BLE001 - best effort at shutdown
            pass


def _event_request(event: Obj) -> tuple[str, Obj]:
    """The collection path and the body that create an ``events.k8s.io/v1`` Event."""
    body = _normalize_event({**event, "kind": "Event", "apiVersion": "events.k8s.io/v1"})
    return collection_path("Event", _meta(event).get("namespace") or "default"), body


def _normalize_event(ev: Obj) -> Obj:
    """``eventTime`` as MicroTime (``2006-01-02T15:04:05.000000Z``): the API server rejects the
    second-precision form for events.k8s.io/v1."""
    t = ev.get("eventTime")
    if isinstance(t, str) and t.endswith("Z") and "." not in t:
        ev = {**ev, "eventTime": t[:-1] + ".000000Z"}
    elif isinstance(t, int | float):
        ev = {**ev, "eventTime": rfc3339_micro(float(t))}
    return ev


def _lines(resp: urllib3.BaseHTTPResponse) -> Iterator[bytes]:
    """Newline-delimited lines of a streaming response, as chunks arrive (a chunk may hold
    several lines: ``kubesched serve`` sends the events of one batch together)."""
    rest = b""
    for chunk in resp.stream(amt=None, decode_content=True):
        if rest:
            chunk = rest + chunk
        lines = chunk.split(b"\n")
        rest = lines.pop()
        for line in lines:
            if line.strip():
                yield line
    if rest.strip():
        yield rest


class _Watch:
    """One resuming watch on its own daemon thread (a client-go reflector's watch half)."""

    def __init__(
        self,
        client: KubeClusterClient,
        kind: str,
        resource_version: str | None,
        handler: WatchHandler,
        on_gone: Callable[[], None] | None,
    ) -> None:
        self.client = client
        self.kind = kind
        self.resource_version = resource_version or ""
        self.handler = handler
        self.on_gone = on_gone
        self._stopped = threading.Event()
        self._resp: urllib3.BaseHTTPResponse | None = None
        self._thread = threading.Thread(target=self._run, name=f"watch-{kind}", daemon=True)
        #: streams opened so far (1 + resumptions)
        self.connections = 0
        #: True while the last attempt failed (cleared once a stream opens)
        self.failing = False
        #: set when the watch ended for a re-list because the server seems to have changed under it
        #: (``504 Too large resource version``: its history went backwards; or repeated connection
        #: failures: it went away): every kind should then be re-listed, not just this one
        self.server_changed = False

    def start(self) -> None:
        self._thread.start()

    @property
    def active(self) -> bool:
        """True until stopped or ended (410, thread exit)."""
        return self._thread.is_alive() and not self._stopped.is_set()

    def stop(self) -> None:
        """End the watch; no handler call starts after this returns (idempotent)."""
        with self.client.dispatch_lock:
            self._stopped.set()
        resp = self._resp
        if resp is not None:
            try:
                resp.shutdown()
            except Exception:  # noqa: BLE001 - the stream may already be closed
                pass
        self.client._forget_watch(self)

    def _deliver(self, ev: WatchEvent) -> None:
        with self.client.dispatch_lock:
            if self._stopped.is_set():
                return
            try:
                self.handler(ev)
            except Exception:  # noqa: BLE001 - a handler failure never kills the watch
                log.exception("watch handler for %s failed on %s", self.kind, ev.type)

    def _run(self) -> None:
        backoff = WATCH_BACKOFF_INITIAL
        failures = 0
        relist: str | None = None  # why the informer must re-list (the watch then ends)
        throttle = self.client.retry_log
        key = "watch"  # one line per 30 s for all the kinds (they fail together)
        try:
            while not self._stopped.is_set():
                lo, hi = self.client.watch_timeout
                timeout_s = self.client.rng.randint(lo, hi) if hi > lo else lo
                query = {
                    "watch": "1",
                    "allowWatchBookmarks": "true",
                    "timeoutSeconds": timeout_s,
                    "resourceVersion": self.resource_version or None,
                }
                try:
                    resp = self.client._call(
                        "GET",
                        collection_path(self.kind, None),
                        query,
                        timeout=(self.client.request_timeout, timeout_s + 30),
                    )
                except GoneError as e:
                    relist = f"410 Gone: {e}"
                    return
                except Exception as e:  # noqa: BLE001 - retried with backoff, or re-listed
                    if self._stopped.is_set():
                        return
                    failures += 1
                    self.failing = True
                    code = e.code if isinstance(e, KubeApiError) else 0
                    if self.on_gone is not None and (
                        code not in (0, 429) or failures >= WATCH_FAILURES_BEFORE_RELIST
                    ):
                        relist = str(e)
                        self.server_changed = code == 0 or is_too_large_resource_version(e)
                        return
                    throttle.log(
                        key,
                        logging.WARNING,
                        "watch %s from %s failed: %s; retrying in %.1fs",
                        self.kind,
                        self.resource_version or "now",
                        e,
                        backoff,
                    )
                    self._stopped.wait(backoff)
                    backoff = min(backoff * 2, WATCH_BACKOFF_MAX)
                    continue
                self.connections += 1
                self.failing = False
                self._resp = resp
                try:
                    if self._stopped.is_set():
                        return
                    error = self._consume(resp)
                    if error is None:
                        failures, backoff, self.failing = 0, WATCH_BACKOFF_INITIAL, False
                        continue
                    code, message = error
                    failures += 1
                    if code == 410 or self.on_gone is not None:
                        relist = f"server error {code}: {message}"
                        self.server_changed = is_too_large_resource_version(KubeApiError(code, "", message))
                        return
                    self.failing = True
                    throttle.log(
                        key,
                        logging.WARNING,
                        "watch %s: server error %s: %s; retrying in %.1fs",
                        self.kind,
                        code,
                        message,
                        backoff,
                    )
                    self._stopped.wait(backoff)
                    backoff = min(backoff * 2, WATCH_BACKOFF_MAX)
                except Exception as e:  # noqa: BLE001 - dropped stream: resume
                    if not self._stopped.is_set():
                        log.info(
                            "watch %s interrupted at %s: %s; resuming", self.kind, self.resource_version, e
                        )
                        self._stopped.wait(0.1)
                finally:
                    self._resp = None
                    try:
                        resp.release_conn()
                    except Exception:  # noqa: BLE001
                        pass
        finally:
            self.client._forget_watch(self)
            if relist is not None and not self._stopped.is_set():
                self.failing = True
                if self.on_gone is not None:
                    throttle.log(
                        f"relist {self.kind}",
                        logging.INFO,
                        "watch %s from %s ended (%s); re-listing",
                        self.kind,
                        self.resource_version or "now",
                        relist,
                    )
                    self.on_gone()
                else:
                    log.error("watch of %s ended: %s and nobody to re-list", self.kind, relist)

    def _consume(self, resp: urllib3.BaseHTTPResponse) -> tuple[int, str] | None:
        """Deliver the stream's events; ``(code, message)`` of the ``ERROR`` event that ended it
        (410 Expired, 504 Too large resource version, ...), None when it simply ended."""
        kind = self.kind
        for line in _lines(resp):
            if self._stopped.is_set():
                return None
            ev = loads(line)
            etype = ev.get("type")
            obj = ev.get("object") or {}
            if etype == "ERROR":
                return int(obj.get("code") or 0), str(obj.get("message") or "")
            rv = str(_meta(obj).get("resourceVersion") or "")
            if etype in ("ADDED", "MODIFIED", "DELETED"):
                obj.setdefault("kind", kind)
                obj.setdefault("apiVersion", _api_version(kind))
                self._deliver(WatchEvent(etype, kind, obj, None))
            elif etype == "BOOKMARK":
                self._deliver(WatchEvent("BOOKMARK", kind, obj, None))
            else:
                continue
            if rv:
                self.resource_version = rv
        return None
