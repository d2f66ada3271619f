"""A rejected request changes nothing: store, resourceVersion counter, watch history, uid generator.

The property test drives random valid and invalid calls through every verb
(create, update, status update, the four patch types, delete,
deletecollection, and raw HTTP requests through the REST layer) against a
server with the snapshot guard off (``FAKEAPI_CHECK_SNAPSHOTS=0``, as a user
runs it), including values JSON cannot hold, nesting past the bound, and a
listener that fails after a write is committed (a 500). After each call: a
call answered with a status of 400 or more left the state exactly as it was,
a call that succeeded left only JSON-encodable objects, and nothing raised
anything but an ``ApiError``.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fakeapi.http.rest import Request, RestAPI
from fakeapi.machinery.errors import ApiError
from fakeapi.server.apiserver import APIServer
from tests.support import WIDGET_AV, widget_crd

NS = "ns"
#: Sequences of calls tried (``FAKEAPI_PROPERTY_EXAMPLES`` sets another count for a longer run).
EXAMPLES = int(os.environ.get("FAKEAPI_PROPERTY_EXAMPLES", "200"))
NAMES = ["a", "a", "b", "c", "Bad_Name", ""]

_BAD_VALUES: list[Any] = [float("nan"), float("inf"), -float("inf"), {1, 2}, b"x", 1j, Decimal("1.5"),
                          datetime(2024, 1, 1), "\ud800", "a\udfffb", (1, 2), object()]


def nested(depth: int) -> Any:
    """A value ``depth`` containers deep."""
    v: Any = "leaf"
    for i in range(depth):
        v = {"k": v} if i % 2 else [v]
    return v


good_scalars = st.one_of(st.text(max_size=6), st.integers(-10**6, 10**6), st.booleans(), st.none(),
                         st.floats(allow_nan=False, allow_infinity=False, width=32))
scalars = st.one_of(good_scalars, good_scalars, good_scalars, st.sampled_from(_BAD_VALUES))
values = st.one_of(
    st.recursive(scalars, lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=4), children, max_size=3)), max_leaves=8),
    st.integers(95, 105).map(nested),
    st.just({1: "non-string key"}),
)

kinds = st.sampled_from(["ConfigMap", "Widget"])
names = st.sampled_from(NAMES)
selectors = st.sampled_from([None, "app=x", "boom=true", "app in (x,y)", "x in (", "!!", "app"])

ops = st.one_of(
    st.tuples(st.just("create"), kinds, names, values, st.booleans()),
    st.tuples(st.just("update"), kinds, names, values, st.booleans()),
    st.tuples(st.just("status"), st.just("Widget"), names, values, st.booleans()),
    st.tuples(st.just("patch"), kinds, names, values, st.sampled_from(["merge", "json", "strategic", "apply"])),
    st.tuples(st.just("delete"), kinds, names),
    st.tuples(st.just("deletecollection"), kinds, selectors),
    st.tuples(st.just("rest"), st.sampled_from(["POST", "PUT", "PATCH", "DELETE"]), names,
              st.sampled_from(["application/json", "application/yaml", "application/merge-patch+json",
                               "application/apply-patch+yaml", "text/plain", ""]),
              st.sampled_from([
                  b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"x":"\\ud800"}}',
                  b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"},"data":{"x":"y"}}',
                  b'{"data":{"x":"z"}}',
                  b"[" * 5000 + b"]" * 5000,
                  b'{"metadata":{"labels":{"boom":"true"}}}',
                  b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {x: 2024-01-01T00:00:00Z}\n",
                  b"a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + b"".join(
                      b"a%d: &a%d [" % (i, i) + b", ".join([b"*a%d" % (i - 1)] * 9) + b"]\n" for i in range(1, 9)),
                  b"\xff\xfe not utf-8",
                  b"",
              ])),
)


def _widget(name: str, value: Any, boom: bool) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": NS, "labels": {"app": "x"}}
    if boom:
        meta["labels"]["boom"] = "true"
    return {"apiVersion": WIDGET_AV, "kind": "Widget", "metadata": meta,
            "spec": {"replicas": 1, "extra": {"v": value}}}


def _configmap(name: str, value: Any, boom: bool) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": NS, "labels": {"app": "x"}}
    if boom:
        meta["labels"]["boom"] = "true"
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": value}}


def body(kind: str, name: str, value: Any, boom: bool) -> dict[str, Any]:
    """A create/update body of ``kind`` carrying ``value`` (a Widget keeps it under a preserve-unknown field)."""
    return (_widget if kind == "Widget" else _configmap)(name, value, boom)


def state(api: APIServer) -> Any:
    """Everything a rejected request must leave as it was: entries (identity, bytes, rv), the counter,
    every watch log (identity of its events, offset, trim point), the uid generator, the kinds."""
    tables = {}
    for key, table in api.store.tables.items():
        if table.entries:
            tables[key] = [(k, id(table.entries[k]), table.entries[k].rv,
                            json.dumps(table.entries[k].obj, sort_keys=True)) for k in table.keys]
    logs = {key: (log.offset, log.trimmed_rv, tuple(id(e) for e in log.events))
            for key, log in api._logs.items() if log.end}  # (a log is made on first use: an empty one holds nothing)
    return (tables, api._rv, api.resource_version, logs, api._rng.getstate(),
            tuple((k.api_version, k.kind) for k in api.kinds.all()), dict(api.store.by_uid))


def fresh_server() -> APIServer:
    """A server as a user runs it (snapshot guard off), with namespace ns, the Widget CRD and a listener
    that fails (after the write is committed) for objects labelled ``boom=true``."""
    api = APIServer()
    assert api.snapshot_guard is None
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    api.register_crd(widget_crd())

    def listener(etype: str, kind: Any, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if (obj["metadata"].get("labels") or {}).get("boom") == "true":
            raise RuntimeError("listener failed after the commit")

    api.add_listener(listener)
    for name in ("a", "b"):  # (objects for updates, patches and deletes to find)
        api.create(_configmap(name, "v", False))
        api.create(_widget(name, {"x": 1}, False))
    return api


def call(api: APIServer, rest: RestAPI, op: tuple[Any, ...]) -> int:
    """Run one operation; its status code (ApiError codes for failures)."""
    verb = op[0]
    ref = {"ConfigMap": "ConfigMap", "Widget": "example.com/v1/Widget"}
    try:
        if verb == "create":
            api.create(body(op[1], op[2], op[3], op[4]))
        elif verb in ("update", "status"):
            current = api._table(api.resolve_kind(ref[op[1]])).get(NS, op[2])
            obj = body(op[1], op[2], op[3], op[4])
            if current is not None and op[4]:
                obj["metadata"]["resourceVersion"] = current.obj["metadata"]["resourceVersion"]
            if verb == "status":
                obj["status"] = {"phase": op[3]}
            api.update(obj, subresource="status" if verb == "status" else None)
        elif verb == "patch":
            kind, name, value, ptype = op[1:]
            if ptype == "json":
                patch: Any = [{"op": "add", "path": "/metadata/annotations", "value": {"v": value}}]
            elif ptype == "apply":
                patch = body(kind, name, value, False)
            else:
                patch = {"spec": {"extra": {"v": value}}} if kind == "Widget" else {"data": {"k": value}}
            api.patch(ref[kind], name, patch, namespace=NS, patch_type=ptype, field_manager="prop")
        elif verb == "delete":
            api.delete(ref[op[1]], op[2], NS)
        elif verb == "deletecollection":
            api.delete_collection(ref[op[1]], NS, label_selector=op[2])
        else:
            method, name, ctype, raw = op[1:]
            path = f"/api/v1/namespaces/{NS}/configmaps" + (f"/{name}" if method != "POST" else "")
            headers = {"content-type": ctype} if ctype else {}
            resp = rest.handle(Request(method, path, {"fieldManager": ["prop"]}, headers, raw))
            if hasattr(resp, "watch"):
                return 200
            return int(resp.code)
    except ApiError as e:
        return e.code
    return 200


def assert_encodable(api: APIServer) -> None:
    """Everything stored encodes as UTF-8 JSON (LIST and watch would answer it)."""
    for table in api.store.tables.values():
        for e in table.entries.values():
            json.dumps(e.obj, ensure_ascii=False, allow_nan=False).encode("utf-8")


def test_a_rejected_request_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Random valid and invalid calls through every verb: a rejected one leaves the whole state as it was."""
    monkeypatch.setenv("FAKEAPI_CHECK_SNAPSHOTS", "0")
    tally: Counter[str] = Counter()

    @settings(derandomize=True, max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.lists(ops, min_size=1, max_size=10))
    def run(sequence: list[tuple[Any, ...]]) -> None:
        api = fresh_server()
        rest = RestAPI(api)
        for op in sequence:
            before = state(api)
            code = call(api, rest, op)  # (anything but an ApiError propagates and fails the test)
            tally["tries"] += 1
            if code >= 400:
                tally["rejected"] += 1
                tally[f"rejected {code}"] += 1
                assert state(api) == before, f"{op[:3]!r} answered {code} and changed the state"
            else:
                tally["accepted"] += 1
                assert_encodable(api)

    run()
    print("\natomicity property:", dict(sorted(tally.items())))
    assert tally["accepted"] > 0 and tally["rejected"] > 0
    assert tally["rejected 500"] > 0  # (failures after the commit were exercised)
    assert tally["tries"] == tally["accepted"] + tally["rejected"]
