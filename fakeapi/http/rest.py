"""The kube-apiserver REST surface over one :class:`~fakeapi.server.apiserver.APIServer`, without sockets.

:meth:`RestAPI.handle` takes a parsed :class:`Request` and returns either a
:class:`Response` (status code, JSON body, ``Warning`` texts) or a
:class:`WatchResponse` that the transport streams as chunked newline-delimited
JSON. The wire-level rules come from docs/APISERVER.md:

* paths ``/api/v1/...`` and ``/apis/{group}/{version}/...``, namespaced and
  cluster-scoped; a path of the wrong scope is a 404 ``the server could not
  find the requested resource`` (§1.8, §5);
* the request body's ``apiVersion``/``kind`` default to the URL's, and a body
  naming another object or namespace than the URL is a 400 (``checkName``,
  §1.4; ``EnsureObjectNamespaceMatchesRequestNamespace`` on create);
* query options: ``dryRun``, ``fieldValidation``, ``fieldManager``,
  selectors, ``limit``/``continue``, ``resourceVersion(Match)``, watch options,
  ``DeleteOptions`` in the body or the query (body wins);
* every failure is the ``metav1.Status`` of the :class:`~fakeapi.machinery.errors.ApiError`
  with its code as the HTTP status; success codes per §0 (201 on create).

Every verb runs through the in-process server, which holds ``api.lock`` for
the whole request: HTTP threads and in-process callers share one consistent
store and one resourceVersion sequence.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import yaml

from fakeapi.http import discovery, openapi_docs, protobuf, subresources, tables
from fakeapi.machinery import bodycheck, boundedyaml, errors
from fakeapi.machinery.errors import ApiError, Cause
from fakeapi.machinery.jsonutil import go_json_type as _json_type
from fakeapi.registry.kinds import Kind

if TYPE_CHECKING:
    from fakeapi.server.apiserver import APIServer
    from fakeapi.server.watch import Watch

JSON_TYPE = "application/json"

#: ``Watch`` default duration when the client gives no ``timeoutSeconds`` (kube-apiserver's
#: ``--min-request-timeout``; the real server picks a random value in [1800, 3600)).
DEFAULT_WATCH_TIMEOUT = 1800.0


@dataclass
class Request:
    """One HTTP request as the REST layer sees it."""

    method: str
    #: The URL path, still percent-encoded (segments are decoded one by one).
    path: str
    query: Mapping[str, list[str]] = field(default_factory=dict)
    #: Header names in lower case.
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""


@dataclass
class Response:
    """A complete response: status code, body and the texts of ``Warning`` headers."""

    code: int
    body: bytes
    content_type: str = JSON_TYPE
    warnings: list[str] = field(default_factory=list)


@dataclass
class WatchResponse:
    """A watch to stream: 200, then one JSON event per line until ``timeout`` seconds pass."""

    watch: Watch
    timeout: float
    #: The client asked for ``allowWatchBookmarks``: periodic (and final) BOOKMARK events are allowed.
    bookmarks: bool
    warnings: list[str] = field(default_factory=list)
    #: Turns each event's object into what the client asked for (a Table), or None: sent as stored.
    convert: Callable[[Any], Any] | None = None
    #: Encodes one event (type, object) as a protobuf frame, or None: JSON lines.
    frame: Callable[[str, Any], bytes] | None = None
    content_type: str = JSON_TYPE


@dataclass(frozen=True)
class Route:
    """A resource path: kind, optional namespace, name and subresource."""

    kind: Kind
    #: The namespace segment of the path (None: no ``namespaces/{ns}`` segment).
    namespace: str | None
    name: str | None = None
    subresource: str | None = None
    #: The legacy ``/watch/`` path prefix was used.
    watch_prefix: bool = False


def encode(obj: Any) -> bytes:
    """Compact JSON, UTF-8, ending with a newline: what Go's ``json.Encoder`` (kube-apiserver's serializer) writes."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def method_not_allowed() -> ApiError:
    """405 ``the server does not allow this method on the requested resource``."""
    return ApiError(errors.status_body(
        405, "MethodNotAllowed", "the server does not allow this method on the requested resource"))


_PARSE_ERROR = "couldn't get version/kind; json parse error: "


def _unrecognized(kind: Kind, message: str, body: bytes) -> ApiError:
    """The create and update handlers' ``transformDecodeError`` for a body whose kind could not be
    read: ``the object provided is unrecognized (must be of type <Kind>): <error> (<summarizeData>)``,
    the summary being the body's first 30 bytes (hex unless it starts with ``{``)."""
    data = body if isinstance(body, bytes) else str(body).encode()
    if not data:
        summary = "<empty>"
    elif data[:1] == b"{":
        summary = data[:30].decode("utf-8", "replace") + (" ..." if len(data) > 30 else "")
    else:
        summary = data[:30].hex() + (" ..." if len(data) > 30 else "")
    return errors.bad_request(f"the object provided is unrecognized (must be of type {kind.kind}): {message} ({summary})")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid character '{name[0]}' looking for beginning of value")


def decode_json(body: bytes, what: str = "couldn't get version/kind; json parse error") -> Any:
    """Parse a request body as JSON (strictly: no NaN/Infinity); 400 on failure.

    As Go's decoder does, invalid UTF-8 and unpaired surrogate escapes become U+FFFD; nesting
    past Go's bound is its 400 (``invalid character '{' exceeded max depth``: bodycheck.loads).
    """
    # --- issue 24: Go's replacement of invalid text, and Go's bound on nesting ---
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    try:
        value = bodycheck.loads(text, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError) as e:
        raise errors.bad_request(f"{what}: {e}") from e
    if "\\u" in text and ("\\ud" in text.lower()):
        value = bodycheck.replace_lone_surrogates(value)
    return value


#: YAML as sigs.k8s.io/yaml reads it: timestamps stay strings (the document is converted to JSON).
_JSONCompatibleLoader = boundedyaml.JSONCompatibleLoader

#: Request body media types the server decodes (anything else is 415).
BODY_MEDIA_TYPES = ["application/json", "application/yaml", protobuf.MEDIA_TYPE]


def decode_body(req: Request, api_version: str = "", kind: str = "") -> Any:
    """An object body by its Content-Type: JSON (also when absent), YAML, or protobuf (built-in kinds;
    ``api_version``/``kind`` when its envelope names none); 415 otherwise."""
    ctype = req.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if ctype in ("", "application/json", "*/*"):
        return decode_json(req.body)
    if ctype == protobuf.MEDIA_TYPE:
        return protobuf.decode(req.body, api_version, kind)
    if ctype in ("application/yaml", "application/x-yaml", "text/yaml"):
        try:
            # (issue 24: nesting, aliases bounded: go-yaml's bound, kube-apiserver's JSON one)
            return boundedyaml.load(req.body, _JSONCompatibleLoader, max_depth=bodycheck.MAX_DEPTH)
        except yaml.YAMLError as e:
            raise errors.bad_request(f"error converting YAML to JSON: {e}") from e
    raise errors.unsupported_media_type(BODY_MEDIA_TYPES)


def _first(query: Mapping[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    return values[0] if values else None


def query_bool(query: Mapping[str, list[str]], name: str) -> bool | None:
    """A boolean query parameter as apimachinery converts it (``0``, ``f``, ``false``, ``n``, ``no`` are false)."""
    v = _first(query, name)
    if v is None:
        return None
    return not (v == "0" or v.lower() in ("f", "false", "n", "no"))


def query_int(query: Mapping[str, list[str]], name: str) -> int | None:
    """An integer query parameter; 400 when it does not parse."""
    v = _first(query, name)
    if v is None or v == "":
        return None
    try:
        return int(v)
    except ValueError as e:
        raise errors.bad_request(f'strconv.ParseInt: parsing "{v}": invalid syntax') from e


def _go_strings(values: list[str]) -> str:
    return "[]string{" + ", ".join(json.dumps(v) for v in values) + "}"


def dry_run(values: list[str] | None, options_kind: str) -> bool:
    """``dryRun``: absent, or ``All``; anything else is 422 on the verb's options kind."""
    if not values:
        return False
    if any(v != "All" for v in values):
        raise errors.options_invalid(options_kind, [Cause(
            errors.FIELD_VALUE_NOT_SUPPORTED,
            f'Unsupported value: {_go_strings(values)}: supported values: "All"', "dryRun")])
    return True


class RestAPI:
    """Kubernetes REST semantics for one in-process :class:`~fakeapi.server.apiserver.APIServer`."""

    def __init__(self, api: APIServer, *, server_address: str = "127.0.0.1",
                 watch_timeout: float = DEFAULT_WATCH_TIMEOUT, timeout_scale: float = 1.0) -> None:
        self.api = api
        #: ``host:port`` reported in ``/api``'s serverAddressByClientCIDRs.
        self.server_address = server_address
        self.watch_timeout = watch_timeout
        #: Wall seconds per second of a watch's ``timeoutSeconds`` (1.0, as kube-apiserver; a test that
        #: waits for a watch to end shortens it rather than wait whole seconds).
        self.timeout_scale = timeout_scale
        #: pods/log, pods/eviction, serviceaccounts/token, scale, CSR approval (:mod:`fakeapi.http.subresources`).
        self.subresources = subresources.KindSubresources(api)

    # ----------------------------------------------------------------- entry

    def handle(self, req: Request) -> Response | WatchResponse:
        """Serve one request. Never raises: failures become ``metav1.Status`` responses."""
        try:
            return self._negotiate(req, self._handle(req))
        except ApiError as e:
            return self._negotiate(req, Response(e.code, encode(e.status), warnings=self.api.last_warnings))
        except Exception as e:  # a bug or an injected crash: a 500 Status, as the real server answers
            err = errors.internal(f"Internal error occurred: {type(e).__name__}: {e}")
            return Response(500, encode(err.status))

    def _negotiate(self, req: Request, resp: Response | WatchResponse) -> Response | WatchResponse:
        """The protobuf form of a JSON answer when the client prefers it and the kind has a message."""
        if not protobuf.accepts(req.headers.get("accept", "")):
            return resp
        if isinstance(resp, WatchResponse):
            if resp.convert is None:
                resp.frame = protobuf.watch_frame
                resp.content_type = protobuf.WATCH_MEDIA_TYPE
            return resp
        if resp.content_type != JSON_TYPE or not resp.body:
            return resp
        try:
            obj = json.loads(resp.body)
            data = protobuf.encode(obj) if isinstance(obj, dict) else None
        except Exception:  # (an answer with no protobuf form is sent as JSON, which every client reads)
            return resp
        if data is None:
            return resp
        return Response(resp.code, data, content_type=protobuf.MEDIA_TYPE, warnings=resp.warnings)

    def _handle(self, req: Request) -> Response | WatchResponse:
        with self.api.lock:  # kinds come and go with CRDs: read the registry consistently
            found = self._resolve(req)
        if isinstance(found, Response):
            return found
        return self._dispatch(req, found)

    def _resolve(self, req: Request) -> Response | Route:
        """A discovery/OpenAPI/health document, or the resource route of the path."""
        path = req.path
        if len(path) > 1 and path.endswith("/"):
            path = path.rstrip("/")
        if path in ("/healthz", "/livez", "/readyz"):
            return Response(200, b"ok", content_type="text/plain; charset=utf-8")
        if req.method not in ("GET", "POST", "PUT", "PATCH", "DELETE"):
            raise method_not_allowed()
        registry = self.api.kinds
        if path == "/version":
            return self._document(req, discovery.version_info())
        if path == "/api":
            return self._document(req, discovery.api_versions(self.server_address))
        if path == "/apis":
            return self._document(req, discovery.api_group_list(registry))
        if path == "/openapi/v2":
            accept = req.headers.get("accept", "")
            if accept and not any(m in accept for m in ("application/json", "*/*")):
                raise ApiError(errors.status_body(406, "NotAcceptable", (
                    "only the following media types are accepted: application/json")))
            return self._document(req, openapi_docs.v2_document(registry))
        if path == "/openapi/v3":
            return self._document(req, openapi_docs.index(registry))
        if path.startswith("/openapi/v3/"):
            parts = path[len("/openapi/v3/"):].split("/")
            doc = None
            if len(parts) == 2 and parts[0] == "api":
                doc = openapi_docs.group_version_document(registry, "", parts[1])
            elif len(parts) == 3 and parts[0] == "apis":
                doc = openapi_docs.group_version_document(registry, parts[1], parts[2])
            if doc is None:
                raise errors.resource_not_found()
            return self._document(req, doc)
        segments = [unquote(s) for s in path.strip("/").split("/")]
        if segments[0] == "api" and len(segments) >= 2:
            group, version, rest = "", segments[1], segments[2:]
        elif segments[0] == "apis" and len(segments) >= 2:
            group = segments[1]
            if len(segments) == 2:
                doc = discovery.api_group(registry, group)
                if doc is None:
                    raise errors.resource_not_found()
                return self._document(req, doc)
            version, rest = segments[2], segments[3:]
        else:
            raise errors.resource_not_found()
        if not rest:
            listing = discovery.api_resource_list(registry, group, version)
            if listing is None or (not group and version != "v1"):
                raise errors.resource_not_found()
            return self._document(req, listing)
        reviewed = self._review(req, group, version, rest)
        if reviewed is not None:
            return reviewed
        return self._route(group, version, rest)

    def _review(self, req: Request, group: str, version: str, rest: list[str]) -> Response | None:
        """A review resource (TokenReview, the access reviews): created and answered, never stored."""
        namespace = None
        if len(rest) == 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        if len(rest) != 1 or (group, version, rest[0]) not in subresources.REVIEWS:
            return None
        _, namespaced = subresources.REVIEWS[(group, version, rest[0])]
        if namespaced != (namespace is not None):
            raise errors.resource_not_found()
        if req.method != "POST":
            raise method_not_allowed()
        out = subresources.review(self.api, group, version, rest[0], namespace, decode_body(req), req.headers)
        return Response(201, encode(out))

    def _document(self, req: Request, doc: dict[str, Any]) -> Response:
        if req.method != "GET":
            raise method_not_allowed()
        return Response(200, encode(doc))

    def _route(self, group: str, version: str, rest: list[str]) -> Route:
        watch_prefix = False
        if rest[0] == "watch":
            watch_prefix, rest = True, rest[1:]
        namespace: str | None = None
        if (len(rest) >= 3 and rest[0] == "namespaces"
                and not (len(rest) == 3 and rest[2] in ("status", "finalize"))):
            namespace, rest = rest[1], rest[2:]
            if not namespace:
                raise errors.resource_not_found()
        if not rest or len(rest) > 3 or not all(rest):
            raise errors.resource_not_found()
        kind = self.api.kinds.by_resource(group, version, rest[0])
        if kind is None:
            raise errors.resource_not_found()
        name = rest[1] if len(rest) >= 2 else None
        sub = rest[2] if len(rest) == 3 else None
        if namespace is not None and not kind.namespaced:
            raise errors.resource_not_found()
        if kind.namespaced and namespace is None and name is not None:
            raise errors.resource_not_found()
        if watch_prefix and sub is not None:
            raise errors.resource_not_found()
        return Route(kind, namespace, name, sub, watch_prefix)

    # --------------------------------------------------------------- dispatch

    def _dispatch(self, req: Request, route: Route) -> Response | WatchResponse:
        m = req.method
        q = req.query
        if route.watch_prefix:
            if m != "GET":
                raise method_not_allowed()
            return self._watch(req, route)
        if route.name is None:
            if route.kind.namespaced and route.namespace is None and m != "GET":
                raise errors.resource_not_found()  # create/deletecollection need a namespace (§1.8)
            if m == "GET":
                return self._watch(req, route) if query_bool(q, "watch") else self._list(req, route)
            if m == "POST":
                return self._create(req, route)
            if m == "DELETE":
                if not discovery.serves_deletecollection(route.kind):
                    raise method_not_allowed()  # (issue 24: namespaces have no deletecollection)
                return self._delete_collection(req, route)
            raise method_not_allowed()
        sub = route.subresource
        if sub is not None:
            self._check_subresource(route, m)
            if sub not in ("status", "finalize"):
                return self._subresource(req, route)
        if m == "GET":
            return self._get(req, route)
        if m == "PUT":
            return self._update(req, route)
        if m == "PATCH":
            return self._patch(req, route)
        if m == "DELETE":
            if sub is not None:
                raise method_not_allowed()
            return self._delete(req, route)
        raise method_not_allowed()

    def _check_subresource(self, route: Route, method: str) -> None:
        kind, sub = route.kind, route.subresource
        if sub is not None and subresources.serves(kind, sub):
            return
        if sub == "status":
            if not kind.status_subresource:
                # §3: every verb on /status of a kind without the subresource is "R name not found"
                raise errors.not_found(kind.group, kind.plural, route.name or "")
            return
        if sub == "finalize" and kind.builtin and kind.kind == "Namespace" and not kind.group:
            if method != "PUT":
                raise method_not_allowed()
            return
        raise errors.resource_not_found()

    def _subresource(self, req: Request, route: Route) -> Response:
        content_type = req.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        body = req.body
        if content_type == protobuf.MEDIA_TYPE and body:  # (their answers are JSON-built: the body too)
            body, content_type = encode(protobuf.decode(body)), JSON_TYPE
        code, out, media = self.subresources.serve(req.method, route.kind, route.namespace, route.name or "",
                                                   route.subresource or "", req.query, body, content_type,
                                                   self._actor(req))
        if media == "text/plain":
            return Response(code, str(out).encode(), content_type="text/plain")
        return self._ok(code, out)

    def _actor(self, req: Request) -> str:
        manager = _first(req.query, "fieldManager")
        if manager:
            return manager
        agent = req.headers.get("user-agent", "")
        return agent.split("/", 1)[0] or "http"

    def _ref(self, route: Route) -> str:
        return f"{route.kind.api_version}/{route.kind.kind}"

    def _ok(self, code: int, obj: Any) -> Response:
        return Response(code, encode(obj), warnings=self.api.last_warnings)

    # ------------------------------------------------------------------ bodies

    def _object_body(self, req: Request, route: Route) -> dict[str, Any]:
        """Decode a create/update body; default its apiVersion/kind to the URL's (§2.1)."""
        kind = route.kind
        # --- h6fid: a JSON body the decoder cannot read is the handler's transformDecodeError ---
        try:
            obj = decode_body(req, route.kind.api_version, route.kind.kind)
        except ApiError as e:
            if e.message.startswith(_PARSE_ERROR) and " exceeded max depth" in e.message:
                raise _unrecognized(kind, e.message, req.body) from e
            raise
        # --- end h6fid ---
        if not isinstance(obj, dict):
            raise errors.bad_request(
                f"couldn't get version/kind; json parse error: json: cannot unmarshal {_json_type(obj)} "
                "into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; "
                "Kind string \"json:\\\"kind,omitempty\\\"\" }")
        api_version = obj.get("apiVersion")
        if api_version in (None, ""):
            obj["apiVersion"] = kind.api_version
        elif api_version != kind.api_version:
            raise errors.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version "
                f"({kind.api_version})")
        kind_name = obj.get("kind")
        if kind_name in (None, ""):
            obj["kind"] = kind.kind
        elif kind_name != kind.kind:
            meta = self._meta(obj)
            if kind.builtin:
                raise errors.bad_request(
                    f"the object provided is unrecognized (must be of type {kind.kind}): "
                    f"object kind {kind_name!s} does not match {kind.kind}")
            raise errors.invalid(kind.group, kind.kind, str(meta.get("name") or ""), [Cause(
                errors.FIELD_VALUE_INVALID, f"Invalid value: {json.dumps(kind_name)}: must be {kind.kind}", "kind")])
        return obj

    @staticmethod
    def _meta(obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj.get("metadata")
        return meta if isinstance(meta, dict) else {}

    def _field_validation(self, req: Request) -> str:
        return _first(req.query, "fieldValidation") or "Warn"

    # ------------------------------------------------------------------- verbs

    def _get(self, req: Request, route: Route) -> Response:
        obj = self.api.get(self._ref(route), route.name or "", route.namespace,
                           resource_version=_first(req.query, "resourceVersion") or None, actor=self._actor(req))
        if tables.wants_table(req.headers.get("accept", "")):
            return self._ok(200, self._table(req, route, [obj], {"resourceVersion": obj["metadata"].get(
                "resourceVersion", "")}))
        return self._ok(200, obj)

    def _table(self, req: Request, route: Route, items: list[dict[str, Any]], list_meta: dict[str, Any],
               *, columns: bool = True) -> dict[str, Any]:
        """``items`` as a meta.k8s.io/v1 Table (:mod:`fakeapi.http.tables`)."""
        kind = route.kind
        crd = None
        if not kind.builtin and kind.crd_name:
            try:
                crd = self.api.get("CustomResourceDefinition", kind.crd_name, actor="kube-apiserver", shared=True)
            except ApiError:
                crd = None
        return tables.table(kind, items, now=self.api.clock.now(), crd=crd, list_meta=list_meta,
                            include=_first(req.query, "includeObject") or "", columns=columns)

    def _list_args(self, req: Request, route: Route) -> dict[str, Any]:
        q = req.query
        fields = _first(q, "fieldSelector") or None
        return {"label_selector": _first(q, "labelSelector") or None, "field_selector": fields}

    def _list(self, req: Request, route: Route) -> Response:
        q = req.query
        limit = query_int(q, "limit")
        obj = self.api.list(
            self._ref(route), route.namespace,
            **self._list_args(req, route),
            resource_version=_first(q, "resourceVersion") or None,
            resource_version_match=_first(q, "resourceVersionMatch") or None,
            limit=limit if limit and limit > 0 else None,
            continue_=_first(q, "continue") or None,
            send_initial_events=query_bool(q, "sendInitialEvents"),
            actor=self._actor(req),
        )
        if tables.wants_table(req.headers.get("accept", "")):
            return self._ok(200, self._table(req, route, obj.get("items") or [], obj.get("metadata") or {}))
        return self._ok(200, obj)

    def _watch(self, req: Request, route: Route) -> WatchResponse:
        q = req.query
        args = self._list_args(req, route)
        if route.name is not None:  # legacy /watch/.../{name}: a watch of one object
            by_name = "metadata.name=" + route.name.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")
            args["field_selector"] = f"{args['field_selector']},{by_name}" if args["field_selector"] else by_name
        bookmarks = bool(query_bool(q, "allowWatchBookmarks"))
        timeout = query_int(q, "timeoutSeconds")
        w = self.api.watch(
            self._ref(route), route.namespace,
            **args,
            resource_version=_first(q, "resourceVersion") or None,
            resource_version_match=_first(q, "resourceVersionMatch") or None,
            allow_bookmarks=bookmarks,
            send_initial_events=query_bool(q, "sendInitialEvents"),
            actor=self._actor(req),
        )
        convert = None
        if tables.wants_table(req.headers.get("accept", "")):
            first = [True]

            def convert(obj: Any) -> Any:
                if not isinstance(obj, dict) or obj.get("kind") == "Status":
                    return obj
                if (obj.get("metadata") or {}).get("name") is None:  # a BOOKMARK: its metadata as a Table's
                    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata") or {},
                            "rows": []}
                out = self._table(req, route, [obj], {"resourceVersion": obj["metadata"].get("resourceVersion", "")},
                                  columns=first[0])
                first[0] = False
                return out
        return WatchResponse(w, timeout * self.timeout_scale if timeout and timeout > 0 else self.watch_timeout, bookmarks,
                             warnings=self.api.last_warnings, convert=convert)

    def _create(self, req: Request, route: Route) -> Response:
        obj = self._object_body(req, route)
        meta = self._meta(obj)
        ns = route.namespace
        if ns is not None and route.kind.namespaced:
            body_ns = meta.get("namespace")
            if body_ns and body_ns != ns:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request")
        out = self.api.create(obj, namespace=ns, actor=self._actor(req),
                              field_validation=self._field_validation(req),
                              dry_run=dry_run(req.query.get("dryRun"), "CreateOptions"))
        return self._ok(201, out)

    def _check_name(self, obj: dict[str, Any], route: Route) -> None:
        """``checkName`` of handlers/rest.go: the body names the URL's object (400 otherwise)."""
        meta = self._meta(obj)
        name = route.name or ""
        obj_name = meta.get("name")
        if not obj_name:
            raise errors.bad_request(
                f"the name of the object ({name} based on URL) was undeterminable: name must be provided")
        if obj_name != name:
            raise errors.bad_request(f"the name of the object ({obj_name}) does not match the name on the URL ({name})")
        ns = route.namespace
        obj_ns = meta.get("namespace")
        if ns and obj_ns and obj_ns != ns:
            raise errors.bad_request(
                f"the namespace of the object ({obj_ns}) does not match the namespace on the request ({ns})")

    def _update(self, req: Request, route: Route) -> Response:
        if route.subresource == "finalize":
            decode_json(req.body)
            return self._ok(200, self.api.finalize_namespace(route.name or "", actor=self._actor(req)))
        obj = self._object_body(req, route)
        self._check_name(obj, route)
        out = self.api.update(obj, namespace=route.namespace, subresource=route.subresource,
                              actor=self._actor(req), field_validation=self._field_validation(req),
                              dry_run=dry_run(req.query.get("dryRun"), "UpdateOptions"))
        return self._ok(self.api.last_code, out)  # (201: created on update)

    def _patch(self, req: Request, route: Route) -> Response:
        content_type = req.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        out = self.api.patch(self._ref(route), route.name or "", req.body, namespace=route.namespace,
                             patch_type=content_type, subresource=route.subresource, actor=self._actor(req),
                             field_manager=_first(req.query, "fieldManager"), force=query_bool(req.query, "force"),
                             field_validation=self._field_validation(req),
                             dry_run=dry_run(req.query.get("dryRun"), "PatchOptions"))
        return self._ok(self.api.last_code, out)

    def _delete_options(self, req: Request) -> dict[str, Any]:
        """DeleteOptions from the query, then from the body (whose fields win), as the delete handler decodes them."""
        q = req.query
        opts: dict[str, Any] = {}
        if "gracePeriodSeconds" in q:
            opts["gracePeriodSeconds"] = query_int(q, "gracePeriodSeconds")
        if "propagationPolicy" in q:
            opts["propagationPolicy"] = _first(q, "propagationPolicy")
        if "orphanDependents" in q:
            opts["orphanDependents"] = query_bool(q, "orphanDependents")
        if "dryRun" in q:
            opts["dryRun"] = list(q["dryRun"])
        if req.body.strip():
            body = decode_body(req, "v1", "DeleteOptions")
            if not isinstance(body, dict):
                raise errors.bad_request(
                    f"json: cannot unmarshal {_json_type(body)} into Go value of type v1.DeleteOptions")
            kind = body.get("kind")
            if kind not in (None, "", "DeleteOptions"):
                raise errors.bad_request(f"got unexpected object of kind {kind}, expected DeleteOptions")
            for key in ("gracePeriodSeconds", "propagationPolicy", "orphanDependents", "dryRun", "preconditions"):
                if body.get(key) is not None:
                    opts[key] = body[key]
        grace = opts.get("gracePeriodSeconds")
        if grace is not None and (isinstance(grace, bool) or not isinstance(grace, int)):
            raise errors.bad_request(f"json: cannot unmarshal {_json_type(grace)} into Go struct field "
                                     "DeleteOptions.gracePeriodSeconds of type int64")
        pre = opts.get("preconditions")
        if pre is not None and not isinstance(pre, dict):
            raise errors.bad_request(f"json: cannot unmarshal {_json_type(pre)} into Go struct field "
                                     "DeleteOptions.preconditions of type v1.Preconditions")
        run = opts.get("dryRun")
        if run is not None and not (isinstance(run, list) and all(isinstance(v, str) for v in run)):
            raise errors.bad_request("json: cannot unmarshal into Go struct field DeleteOptions.dryRun of type []string")
        return opts

    def _delete(self, req: Request, route: Route) -> Response:
        opts = self._delete_options(req)
        orphan = opts.get("orphanDependents")
        out = self.api.delete(
            self._ref(route), route.name or "", route.namespace,
            propagation_policy=opts.get("propagationPolicy"),
            preconditions=opts.get("preconditions"),
            grace_period_seconds=opts.get("gracePeriodSeconds"),
            orphan_dependents=orphan,
            actor=self._actor(req),
            dry_run=dry_run(opts.get("dryRun"), "DeleteOptions"),
        )
        # 202 only for the legacy orphanDependents=false while the object is still there (§0)
        code = 202 if orphan is False and out.get("kind") != "Status" else 200
        return self._ok(code, out)

    def _delete_collection(self, req: Request, route: Route) -> Response:
        opts = self._delete_options(req)
        policy = opts.get("propagationPolicy")
        orphan = opts.get("orphanDependents")
        if orphan is not None:
            if policy is not None:
                raise errors.options_invalid("DeleteOptions", [Cause(
                    errors.FIELD_VALUE_INVALID,
                    f'Invalid value: "{policy}": orphanDependents and deletionPropagation cannot be both set',
                    "propagationPolicy")])
            policy = "Orphan" if orphan else "Background"
        out = self.api.delete_collection(
            self._ref(route), route.namespace,
            **self._list_args(req, route),
            propagation_policy=policy,
            grace_period_seconds=opts.get("gracePeriodSeconds"),
            actor=self._actor(req),
            dry_run=dry_run(opts.get("dryRun"), "DeleteOptions"),
        )
        return self._ok(200, out)


