"""Resource verbs over the embedded store: get, list, create, update, patch, delete,
deletecollection, ``status`` and ``binding`` subresources.

Each function takes a parsed :class:`~kubesched.embedded.apiserver.target.Target`, the query and body, and
returns ``(http code, JSON body)`` or raises :class:`~kubesched.embedded.apiserver.status.ApiError` /
kubesched's store errors (mapped to ``Status`` bodies by the app). Semantics follow
``staging/src/k8s.io/apiserver/pkg/endpoints/handlers`` and ``pkg/registry/generic/registry/store.go``:
create answers 201 with the stored object, update/patch 200, delete 200 (202 while a graceful pod
deletion is pending) with the object, ``pods/binding`` 201 with a ``Status`` of ``Success``.
A PATCH is applied to the current object and written with its resourceVersion as precondition,
retried on a concurrent write unless the patch itself names a resourceVersion (as upstream).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api import kinds
from kubesched.api.kinds import Kind
from kubesched.api.shape import check_shape
from kubesched.embedded.apiserver.admission import admit_new_namespace, admit_new_pod
from kubesched.embedded.apiserver.client_times import restamp_conditions, restamp_event
from kubesched.embedded.apiserver.events import to_core, to_events_v1
from kubesched.embedded.apiserver.fields import compile_field_selector
from kubesched.embedded.apiserver.namespace_lifecycle import (
    admit_namespace_deletion,
    admit_namespaced_create,
    new_object_name,
)
from kubesched.embedded.apiserver.paging import Pager
from kubesched.embedded.apiserver.patching import (
    PatchError,
    apply_json_patch,
    apply_merge_patch,
    apply_strategic_merge_patch,
)
from kubesched.embedded.apiserver.scale import replicas_from_scale, to_scale
from kubesched.embedded.apiserver.status import ApiError, invalid, success
from kubesched.embedded.apiserver.target import Target
from kubesched.embedded.apiserver.workload_defaults import default_workload
from kubesched.embedded.selector import compile_selector
from kubesched.embedded.store import MemoryCluster
from kubesched.embedded.unknown_fields import prune_unknown_fields
from kubesched.errors import ConflictError, ManifestError, NotFoundError

__all__ = ["ResourceHandlers", "status_merge_patch", "view_for"]

Obj = dict[str, Any]

_PATCH_RETRIES = 5

#: Values of the ``fieldValidation`` query parameter.
FIELD_VALIDATION_DIRECTIVES = ("Ignore", "Warn", "Strict")

PATCH_TYPES = {
    "application/merge-patch+json": apply_merge_patch,
    "application/strategic-merge-patch+json": apply_strategic_merge_patch,
    "application/json-patch+json": apply_json_patch,
}


def view_for(resource: Kind) -> Callable[[Obj], Obj]:
    """Stored object -> served version (Events differ between ``v1`` and ``events.k8s.io/v1``)."""
    if resource.kind == "Event":
        return to_core if resource.group == "" else to_events_v1
    return _identity


def _identity(obj: Obj) -> Obj:
    return obj


def status_merge_patch(old: Any, new: Any) -> Obj:
    """A status patch (for ``MemoryCluster.patch_status``) turning ``old`` into ``new``: JSON merge
    patch differences, ``conditions`` as full items merged by ``type`` plus ``$patch: delete`` for
    the types that are gone."""
    old = old if isinstance(old, Mapping) else {}
    new = new if isinstance(new, Mapping) else {}
    patch: Obj = {k: None for k in old if k not in new}
    for key, value in new.items():
        before = old.get(key)
        if key == "conditions" and isinstance(value, list) and isinstance(before, list):
            if value == before:
                continue
            old_by_type = {c.get("type"): c for c in before if isinstance(c, Mapping)}
            items: list[Obj] = []
            for cond in value:
                prev = old_by_type.get(cond.get("type"), {})
                items.append({**{k: None for k in prev if k not in cond}, **cond})
            new_types = {c.get("type") for c in value}
            items += [{"type": t, "$patch": "delete"} for t in old_by_type if t not in new_types]
            patch[key] = items
        elif isinstance(value, Mapping) and isinstance(before, Mapping):
            sub = _merge_diff(before, value)
            if sub:
                patch[key] = sub
        elif value != before:
            patch[key] = value
    return patch


def _merge_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> Obj:
    out: Obj = {k: None for k in old if k not in new}
    for key, value in new.items():
        before = old.get(key)
        if isinstance(value, Mapping) and isinstance(before, Mapping):
            sub = _merge_diff(before, value)
            if sub:
                out[key] = sub
        elif value != before or key not in old:
            out[key] = value
    return out


def _first(query: Mapping[str, str], key: str) -> str | None:
    value = query.get(key)
    return value if value not in (None, "") else None


class ResourceHandlers:
    """The verbs, bound to one store and one pager."""

    def __init__(
        self, cluster: MemoryCluster, pager: Pager, client_time_clock: Callable[[], float] | None = None
    ) -> None:
        self.cluster = cluster
        self.pager = pager
        #: when set, the times clients write (Events, status conditions) are replaced by this
        #: clock's now() (a sped-up cluster; see :mod:`kubesched.embedded.apiserver.client_times`)
        self.client_time_clock = client_time_clock

    # ------------------------------------------------------------------ helpers

    def _client_times(self, patch: Obj, current: Obj) -> Obj:
        """The status ``patch`` with changed condition times on the server's clock (when set)."""
        if self.client_time_clock is None:
            return patch
        return restamp_conditions(patch, current.get("status"), self.client_time_clock())

    def _get(self, res: Kind, namespace: str | None, name: str) -> Obj:
        return self.cluster.get(res.kind_in_store, namespace if res.namespaced else None, name)

    def matcher(self, target: Target, query: Mapping[str, str]) -> Callable[[Obj], bool]:
        """Namespace + label + field selector predicate over served objects. Raises ApiError 400."""
        res = target.resource
        assert res is not None
        preds: list[Callable[[Obj], bool]] = []
        if target.namespace is not None:
            ns = target.namespace
            preds.append(lambda o: (o.get("metadata") or {}).get("namespace") == ns)
        label = _first(query, "labelSelector")
        if label:
            try:
                lmatch = compile_selector(label)
            except ValueError as e:
                raise ApiError(400, f"unable to parse requirement: {e}") from None
            preds.append(lambda o: lmatch((o.get("metadata") or {}).get("labels") or {}))
        fsel = _first(query, "fieldSelector")
        if fsel:
            preds.append(compile_field_selector(fsel, res.group, res.plural))
        if not preds:
            return lambda o: True
        return lambda o: all(p(o) for p in preds)

    def _body_object(self, target: Target, body: Any, *, for_update: bool) -> Obj:
        """The request body as the object to write, in the upstream order: decoded (400 for a
        wrong kind, apiVersion, field type or namespace), admitted by ``NamespaceLifecycle`` when
        created (:mod:`kubesched.embedded.apiserver.namespace_lifecycle`: 404 or 403), validated
        (400 for a name other than the URL's, 422 for an invalid object)."""
        res = target.resource
        assert res is not None
        if not isinstance(body, dict):
            raise ApiError(400, "the body of the request must be a JSON object")
        obj = dict(body)
        kind = obj.get("kind") or res.kind
        api_version = obj.get("apiVersion") or res.group_version
        if kind != res.kind or api_version != res.group_version:
            raise ApiError(
                400,
                f"the API version in the data ({api_version}) does not match the expected API version "
                f"({res.group_version})"
                if kind == res.kind
                else f"the kind in the data ({kind}) does not match the expected kind ({res.kind})",
            )
        obj["kind"], obj["apiVersion"] = kind, api_version
        _check_decodable(obj, kind, api_version)
        meta = dict(obj.get("metadata") or {})
        if res.namespaced:
            if target.namespace is not None:
                if meta.get("namespace") and meta["namespace"] != target.namespace:
                    raise ApiError(
                        400,
                        "the namespace of the provided object does not match the namespace sent on the request",
                    )
                meta["namespace"] = target.namespace
        else:
            meta.pop("namespace", None)
        obj["metadata"] = meta
        if not for_update and res.namespaced and target.namespace is not None:
            # NamespaceLifecycle, the first admission plugin, runs after decoding and before the
            # registry validates the object (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go)
            admit_namespaced_create(
                self.cluster, target.namespace, res.plural, res.group, new_object_name(obj)
            )
        if for_update and target.name is not None and meta.get("name") != target.name:
            raise ApiError(
                400,
                f"the name of the object ({meta.get('name')}) does not match the name on the URL ({target.name})",
            )
        if not meta.get("name") and not meta.get("generateName"):
            raise invalid(
                res.kind,
                res.group,
                "",
                [("metadata.name", "Required value: name or generateName is required")],
            )
        _check_valid(obj, kind, str(meta.get("name") or meta.get("generateName") or ""))
        return obj

    def _check_fields(
        self, res: Kind, obj: Obj, query: Mapping[str, str], warnings: builtins.list[str] | None
    ) -> Obj:
        """``obj`` with its workload defaults (:mod:`kubesched.embedded.apiserver.workload_defaults`) and
        without unknown fields, by the request's ``fieldValidation`` (``Strict``: ApiError
        400 ``Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field
        "spec.foo"``; ``Warn``, the default: each one appended to ``warnings`` as ``unknown field
        "spec.foo"``; ``Ignore``: dropped silently). Follows the strict decoding of
        ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go`` and ``fieldmanager``."""
        if res.kind == "Event":
            return obj
        obj = default_workload(obj)
        directive = _first(query, "fieldValidation") or "Warn"
        if directive not in FIELD_VALIDATION_DIRECTIVES:
            raise ApiError(
                400,
                f'fieldValidation: Unsupported value: "{directive}": supported values: '
                '"Ignore", "Strict", "Warn"',
                "BadRequest",
            )
        pruned, unknown = prune_unknown_fields(obj, res.group, res.version, res.kind)
        if not unknown:
            return obj
        messages = [f'unknown field "{path}"' for path in unknown]
        if directive == "Strict":
            raise ApiError(
                400,
                f'{res.kind} in version "{res.version}" cannot be handled as a {res.kind}: '
                f"strict decoding error: {', '.join(messages)}",
                "BadRequest",
            )
        if directive == "Warn" and warnings is not None:
            warnings.extend(messages)
        return pruned

    # ------------------------------------------------------------------- verbs

    def get(self, target: Target) -> tuple[int, Obj]:
        """GET of an object or its ``status`` or ``scale`` subresource."""
        res = target.resource
        assert res is not None and target.name is not None
        if target.subresource == "scale":
            return 200, to_scale(self._get(res, target.namespace, target.name))
        return 200, view_for(res)(self._get(res, target.namespace, target.name))

    def _write_scale(
        self, target: Target, scale: Any, current: Obj, query: Mapping[str, str]
    ) -> tuple[int, Obj]:
        """Write the ``spec.replicas`` of a ``Scale`` body to the object (its resourceVersion, when
        the body names one, as precondition)."""
        assert target.name is not None
        if not isinstance(scale, dict):
            raise ApiError(400, "the body of the request must be a JSON object")
        replicas = replicas_from_scale(scale, target.name)
        rv = (scale.get("metadata") or {}).get("resourceVersion")
        meta = {**current["metadata"], "resourceVersion": rv or current["metadata"]["resourceVersion"]}
        spec: Obj = current["spec"] if isinstance(current.get("spec"), dict) else {}
        new = {**current, "metadata": meta, "spec": {**spec, "replicas": replicas}}
        if _first(query, "dryRun"):
            return 200, to_scale(new)
        return 200, to_scale(self.cluster.update(new))

    def list(self, target: Target, query: Mapping[str, str]) -> tuple[int, Obj]:
        """GET of a collection: selectors, ``limit``/``continue``, ``resourceVersion`` (+Match)."""
        res = target.resource
        assert res is not None
        limit = _int_param(query, "limit", 0)
        token = _first(query, "continue")
        if token is not None:
            page = self.pager.next(token, limit)
        else:
            rv = _first(query, "resourceVersion")
            current = self.cluster.resource_version
            if rv is not None and rv != "0":
                if not rv.isdigit():
                    raise ApiError(
                        400, f'resourceVersion: Invalid value: "{rv}": must be an integer', "BadRequest"
                    )
                if int(rv) > int(current):
                    raise ApiError(
                        504,
                        f"Too large resource version: {rv}, current: {current}",
                        "Timeout",
                        {
                            "causes": [
                                {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
                            ],
                            "retryAfterSeconds": 1,
                        },
                    )
                if _first(query, "resourceVersionMatch") == "Exact" and rv != current:
                    raise ApiError(410, f"too old resource version: {rv} ({current})", "Expired")
            matches = self.matcher(target, query)
            view = view_for(res)
            namespace = target.namespace if res.namespaced else None
            result = self.cluster.list(res.kind_in_store, namespace)
            items = [v for v in map(view, result.items) if matches(v)]
            page = self.pager.first(items, result.resource_version, limit)
        meta: Obj = {"resourceVersion": page.resource_version}
        if page.token:
            meta["continue"] = page.token
            if not _first(query, "labelSelector") and not _first(query, "fieldSelector"):
                meta["remainingItemCount"] = page.remaining
        return 200, {
            "kind": f"{res.kind}List",
            "apiVersion": res.group_version,
            "metadata": meta,
            "items": page.items,
        }

    def create(
        self, target: Target, body: Any, query: Mapping[str, str], warnings: builtins.list[str] | None = None
    ) -> tuple[int, Obj]:
        """POST to a collection (``warnings`` collects field-validation warnings)."""
        res = target.resource
        assert res is not None
        obj = self._check_fields(res, self._body_object(target, body, for_update=False), query, warnings)
        if res.kind == "Pod":
            obj = admit_new_pod(obj, self.cluster)
        elif res.kind == "Namespace":
            obj = admit_new_namespace(obj)
        elif res.kind == "Event" and self.client_time_clock is not None:
            obj = restamp_event(obj, self.client_time_clock())
        if _first(query, "dryRun"):
            return 201, obj
        return 201, view_for(res)(self.cluster.create(obj))

    def update(
        self, target: Target, body: Any, query: Mapping[str, str], warnings: builtins.list[str] | None = None
    ) -> tuple[int, Obj]:
        """PUT of an object (status kept for kinds with a status subresource) or of ``status``
        (``warnings`` collects field-validation warnings)."""
        res = target.resource
        assert res is not None and target.name is not None
        if res.kind == "Event":
            raise ApiError(405, "the embedded cluster does not update events", "MethodNotAllowed")
        if target.subresource == "scale":
            return self._write_scale(target, body, self._get(res, target.namespace, target.name), query)
        obj = self._check_fields(res, self._body_object(target, body, for_update=True), query, warnings)
        if target.subresource in ("status", "finalize"):
            current = self._get(res, target.namespace, target.name)
            rv = (obj.get("metadata") or {}).get("resourceVersion")
            if rv and rv != current["metadata"]["resourceVersion"]:
                raise ConflictError(_modified(res, target.name))
            if _first(query, "dryRun"):
                return 200, {**current, "status": obj.get("status")}
            patch = self._client_times(status_merge_patch(current.get("status"), obj.get("status")), current)
            return 200, self.cluster.patch_status(res.kind_in_store, target.namespace, target.name, patch)
        if _first(query, "dryRun"):
            return 200, obj
        return 200, view_for(res)(self.cluster.update(obj))

    def patch(
        self,
        target: Target,
        body: Any,
        content_type: str,
        query: Mapping[str, str],
        warnings: builtins.list[str] | None = None,
    ) -> tuple[int, Obj]:
        """PATCH of an object or of its ``status`` (merge, strategic merge or JSON patch;
        ``warnings`` collects field-validation warnings about the patched object)."""
        res = target.resource
        assert res is not None and target.name is not None
        apply = PATCH_TYPES.get(content_type)
        if apply is None:
            raise ApiError(
                415,
                f"the body of the request was in an unknown format - accepted media types "
                f"include: {', '.join(PATCH_TYPES)}",
                "UnsupportedMediaType",
            )
        if res.kind == "Event":
            return self._patch_event(res, target, body, content_type, query)
        if target.subresource == "scale":
            current = self._get(res, target.namespace, target.name)
            try:
                scale = apply(to_scale(current), body)
            except PatchError as e:
                raise ApiError(422, f'Scale.autoscaling "{target.name}" is invalid: {e}', "Invalid") from None
            return self._write_scale(target, scale, current, query)
        for _ in range(_PATCH_RETRIES):
            current = self._get(res, target.namespace, target.name)
            try:
                result = apply(current, body)
            except PatchError as e:
                raise ApiError(422, f'{res.kind} "{target.name}" is invalid: {e}', "Invalid") from None
            if not isinstance(result, dict):
                raise ApiError(
                    422, f'{res.kind} "{target.name}" is invalid: patch result is not an object', "Invalid"
                )
            _check_patch_result(result, current, res.kind, res.group_version)
            if target.subresource is None:
                _check_patch_valid(result, current, res.kind, target.name)
            result = self._check_fields(res, result, query, warnings)
            meta = dict(result.get("metadata") or {})
            if meta.get("name") != target.name:
                raise ApiError(
                    400,
                    f"the name of the object ({meta.get('name')}) does not match the name on "
                    f"the URL ({target.name})",
                )
            explicit_rv = meta.get("resourceVersion") != current["metadata"]["resourceVersion"]
            if target.subresource in ("status", "finalize"):
                if explicit_rv:
                    raise ConflictError(_modified(res, target.name))
                if _first(query, "dryRun"):
                    return 200, result
                patch = self._client_times(
                    status_merge_patch(current.get("status"), result.get("status")), current
                )
                return 200, self.cluster.patch_status(res.kind_in_store, target.namespace, target.name, patch)
            result["metadata"] = meta
            if _first(query, "dryRun"):
                return 200, result
            try:
                return 200, view_for(res)(self.cluster.update(result))
            except ConflictError:
                if explicit_rv:
                    raise
        raise ConflictError(_modified(res, target.name))

    def _patch_event(
        self, res: Any, target: Target, body: Any, content_type: str, query: Mapping[str, str]
    ) -> tuple[int, Obj]:
        """PATCH of an ``events.k8s.io/v1`` Event with a merge or strategic merge patch (an Event
        has no merge-keyed lists, so both merge the same way): what client-go's event
        broadcaster sends to update a ``series``. Other event patches answer 405."""
        if res.group == "" or content_type == "application/json-patch+json" or target.subresource:
            raise ApiError(
                405,
                "the embedded cluster patches events.k8s.io/v1 Events with merge or strategic "
                "merge patches only",
                "MethodNotAllowed",
            )
        if not isinstance(body, dict):
            raise ApiError(422, f'Event "{target.name}" is invalid: the patch is not an object', "Invalid")
        meta = body.get("metadata")
        if isinstance(meta, dict) and meta.get("name") not in (None, target.name):
            raise ApiError(
                400,
                f"the name of the object ({meta.get('name')}) does not match the name on "
                f"the URL ({target.name})",
            )
        assert target.name is not None
        current = self._get(res, target.namespace, target.name)
        if _first(query, "dryRun"):
            return 200, view_for(res)({**current, **{k: v for k, v in body.items() if k != "metadata"}})
        patch = {k: v for k, v in body.items() if k not in ("metadata", "kind", "apiVersion")}
        if self.client_time_clock is not None:
            patch = restamp_event(patch, self.client_time_clock())
        return 200, view_for(res)(self.cluster.patch_event(str(target.namespace), str(target.name), patch))

    def delete(self, target: Target, body: Any, query: Mapping[str, str]) -> tuple[int, Obj]:
        """DELETE of an object: ``gracePeriodSeconds`` (query or DeleteOptions), preconditions."""
        res = target.resource
        assert res is not None and target.name is not None
        if res.kind == "Event":
            raise ApiError(405, "the embedded cluster does not delete events", "MethodNotAllowed")
        options = body if isinstance(body, dict) else {}
        current = self._get(res, target.namespace, target.name)
        if res.kind == "Namespace":
            admit_namespace_deletion(target.name)
        pre = options.get("preconditions") or {}
        meta = current["metadata"]
        if pre.get("uid") and pre["uid"] != meta.get("uid"):
            raise ConflictError(
                f'Operation cannot be fulfilled on {_gr(res)} "{target.name}": Precondition '
                f"failed: UID in precondition: {pre['uid']}, UID in object meta: {meta.get('uid')}"
            )
        if pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion"):
            raise ConflictError(
                f'Operation cannot be fulfilled on {_gr(res)} "{target.name}": Precondition '
                f"failed: ResourceVersion in precondition: {pre['resourceVersion']}, "
                f"ResourceVersion in object meta: {meta.get('resourceVersion')}"
            )
        grace = options.get("gracePeriodSeconds")
        if "gracePeriodSeconds" in query:
            grace = _int_param(query, "gracePeriodSeconds", 0)
        if _first(query, "dryRun") or options.get("dryRun"):
            return 200, view_for(res)(current)
        finalizer = _propagation_finalizer(res, options, query)
        if (
            finalizer is not None
            and not meta.get("deletionTimestamp")
            and finalizer not in (meta.get("finalizers") or [])
        ):
            current = self.cluster.update(
                {**current, "metadata": {**meta, "finalizers": [*(meta.get("finalizers") or []), finalizer]}}
            )
        self.cluster.delete(
            res.kind_in_store,
            target.namespace,
            target.name,
            grace=grace is None or grace > 0,
            grace_period_seconds=None if grace is None else max(0, int(grace)),
        )
        try:
            remaining = self._get(res, target.namespace, target.name)
        except NotFoundError:
            return 200, view_for(res)(current)
        return 202, view_for(res)(remaining)

    def delete_collection(self, target: Target, query: Mapping[str, str]) -> tuple[int, Obj]:
        """DELETE of a collection (matching the selectors); answers the list of deleted objects."""
        res = target.resource
        assert res is not None
        _, listed = self.list(target, {k: v for k, v in query.items() if k not in ("limit", "continue")})
        grace = _int_param(query, "gracePeriodSeconds", -1)
        for obj in listed["items"]:
            meta = obj["metadata"]
            try:
                self.cluster.delete(res.kind_in_store, meta.get("namespace"), meta["name"], grace=grace != 0)
            except NotFoundError:
                pass
        return 200, listed

    def bind(self, target: Target, body: Any) -> tuple[int, Obj]:
        """POST ``pods/<name>/binding`` (or ``namespaces/<ns>/bindings``): 201 ``Status`` Success."""
        if not isinstance(body, dict):
            raise ApiError(400, "the body of the request must be a JSON object")
        meta = body.get("metadata") or {}
        name = target.name or meta.get("name")
        if meta.get("namespace") and target.namespace and meta["namespace"] != target.namespace:
            raise ApiError(
                400, "the namespace of the provided object does not match the namespace sent on the request"
            )
        # a create of pods/binding (or of bindings): NamespaceLifecycle admits it before the registry
        admit_namespaced_create(
            self.cluster,
            target.namespace or "default",
            "pods" if target.name else "bindings",
            "",
            str(name or "Unknown"),
        )
        if not name:
            raise invalid("Binding", "", "", [("metadata.name", "Required value: name is required")])
        if target.name is not None and meta.get("name") and meta["name"] != target.name:
            raise ApiError(
                400, f"name in URL does not match name in Binding object: {target.name} != {meta['name']}"
            )
        node = (body.get("target") or {}).get("name")
        if not node:
            raise invalid("Binding", "", name, [("target.name", "Required value")])
        self.cluster.bind(target.namespace or "default", name, meta.get("uid") or "", node)
        return 201, success(201)


#: Kinds whose dependents are orphaned when a DELETE names no propagation policy
#: (``DefaultGarbageCollectionPolicy`` of ``pkg/registry/batch/job``: batch/v1 Jobs).
_ORPHAN_BY_DEFAULT = frozenset({"Job"})


def _propagation_finalizer(res: Kind, options: Mapping[str, Any], query: Mapping[str, str]) -> str | None:
    """The garbage-collection finalizer a DELETE asks for (``deletionFinalizersForGarbageCollection``
    of ``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go``): ``orphan`` for
    ``propagationPolicy: Orphan`` (or ``orphanDependents: true``), ``foregroundDeletion`` for
    ``Foreground``, None for ``Background``. Raises ApiError 400 for another value."""
    policy = _first(query, "propagationPolicy") or options.get("propagationPolicy")
    if policy is None:
        orphan = options.get("orphanDependents")
        if orphan is None and "orphanDependents" in query:
            orphan = query["orphanDependents"].lower() == "true"
        if orphan is not None:
            policy = "Orphan" if orphan else "Background"
        elif res.kind in _ORPHAN_BY_DEFAULT:
            policy = "Orphan"
    if policy in (None, "Background"):
        return None
    if policy == "Orphan":
        return "orphan"
    if policy == "Foreground":
        return "foregroundDeletion"
    raise ApiError(
        400,
        f'propagationPolicy: Unsupported value: "{policy}": supported values: "Foreground", '
        '"Background", "Orphan"',
        "BadRequest",
    )


def _gr(res: Kind) -> str:
    return res.resource


def _modified(res: Kind, name: str) -> str:
    return (
        f'Operation cannot be fulfilled on {_gr(res)} "{name}": the object has been modified; please apply '
        "your changes to the latest version and try again"
    )


def _int_param(query: Mapping[str, str], key: str, default: int) -> int:
    raw = _first(query, key)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ApiError(400, f"{key}: Invalid value: {raw!r}: must be an integer") from None


def _check_decodable(obj: Obj, kind: str, api_version: str) -> None:
    """Refuse, as kube-apiserver's decoder does (400 BadRequest, ``Pod in version "v1" cannot be
    handled as a Pod: ...``), an object whose fields have the wrong JSON type for ``kind``
    (:func:`kubesched.api.shape.check_shape`: e.g. ``spec.containers: must be a list, got
    integer``), so the store never holds an object that clients cannot decode."""
    try:
        check_shape(obj, kind)
    except ManifestError as e:
        version = api_version.rpartition("/")[2]
        raise ApiError(
            400, f'{kind} in version "{version}" cannot be handled as a {kind}: {e}', "BadRequest"
        ) from None


#: Kinds whose objects are stored as sent even when their values do not parse: a node the
#: scheduler cannot read is reported per object. Pods are checked as every other kind (a pod
#: kube-apiserver refuses, e.g. ``requests.cpu: "four"``, is refused here too).
_STORED_AS_SENT = frozenset({"Node"})


#: ``k8s.io/apimachinery/pkg/api/resource/quantity.go``: ErrFormatWrong, the decoding error of a
#: quantity that does not parse (kube-apiserver answers it with 400 before any validation).
QUANTITY_FORMAT_WRONG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
#: how :class:`kubesched.api.quantity.QuantityError` reads in a field error
_BAD_QUANTITY = 'invalid quantity "'


def _check_valid(obj: Obj, kind: str, name: str) -> None:
    """Refuse (422 Invalid, ``PodDisruptionBudget "keep" is invalid: spec.minAvailable: Invalid
    value: "lots": ...``) an object the kind's load check refuses (:func:`kubesched.api.load_checks.
    check_loaded_object`: what kube-apiserver's validation refuses of the fields the scheduler
    reads), as ``serve -f`` and ``simulate`` refuse it when loading. A quantity that does not parse
    is refused as kube-apiserver's decoder refuses it (400 BadRequest, ``Pod in version "v1" cannot
    be handled as a Pod: quantities must match the regular expression '...'``)."""
    if kind in _STORED_AS_SENT:
        return
    from kubesched.api.load_checks import check_loaded_object

    meta = obj.get("metadata") or {}
    if not meta.get("name") and meta.get("generateName"):
        # the store names it on create (generateName + 5 characters), as kube-apiserver does before
        # validating; the check sees a name of that form
        obj = {**obj, "metadata": {**meta, "name": f"{meta['generateName']}xxxxx"}}
    try:
        check_loaded_object(kind, obj)
    except ManifestError as e:
        if e.message.startswith(_BAD_QUANTITY):
            version = str(obj.get("apiVersion") or "").rpartition("/")[2]
            raise ApiError(
                400,
                f'{kind} in version "{version}" cannot be handled as a {kind}: {QUANTITY_FORMAT_WRONG}',
                "BadRequest",
            ) from None
        raise invalid(kind, _group_of(kind), name, [(e.path, e.message)]) from None


def _group_of(kind: str) -> str:
    """The API group of a registered ``kind`` (``""``: core, as for an unregistered kind)."""
    row = kinds.lookup(kind)
    return row.group if row is not None else ""


def _check_patch_valid(result: Obj, current: Obj, kind: str, name: str) -> None:
    """:func:`_check_valid` of a patch's result (merge, strategic merge, JSON patch and server-side
    apply alike), unless the stored object already fails the check (loaded that way by ``serve
    -f``): a patch never makes a valid object invalid."""
    try:
        _check_valid(result, kind, name)
    except ApiError:
        try:
            _check_valid(current, kind, name)
        except ApiError:
            return
        raise


def _check_patch_result(result: Obj, current: Obj, kind: str, api_version: str) -> None:
    """:func:`_check_decodable` of a patch's result, unless the stored object already had the
    wrong type (loaded that way, e.g. by ``serve -f``): a patch never makes an object malformed,
    and a malformed one can still get its status written (the scheduler's ``PodScheduled``)."""
    try:
        _check_decodable(result, kind, api_version)
    except ApiError:
        try:
            check_shape(current, kind)
        except ManifestError:
            return
        raise
