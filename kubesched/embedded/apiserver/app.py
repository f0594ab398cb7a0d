"""The aiohttp application serving a ``MemoryCluster`` as a Kubernetes API (plain HTTP, no auth).

Routes:

* discovery: ``/version``, ``/api``, ``/api/v1``, ``/apis``, ``/apis/<group>``,
  ``/apis/<group>/<version>``; ``/openapi/v2`` (JSON) and ``/openapi/v3`` with one document per
  group version (see :mod:`kubesched.embedded.apiserver.openapi`); ``/healthz``, ``/livez``, ``/readyz``
  answer ``ok``.
* reviews: ``POST /apis/authentication.k8s.io/v1/tokenreviews`` and
  ``POST /apis/authorization.k8s.io/v1/subjectaccessreviews`` (see :mod:`kubesched.embedded.apiserver.reviews`).
* resources: ``/api/v1/...`` and ``/apis/<group>/<version>/...`` (see
  :mod:`kubesched.embedded.apiserver.target`, :mod:`kubesched.embedded.apiserver.handlers`,
  :mod:`kubesched.embedded.apiserver.watch`). Every error is a ``Status`` body. GETs whose Accept header
  asks for ``as=Table;g=meta.k8s.io`` (``kubectl get``) get a server-side ``Table``
  (:mod:`kubesched.embedded.apiserver.tables`). Request bodies are JSON, YAML or Kubernetes protobuf
  (kubectl's typed ``create namespace|deployment|job|...``; see :mod:`kubesched.embedded.apiserver.protobuf`);
  CBOR bodies get ``415 UnsupportedMediaType``.
* every request first passes :mod:`kubesched.embedded.apiserver.guard` (Host/Origin checks against web
  pages, body media types, body size).
* test hooks (not part of the Kubernetes API, served only with ``enable_test_hooks``,
  ``kubesched serve --enable-test-hooks``; see :mod:`kubesched.embedded.apiserver.testhooks`):
  ``/kubesched/faults`` (GET, POST, DELETE), ``POST /kubesched/drop-watches`` (closes every open
  watch stream; answers ``{"dropped": N}``), ``POST /kubesched/compact`` (forgets watch history
  and list snapshots, so resumed watches and continue tokens get 410; answers
  ``{"resourceVersion": R}``), ``/kubesched/requests`` (GET, DELETE).

Store calls run on the event loop thread; they only take the store's lock briefly, and watch
handlers never do network I/O under it (see :mod:`kubesched.embedded.apiserver.watch`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import yaml
from aiohttp import web

from kubesched.api.kube_version import version_info
from kubesched.api.yaml_limits import MAX_DEPTH, load_json, safe_load
from kubesched.client.json_codec import dumps, loads
from kubesched.clock import Clock
from kubesched.embedded.apiserver import openapi, paths
from kubesched.embedded.apiserver.guard import RequestGuard
from kubesched.embedded.apiserver.handlers import ResourceHandlers, view_for
from kubesched.embedded.apiserver.paging import Pager
from kubesched.embedded.apiserver.protobuf import decode_object
from kubesched.embedded.apiserver.reviews import Reviews
from kubesched.embedded.apiserver.status import ApiError, failure
from kubesched.embedded.apiserver.tables import table_version, to_table
from kubesched.embedded.apiserver.target import Target, parse_target
from kubesched.embedded.apiserver.testhooks import FaultRule, Faults, RequestLog
from kubesched.embedded.apiserver.watch import WatchHub, WatchLimits, WatchParams, index_key, serve_watch
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import AlreadyExistsError, ConflictError, GoneError, NotFoundError

__all__ = ["ServerState", "VERSION_INFO", "build_app"]

_log = logging.getLogger(__name__)

Obj = dict[str, Any]

#: ``GET /version``: the Kubernetes version whose semantics kubesched follows.
VERSION_INFO: Obj = version_info()

_STATE_KEY: web.AppKey[ServerState] = web.AppKey("kubesched_state")


@dataclass
class ServerState:
    """Everything the request handlers share. ``bookmark_interval`` is seconds between watch
    BOOKMARKs; ``watch_timeout`` the default watch length in seconds without ``timeoutSeconds``
    (None: until the client leaves). ``enable_test_hooks`` serves the ``/kubesched/`` test hooks
    (fault injection, dropped watches, compaction, request counts); ``guard`` checks every request
    (see :mod:`kubesched.embedded.apiserver.guard`); ``watch_limits`` bound each watch's buffer and writes
    (see :mod:`kubesched.embedded.apiserver.watch`)."""

    cluster: MemoryCluster
    clock: Clock
    bookmark_interval: float = 10.0
    watch_timeout: float | None = 1800.0
    server_address: str = "127.0.0.1:6443"
    enable_test_hooks: bool = False
    guard: RequestGuard = field(default_factory=RequestGuard)
    watch_limits: WatchLimits = field(default_factory=WatchLimits)
    hub: WatchHub = field(default_factory=WatchHub)
    faults: Faults = field(default_factory=Faults)
    requests: RequestLog = field(default_factory=RequestLog)
    reviews: Reviews = field(default_factory=Reviews)
    #: replaces the times clients write (None: kept; see :mod:`kubesched.embedded.apiserver.client_times`)
    client_time_clock: Callable[[], float] | None = None
    pager: Pager = field(init=False)
    handlers: ResourceHandlers = field(init=False)

    def __post_init__(self) -> None:
        self.pager = Pager(self.clock.now)
        self.handlers = ResourceHandlers(self.cluster, self.pager, self.client_time_clock)


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=dumps(body), status=status, content_type="application/json", headers=headers)


def _state(request: web.Request) -> ServerState:
    return request.app[_STATE_KEY]


def _is_watch(request: web.Request) -> bool:
    return request.query.get("watch", "").lower() in ("1", "true")


@web.middleware
async def _hooks_and_errors(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    state = _state(request)
    path = request.path
    if state.enable_test_hooks and not path.startswith("/kubesched/"):
        state.requests.record(int(state.clock.now()), request.method, path, _is_watch(request))
        rule = state.faults.take(request.method, path)
        if rule is not None:
            headers = {"Retry-After": str(rule.retry_after)} if rule.status == 429 else None
            details = {"retryAfterSeconds": rule.retry_after} if rule.status == 429 else None
            return _json(
                failure(rule.status, f"injected fault (HTTP {rule.status})", None, details),
                rule.status,
                headers,
            )
    try:
        return await handler(request)
    except ApiError as e:
        return _json(e.status, e.code, e.headers)
    except web.HTTPException:
        raise
    except Exception:
        _log.exception("internal error serving %s %s", request.method, request.path_qs)
        return _json(failure(500, f"internal error serving {request.method} {path}"), 500)


# ----------------------------------------------------------------------------- discovery


async def _version(request: web.Request) -> web.Response:
    return _json(VERSION_INFO)


async def _api(request: web.Request) -> web.Response:
    return _json(paths.api_versions(_state(request).server_address))


async def _apis(request: web.Request) -> web.Response:
    return _json(paths.api_group_list())


async def _api_group(request: web.Request) -> web.Response:
    doc = paths.api_group(request.match_info["group"])
    if doc is None:
        raise ApiError(404, "the server could not find the requested resource")
    return _json(doc)


async def _not_found(request: web.Request) -> web.Response:
    raise ApiError(404, "the server could not find the requested resource")


def _raw_json(data: bytes) -> web.Response:
    return web.Response(body=data, content_type="application/json")


async def _openapi_v2(request: web.Request) -> web.Response:
    accept = request.headers.get("Accept", "")
    if "protobuf" in accept and "json" not in accept:
        raise ApiError(406, "only application/json is served for /openapi/v2", "NotAcceptable")
    return _raw_json(openapi.v2_document())


async def _openapi_v3(request: web.Request) -> web.Response:
    tail = request.match_info.get("tail", "").strip("/")
    if not tail:
        return _raw_json(openapi.v3_root())
    parts = tail.split("/")
    doc = None
    if len(parts) == 2 and parts[0] == "api":
        doc = openapi.v3_document("", parts[1])
    elif len(parts) == 3 and parts[0] == "apis":
        doc = openapi.v3_document(parts[1], parts[2])
    if doc is None:
        raise ApiError(404, "the server could not find the requested resource")
    return _raw_json(doc)


async def _ok(request: web.Request) -> web.Response:
    return web.Response(text="ok")


# ----------------------------------------------------------------------------- resources


async def _core(request: web.Request) -> web.StreamResponse:
    return await _resource(request, "", request.match_info["version"], request.match_info["tail"])


async def _grouped(request: web.Request) -> web.StreamResponse:
    return await _resource(
        request, request.match_info["group"], request.match_info["version"], request.match_info["tail"]
    )


#: Content type of Kubernetes protobuf bodies (client-go's typed clients, kubectl's ``create <kind>``).
PROTOBUF = "application/vnd.kubernetes.protobuf"

#: Answer to a request body kubesched serve cannot decode (CBOR, ...).
UNSUPPORTED_BODY = (
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json, application/yaml, application/vnd.kubernetes.protobuf"
)


def _load_json_body(raw: bytes) -> Any:
    """A JSON request body (a binding, an Event, a status patch) as ``load_json`` decodes it, through
    orjson (:func:`kubesched.client.json_codec.loads`: the same value, the standard library's error
    for what is no JSON) when it opens fewer than ``MAX_DEPTH`` arrays and objects, so it cannot
    nest deeper than the limit; deeper bodies take ``load_json``'s bounded path. Raises ValueError."""
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH:
        return load_json(raw)
    return loads(raw)


async def _read_body(request: web.Request) -> Any:
    raw = await request.read()
    if not raw:
        return None
    ctype = request.content_type or ""
    if "cbor" in ctype or ("protobuf" in ctype and ctype != PROTOBUF):
        raise ApiError(415, UNSUPPORTED_BODY.format(ctype=ctype), "UnsupportedMediaType")
    try:
        if ctype == PROTOBUF:
            return decode_object(raw)
        if "yaml" in ctype:
            return safe_load(raw)
        return _load_json_body(raw)
    except (ValueError, yaml.YAMLError) as e:
        raise ApiError(400, f"the body of the request could not be decoded: {e}") from None


async def _resource(request: web.Request, group: str, version: str, tail: str) -> web.StreamResponse:
    state = _state(request)
    if tail == "":
        doc = paths.api_resource_list(group, version)
        if doc is None:
            raise ApiError(404, "the server could not find the requested resource")
        return _json(doc)
    target = parse_target(group, version, tail, request.path)
    method = request.method
    query = request.query
    h = state.handlers
    warnings: list[str] = []
    try:
        if target.resource is None:  # namespaces/<ns>/bindings
            if method != "POST":
                raise ApiError(405, f"{method} is not supported on bindings", "MethodNotAllowed")
            code, body = h.bind(target, await _read_body(request))
            return _json(body, code)
        if target.name is None:
            if method == "GET":
                if _is_watch(request) or target.legacy_watch:
                    return await _watch(request, state, target)
                if "continue" not in query:
                    await wait_until_fresh(state, query.get("resourceVersion"))
                code, body = h.list(target, query)
                body = _as_table(request, state, target, body, body["items"])
            elif method == "POST" and (target.namespace is not None or not target.resource.namespaced):
                code, body = h.create(target, await _read_body(request), query, warnings)
            elif method == "DELETE":
                code, body = h.delete_collection(target, query)
            else:
                raise ApiError(
                    405, "the server does not allow this method on the requested resource", "MethodNotAllowed"
                )
        elif target.subresource == "binding":
            if method != "POST":
                raise ApiError(
                    405, "the server does not allow this method on the requested resource", "MethodNotAllowed"
                )
            code, body = h.bind(target, await _read_body(request))
        elif method == "GET":
            if _is_watch(request) or target.legacy_watch:
                return await _watch(request, state, target)
            code, body = h.get(target)
            body = _as_table(request, state, target, body, [body])
        elif method == "PUT":
            code, body = h.update(target, await _read_body(request), query, warnings)
        elif method == "PATCH":
            code, body = h.patch(target, await _read_body(request), request.content_type, query, warnings)
        elif method == "DELETE" and target.subresource is None:
            code, body = h.delete(target, await _read_body(request), query)
        else:
            raise ApiError(
                405, "the server does not allow this method on the requested resource", "MethodNotAllowed"
            )
    except NotFoundError as e:
        raise ApiError(404, str(e), "NotFound", _details(target)) from None
    except AlreadyExistsError as e:
        raise ApiError(409, str(e), "AlreadyExists", _details(target)) from None
    except ConflictError as e:
        raise ApiError(409, str(e), "Conflict", _details(target)) from None
    except GoneError as e:
        raise ApiError(410, str(e), "Expired") from None
    except ValueError as e:
        raise ApiError(422, str(e), "Invalid", _details(target)) from None
    response = _json(body, code)
    for text in warnings:  # RFC 7234 warn-code 299, as staging/src/k8s.io/apiserver/pkg/warning
        escaped = text.replace("\\", "\\\\").replace('"', '\\"')
        response.headers.add("Warning", f'299 - "{escaped}"')
    return response


def _as_table(request: web.Request, state: ServerState, target: Target, body: Obj, items: list[Obj]) -> Obj:
    """``body`` (a list or one object), or its server-side ``Table`` when the Accept header asks
    for one (``kubectl get``); see :mod:`kubesched.embedded.apiserver.tables`."""
    version = table_version(request.headers.get("Accept", ""))
    if version is None or target.resource is None:
        return body
    meta = body.get("metadata") or {}
    list_meta = {k: meta[k] for k in ("resourceVersion", "continue", "remainingItemCount") if k in meta}
    try:
        return to_table(
            target.resource.kind,
            items,
            list_meta,
            state.clock.now(),
            version=version,
            include_object=request.query.get("includeObject") or "Metadata",
        )
    except ValueError as e:
        raise ApiError(400, str(e), "BadRequest") from None


def _details(target: Target) -> Obj:
    res = target.resource
    out: Obj = {"kind": target.resource_name if target.subresource != "binding" else "pods"}
    if target.name:
        out["name"] = target.name
    if res is not None and res.group:
        out["group"] = res.group
    return out


#: Seconds a read at a resourceVersion the store has not reached yet waits for it before it is
#: answered ``504 Too large resource version`` (``staging/src/k8s.io/apiserver/pkg/storage/cacher/
#: watch_cache.go``: ``blockTimeout`` of ``waitUntilFreshAndBlock``).
FRESHNESS_TIMEOUT = 3.0


async def wait_until_fresh(state: ServerState, rv: str | None, timeout: float = FRESHNESS_TIMEOUT) -> None:
    """Wait (on the loop, polling every 20 ms) until the store's resourceVersion reaches ``rv``,
    at most ``timeout`` seconds; returns at once for ``None``, ``""``, ``"0"`` or a version the
    store has reached. The caller then answers as it would have (the too-large error when the
    version is still ahead)."""
    if not rv or rv == "0" or not rv.isdigit():
        return
    want = int(rv)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while int(state.cluster.resource_version) < want and loop.time() < deadline:
        await asyncio.sleep(0.02)


async def _watch(request: web.Request, state: ServerState, target: Target) -> web.StreamResponse:
    res = target.resource
    assert res is not None
    query = request.query
    selected = state.handlers.matcher(target, query)
    matches = selected
    if target.name is not None:  # GET .../pods/<name>?watch=1: metadata.name=<name>
        wanted = target.name

        def matches(o: Obj) -> bool:
            return (o.get("metadata") or {}).get("name") == wanted and selected(o)

    timeout_raw = query.get("timeoutSeconds")
    timeout = state.watch_timeout
    if timeout_raw:
        try:
            seconds = int(timeout_raw)
        except ValueError:
            raise ApiError(400, f"timeoutSeconds: Invalid value: {timeout_raw!r}") from None
        # as kube-apiserver's ListResource: 0 is the server's default, a negative value a watch
        # whose deadline has passed (it ends at once, 200 with no event)
        if seconds != 0:
            timeout = float(max(seconds, 0))
    rv = query.get("resourceVersion") or None
    if rv is not None and rv != "0" and not rv.isdigit():
        raise ApiError(400, f'resourceVersion: Invalid value: "{rv}": must be an integer')
    if timeout != 0:
        await wait_until_fresh(state, rv)
    params = WatchParams(
        store_kind=res.kind_in_store,
        kind=res.kind,
        api_version=res.group_version,
        resource_version=rv,
        view=view_for(res),
        matches=matches,
        timeout=timeout,
        bookmarks=query.get("allowWatchBookmarks", "").lower() in ("1", "true"),
        bookmark_interval=state.bookmark_interval,
        send_initial_events=query.get("sendInitialEvents", "").lower() in ("1", "true"),
        index=index_key(
            res.kind_in_store, target.namespace if res.namespaced else None, query.get("fieldSelector")
        ),
        limits=state.watch_limits,
    )
    return await serve_watch(request, state.cluster, state.hub, params)


# ----------------------------------------------------------------------------- reviews


async def _token_review(request: web.Request) -> web.Response:
    try:
        return _json(_state(request).reviews.token_review(await _read_body(request)), 201)
    except ValueError as e:
        raise ApiError(422, f"TokenReview is invalid: {e}", "Invalid") from None


async def _subject_access_review(request: web.Request) -> web.Response:
    try:
        return _json(_state(request).reviews.subject_access_review(await _read_body(request)), 201)
    except ValueError as e:
        raise ApiError(422, f"SubjectAccessReview is invalid: {e}", "Invalid") from None


# ----------------------------------------------------------------------------- test hooks


async def _faults_get(request: web.Request) -> web.Response:
    return _json({"faults": [r.to_json() for r in _state(request).faults.rules()]})


async def _faults_post(request: web.Request) -> web.Response:
    try:
        rule = FaultRule.from_json(await request.json())
    except ValueError as e:
        raise ApiError(400, str(e)) from None
    _state(request).faults.add(rule)
    return _json(rule.to_json(), 201)


async def _faults_delete(request: web.Request) -> web.Response:
    _state(request).faults.clear()
    return _json({"faults": []})


async def _drop_watches(request: web.Request) -> web.Response:
    return _json({"dropped": _state(request).hub.drop_all()})


async def _compact(request: web.Request) -> web.Response:
    state = _state(request)
    rv = state.cluster.compact()
    state.pager.compact()
    return _json({"resourceVersion": rv})


async def _requests_get(request: web.Request) -> web.Response:
    return _json(_state(request).requests.to_json())


async def _requests_delete(request: web.Request) -> web.Response:
    _state(request).requests.clear()
    return _json({"requests": []})


def build_app(state: ServerState) -> web.Application:
    """The aiohttp application for ``state`` (see the module docstring for the routes)."""
    app = web.Application(
        middlewares=[state.guard.middleware(), _hooks_and_errors], client_max_size=state.guard.max_body_bytes
    )
    app[_STATE_KEY] = state
    r = app.router
    r.add_get("/version", _version)
    r.add_get("/healthz", _ok)
    r.add_get("/livez", _ok)
    r.add_get("/readyz", _ok)
    r.add_get("/api", _api)
    r.add_get("/apis", _apis)
    r.add_get("/openapi/v2", _openapi_v2)
    r.add_get("/openapi/v3", _openapi_v3)
    r.add_get("/openapi/v3/{tail:.*}", _openapi_v3)
    r.add_get("/openapi/{tail:.*}", _not_found)
    r.add_route("*", "/api/{version}", _core_root)
    r.add_route("*", "/api/{version}/{tail:.*}", _core)
    r.add_get("/apis/{group}", _api_group)
    r.add_route("*", "/apis/{group}/{version}", _grouped_root)
    r.add_post("/apis/authentication.k8s.io/v1/tokenreviews", _token_review)
    r.add_post("/apis/authorization.k8s.io/v1/subjectaccessreviews", _subject_access_review)
    r.add_route("*", "/apis/{group}/{version}/{tail:.*}", _grouped)
    if state.enable_test_hooks:
        _add_test_hooks(r)
    return app


def _add_test_hooks(r: web.UrlDispatcher) -> None:
    r.add_get("/kubesched/faults", _faults_get)
    r.add_post("/kubesched/faults", _faults_post)
    r.add_delete("/kubesched/faults", _faults_delete)
    r.add_post("/kubesched/drop-watches", _drop_watches)
    r.add_post("/kubesched/compact", _compact)
    r.add_get("/kubesched/requests", _requests_get)
    r.add_delete("/kubesched/requests", _requests_delete)


async def _core_root(request: web.Request) -> web.StreamResponse:
    return await _resource(request, "", request.match_info["version"], "")


async def _grouped_root(request: web.Request) -> web.StreamResponse:
    return await _resource(request, request.match_info["group"], request.match_info["version"], "")
