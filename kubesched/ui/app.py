"""The aiohttp application of ``kubesched ui``: the page (``/``, ``/static/...``) and the JSON API
under ``/api/v1`` (documented in ``docs/ui.md``).

Every API answer is JSON; errors are ``{"error": message}`` with 400 (bad parameter), 404 (no such
run, pod or attempt), 409 (the pod cannot be explained in that state), 415 (non-JSON body) or 422
(invalid config or objects: the message is exactly what ``kubesched simulate`` prints after
``error:``). Scheduling work runs in a worker thread, so the server keeps answering while a
what-if runs. The page's assets ship in the package (``kubesched/ui/static``); plotly.js comes from
the installed ``plotly`` package.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from kubesched import __version__
from kubesched.api.node import Node
from kubesched.api.pod import Pod
from kubesched.errors import KubeschedError
from kubesched.ui.cluster_view import filter_pods, node_rows, page, pod_parser, pod_rows
from kubesched.ui.explain import ExplainError, Explanation
from kubesched.ui.reports import report_view
from kubesched.ui.security import security_middleware
from kubesched.ui.session import (
    STARTER_CONFIG,
    LiveSession,
    Run,
    Session,
    diff_runs,
    effective_yaml,
    score_weights,
    set_score_weights,
)

__all__ = ["make_app", "STATIC_DIR", "plotly_js_path"]

STATIC_DIR = Path(__file__).with_name("static")
_CLOSING = web.AppKey("closing", asyncio.Event)
_JSON_LIMIT = 32 * 1024 * 1024
#: seconds between two change notifications in live mode
LIVE_MIN_INTERVAL = 1.0


#: report views kept for their URLs (the oldest is dropped first)
REPORTS_KEPT = 20


class _Reports:
    """Report views opened in this server, by a short id (``1``, ``2``, ...), the last
    :data:`REPORTS_KEPT` of them."""

    def __init__(self) -> None:
        self._views: dict[str, dict[str, Any]] = {}
        self._next = 1

    def add(self, view: dict[str, Any]) -> str:
        key = str(self._next)
        self._next += 1
        self._views[key] = view
        while len(self._views) > REPORTS_KEPT:
            del self._views[next(iter(self._views))]
        return key

    def get(self, key: str) -> dict[str, Any] | None:
        return self._views.get(key)


def plotly_js_path() -> Path:
    """The ``plotly.min.js`` bundled in the ``plotly`` Python package."""
    return Path(str(resources.files("plotly") / "package_data" / "plotly.min.js"))


class _Api:
    """Handlers over a :class:`Session` (snapshot) or a :class:`LiveSession`."""

    def __init__(self, session: Session | None, live: LiveSession | None) -> None:
        assert (session is None) != (live is None)
        self.session = session
        self.live = live
        self._rows: dict[tuple[str, int], tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
        self.reports = _Reports()

    # ---- helpers -----------------------------------------------------------------------------

    def _runs(self) -> Session | None:
        return (
            self.session
            if self.session is not None
            else (self.live.whatif if self.live is not None else None)
        )

    def _run(self, request: web.Request, *, required: bool = False) -> Run | None:
        """The run named by ``?run=`` (snapshot mode: default the latest); None = the live cluster."""
        raw = request.query.get("run") or request.match_info.get("run")
        runs = self._runs()
        if raw is None and self.live is not None and not required:
            return None
        if runs is None:
            raise web.HTTPNotFound(
                text=json.dumps({"error": "no what-if run yet"}), content_type="application/json"
            )
        try:
            return runs.get(int(raw) if raw is not None else None)
        except ValueError:
            raise _bad(f"run must be an integer, got {raw!r}") from None
        except KeyError as e:
            raise _not_found(str(e.args[0])) from None

    def _tables(self, run: Run | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(node rows, pod rows) of a run or of the live cluster, cached per run / live generation."""
        key = ("run", run.id) if run is not None else ("live", self.live.generation if self.live else 0)
        hit = self._rows.get(key)
        if hit is not None:
            return hit
        known_pods: list[Pod] = []
        known_nodes: list[Node] = []
        if run is not None:
            nodes, pods, statuses = run.objects("Node"), run.objects("Pod"), run.statuses()
            known_pods, known_nodes = run.parsed_pods(), run.parsed_nodes()
        else:
            assert self.live is not None
            nodes, pods, statuses = self.live.objects("Node"), self.live.objects("Pod"), self.live.statuses()
        parse = pod_parser(known_pods)
        value = (node_rows(nodes, pods, parse, known_nodes), pod_rows(pods, statuses, parse))
        if key[0] == "live":
            self._rows = {k: v for k, v in self._rows.items() if k[0] != "live"}
        self._rows[key] = value
        return value

    # ---- handlers ----------------------------------------------------------------------------

    async def info(self, request: web.Request) -> web.Response:
        runs = self._runs()
        return web.json_response(
            {
                "version": __version__,
                "mode": "live" if self.live is not None else "snapshot",
                "sources": self.session.sources if self.session is not None else ["live cluster"],
                "generation": self._generation(),
                "runs": [r.summary() | {"config": None, "added": None} for r in runs.runs] if runs else [],
            }
        )

    def _generation(self) -> int:
        g = self.live.generation if self.live is not None else 0
        runs = self._runs()
        return g + (runs.generation if runs is not None else 0)

    async def nodes(self, request: web.Request) -> web.Response:
        run = self._run(request)
        node_list, _ = await asyncio.to_thread(self._tables, run)
        q, zone = request.query.get("q"), request.query.get("zone")
        rows = [r for r in node_list if (not q or q in r["name"]) and (not zone or r["zone"] == zone)]
        sort = request.query.get("sort", "name")
        if sort.startswith("alloc:"):
            res = sort[6:]

            def frac(r: dict[str, Any]) -> float:
                if res == "pods":
                    a, u = r["pods"]["allocatable"], r["pods"]["count"]
                else:
                    cell = r["resources"].get(res) or {}
                    a, u = cell.get("allocatable", 0), cell.get("requested", 0)
                return -(u / a) if a else 1.0

            rows = sorted(rows, key=lambda r: (frac(r), r["name"]))
        elif sort != "name":
            raise _bad(f"unknown sort {sort!r} (name or alloc:<resource>)")
        resources_seen: list[str] = []
        for r in node_list:
            for res in r["resources"]:
                if res not in resources_seen:
                    resources_seen.append(res)
        out = _page(rows, request)
        out["resources"] = resources_seen
        out["zones"] = sorted({r["zone"] for r in node_list})
        out["run"] = run.id if run is not None else None
        return web.json_response(out)

    async def pods(self, request: web.Request) -> web.Response:
        run = self._run(request)
        _, pod_list = await asyncio.to_thread(self._tables, run)
        qy = request.query
        try:
            rows = filter_pods(
                pod_list,
                namespace=qy.get("namespace"),
                node=qy.get("node"),
                status=qy.get("status"),
                selector=qy.get("selector"),
                q=qy.get("q"),
            )
        except ValueError as e:
            raise _bad(f"selector: {e}") from None
        counts: dict[str, int] = {}
        for r in pod_list:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        out = _page(rows, request)
        out.update(
            {
                "counts": counts,
                "namespaces": sorted({r["namespace"] for r in pod_list}),
                "run": run.id if run is not None else None,
            }
        )
        return web.json_response(out)

    def _pod_key(self, request: web.Request) -> str:
        return f"{request.match_info['namespace']}/{request.match_info['name']}"

    async def pod(self, request: web.Request) -> web.Response:
        run = self._run(request)
        key = self._pod_key(request)
        _, pod_list = await asyncio.to_thread(self._tables, run)
        row = next((r for r in pod_list if r["key"] == key), None)
        if row is None:
            raise _not_found(f"pod {key} not found")
        attempts = run.attempts(key) if run is not None else self.live.attempts(key)  # type: ignore[union-attr]
        return web.json_response({**row, "history": attempts, "run": run.id if run is not None else None})

    async def _explanation(self, request: web.Request) -> Explanation:
        run = self._run(request)
        key = self._pod_key(request)
        raw = request.query.get("attempt")
        try:
            attempt = int(raw) if raw else None
        except ValueError:
            raise _bad(f"attempt must be an integer, got {raw!r}") from None
        try:
            if run is not None:
                return await asyncio.to_thread(run.explain, key, attempt)
            assert self.live is not None
            return await asyncio.to_thread(self.live.explain_now, key)
        except KeyError as e:
            raise _not_found(str(e.args[0])) from None
        except ExplainError as e:
            raise _json_error(web.HTTPConflict, str(e)) from None

    async def explain(self, request: web.Request) -> web.Response:
        ex = await self._explanation(request)
        return web.json_response(ex.to_dict())

    async def explain_nodes(self, request: web.Request) -> web.Response:
        ex = await self._explanation(request)
        q = request.query
        feasible = {"true": True, "false": False, None: None, "": None}.get(q.get("feasible"))
        try:
            out = ex.page(
                sort=q.get("sort", "default"),
                desc=q.get("desc") in ("1", "true"),
                offset=_int(q, "offset", 0),
                limit=_int(q, "limit", 100),
                reason=q.get("reason"),
                node=q.get("node"),
                feasible=feasible,
            )
        except ValueError as e:
            raise _bad(str(e)) from None
        return web.json_response(out)

    async def config(self, request: web.Request) -> web.Response:
        runs = self._runs()
        if runs is None and self.live is not None:
            text, source = self.live.config_text, self.live.config_source
            editor = text or None
        else:
            assert runs is not None
            source, editor = runs.config_source, runs.editor_config()
        effective = weights = None
        if runs is not None and runs.runs:
            effective = effective_yaml(runs.effective_config())
            weights = score_weights(runs.runs[-1])
        return web.json_response(
            {
                "editor": editor or STARTER_CONFIG,
                "source": source,
                "effective": effective,
                "scoreWeights": weights,
            }
        )

    async def weights(self, request: web.Request) -> web.Response:
        body = await _body(request)
        weights = body.get("weights")
        if not isinstance(weights, dict) or not all(isinstance(v, dict) for v in weights.values()):
            raise _bad('body must be {"config": yaml, "weights": {profile: {plugin: weight}}}')
        try:
            text = set_score_weights(_text(body, "config"), weights)
        except (ValueError, yaml.YAMLError) as e:
            raise _json_error(web.HTTPUnprocessableEntity, str(e).replace("\n", " ")) from None
        return web.json_response({"config": text})

    async def validate(self, request: web.Request) -> web.Response:
        body = await _body(request)
        runs = self._runs() or (self.live.snapshot_session() if self.live is not None else None)
        assert runs is not None
        try:
            await asyncio.to_thread(runs.parse_config, _text(body, "config"))
            await asyncio.to_thread(runs.parse_added, _text(body, "added") or "")
        except KubeschedError as e:
            raise _json_error(web.HTTPUnprocessableEntity, str(e)) from None
        return web.json_response({"valid": True})

    async def create_run(self, request: web.Request) -> web.Response:
        body = await _body(request)
        if self.live is not None:
            fresh = bool(body.get("freshSnapshot"))
            runs = self.live.snapshot_session(fresh=fresh)
            if fresh:  # run ids start again: forget the rows of the previous series
                self._rows = {k: v for k, v in self._rows.items() if k[0] != "run"}
            if not runs.runs:  # the baseline: the cluster as it is, with the UI's --config
                await asyncio.to_thread(runs.run, runs.config_text, "")
        else:
            assert self.session is not None
            runs = self.session
        previous = runs.runs[-1] if runs.runs else None
        try:
            run = await asyncio.to_thread(
                runs.run, _text(body, "config"), _text(body, "added") or "", keep_config="config" not in body
            )
        except KubeschedError as e:
            raise _json_error(web.HTTPUnprocessableEntity, str(e)) from None
        await asyncio.to_thread(self._tables, run)  # the page asks for them next
        out = run.summary()
        out["diff"] = diff_runs(previous, run) if previous is not None else None
        return web.json_response(out, status=201)

    async def list_runs(self, request: web.Request) -> web.Response:
        runs = self._runs()
        return web.json_response({"runs": [r.summary() for r in runs.runs] if runs else []})

    async def get_run(self, request: web.Request) -> web.Response:
        run = self._run(request, required=True)
        assert run is not None
        return web.json_response(run.summary())

    async def run_diff(self, request: web.Request) -> web.Response:
        run = self._run(request, required=True)
        assert run is not None
        runs = self._runs()
        assert runs is not None
        raw = request.query.get("against")
        try:
            other = runs.get(int(raw)) if raw else (runs.get(run.id - 1) if run.id > 1 else None)
        except (ValueError, KeyError) as e:
            raise _not_found(f"against: {e}") from None
        if other is None:
            raise _not_found(f"run {run.id} is the first run: nothing to compare with")
        return web.json_response(diff_runs(other, run))

    async def report(self, request: web.Request) -> web.Response:
        body = await _body(request)
        reports = body.get("reports")
        if not isinstance(reports, list) or not reports:
            raise _bad('body must be {"reports": [{"name": ..., "report": <report.json>}, ...]}')
        try:
            view = await asyncio.to_thread(report_view, reports)
        except ValueError as e:
            raise _json_error(web.HTTPUnprocessableEntity, str(e)) from None
        view["id"] = self.reports.add(view)  # the page's URL names it: reloadable while the server runs
        return web.json_response(view)

    async def stored_report(self, request: web.Request) -> web.Response:
        """A report view opened earlier (``GET /reports/{id}``), so that its URL can be reloaded."""
        view = self.reports.get(request.match_info["id"])
        if view is None:
            raise _not_found(
                f"report {request.match_info['id']} not found (reports are kept while the server "
                f"runs, the last {REPORTS_KEPT})"
            )
        return web.json_response(view)

    async def watch(self, request: web.Request) -> web.StreamResponse:
        """Server-sent events: ``data: {"generation": N}`` whenever the views change (a run ended,
        or in live mode a watch event arrived: at most every :data:`LIVE_MIN_INTERVAL` seconds, so a
        busy cluster does not keep the page recomputing), checked twice a second; a comment every 15 s."""
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store"})
        await resp.prepare(request)
        closing: asyncio.Event = request.app[_CLOSING]
        last = -1
        idle = 0.0
        since = LIVE_MIN_INTERVAL
        try:
            while not closing.is_set():
                g = self._generation()
                if g != last and (self.live is None or since >= LIVE_MIN_INTERVAL):
                    await resp.write(f"data: {json.dumps({'generation': g})}\n\n".encode())
                    last, idle, since = g, 0.0, 0.0
                elif idle >= 15:
                    await resp.write(b": keep-alive\n\n")
                    idle = 0.0
                try:
                    await asyncio.wait_for(closing.wait(), 0.5)
                except TimeoutError:
                    pass
                idle += 0.5
                since += 0.5
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        return resp


def _json_error(cls: Callable[..., web.HTTPException], message: str) -> web.HTTPException:
    return cls(text=json.dumps({"error": message}), content_type="application/json")


def _bad(message: str) -> web.HTTPException:
    return _json_error(web.HTTPBadRequest, message)


def _not_found(message: str) -> web.HTTPException:
    return _json_error(web.HTTPNotFound, message)


def _int(q: Any, name: str, default: int) -> int:
    raw = q.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise _bad(f"{name} must be an integer, got {raw!r}") from None


def _page(rows: list[dict[str, Any]], request: web.Request) -> dict[str, Any]:
    try:
        return page(rows, _int(request.query, "offset", 0), _int(request.query, "limit", 100))
    except ValueError as e:
        raise _bad(str(e)) from None


async def _body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError) as e:
        raise _bad(f"invalid JSON body: {e}") from None
    if not isinstance(body, dict):
        raise _bad("JSON body must be an object")
    return body


def _text(body: dict[str, Any], key: str) -> str | None:
    v = body.get(key)
    if v is not None and not isinstance(v, str):
        raise _bad(f"{key} must be a string (YAML text)")
    return v


async def _index(request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC_DIR / "index.html")


async def _plotly(request: web.Request) -> web.StreamResponse:
    try:
        path = plotly_js_path()
    except ModuleNotFoundError:
        return web.Response(status=404, text="plotly is not installed: pip install 'kubesched[report]'\n")
    return web.FileResponse(path, headers={"Content-Type": "application/javascript"})


def make_app(
    *,
    session: Session | None = None,
    live: LiveSession | None = None,
    address: str = "127.0.0.1",
    port_of: Callable[[], int] = lambda: 8080,
    token: str | None = None,
    scheme: str = "http",
) -> web.Application:
    """The application for a snapshot ``session`` or a ``live`` cluster (exactly one), served over
    ``scheme``."""
    api = _Api(session, live)
    if session is not None and session.runs:
        api._tables(session.runs[-1])  # the first page load needs them
    app = web.Application(
        middlewares=[security_middleware(address, port_of, token, scheme)], client_max_size=_JSON_LIMIT
    )
    app[_CLOSING] = asyncio.Event()

    async def on_shutdown(a: web.Application) -> None:
        a[_CLOSING].set()  # ends the server-sent event streams

    app.on_shutdown.append(on_shutdown)
    r = app.router
    r.add_get("/", _index)
    r.add_get("/static/plotly.min.js", _plotly)
    r.add_static("/static/", STATIC_DIR, follow_symlinks=False)
    p = "/api/v1"
    r.add_get(f"{p}/info", api.info)
    r.add_get(f"{p}/nodes", api.nodes)
    r.add_get(f"{p}/pods", api.pods)
    r.add_get(f"{p}/pods/{{namespace}}/{{name}}", api.pod)
    r.add_get(f"{p}/pods/{{namespace}}/{{name}}/explain", api.explain)
    r.add_get(f"{p}/pods/{{namespace}}/{{name}}/explain/nodes", api.explain_nodes)
    r.add_get(f"{p}/config", api.config)
    r.add_post(f"{p}/config/validate", api.validate)
    r.add_post(f"{p}/config/weights", api.weights)
    r.add_get(f"{p}/runs", api.list_runs)
    r.add_post(f"{p}/runs", api.create_run)
    r.add_get(f"{p}/runs/{{run}}", api.get_run)
    r.add_get(f"{p}/runs/{{run}}/diff", api.run_diff)
    r.add_post(f"{p}/reports", api.report)
    r.add_get(f"{p}/reports/{{id}}", api.stored_report)
    r.add_get(f"{p}/watch", api.watch)
    return app
