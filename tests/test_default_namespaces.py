"""The default Namespaces a server starts with: stored from committed templates, exactly as the creates store them.

``APIServer()`` creates ``default``, ``kube-system``, ``kube-public`` and ``kube-node-lease``. Every server
stores them from the templates committed in ``fakeapi/server/default_namespaces.json``
(``APIServer._create_default_namespaces``, issue 22), which ``python -m fakeapi.server.namespacetemplates``
writes from four creates. These tests check the file against the creates, then build a server both
ways (from the templates, and by the four public creates), with the same clock, seed and settings, and
compare everything a client or the harness can see: every stored object (key order included), its
resourceVersion and decoded managedFields, the uid index, the trace, the watch logs, the generator's
state, the counters, the garbage collector's work and the snapshot guard's fingerprints; then the same
writes on both give the same answers.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest

from fakeapi.codec import snapshots
from fakeapi.machinery.errors import ApiError
from fakeapi.server import apiserver, namespacetemplates
from fakeapi.server.apiserver import DEFAULT_NAMESPACES, APIServer
from fakeapi.server.clock import Clock


def _plain(value: Any) -> Any:
    """A comparable form of server state: dict key order kept, sets sorted, dataclasses by field."""
    if isinstance(value, dict):
        return [(_plain(k), _plain(v)) for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(repr(_plain(v)) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, [(f.name, _plain(getattr(value, f.name))) for f in dataclasses.fields(value)
                                       if not f.name.startswith("_")])
    return value


def state(api: APIServer) -> dict[str, Any]:
    """Everything observable about a server's state after its construction."""
    tables = {}
    for (group, plural), table in api.store.tables.items():
        tables[f"{group}/{plural}"] = [
            (key, json.dumps(e.obj), e.rv, e.uid, e.namespace, e.name, _plain(e.labels), e.owner_uids,
             _plain(e.managed), e.obj_is_stored)
            for key, e in table.entries.items()
        ]
        tables[f"{group}/{plural} keys"] = list(table.keys)
        tables[f"{group}/{plural} by_label"] = _plain(table.by_label)
        tables[f"{group}/{plural} by_name"] = _plain(table.by_name)
    logs = {f"{g}/{p}": [(ev.rv, ev.type, ev.namespace, json.dumps(ev.obj), json.dumps(ev.old)) for ev in log.events]
            for (g, p), log in api._logs.items()}
    guard = None
    if api.snapshot_guard is not None:
        guard = {k: [(json.dumps(obj), fp) for obj, fp in hist] for k, hist in api.snapshot_guard._history.items()}
    rng = api._rng
    return {
        "tables": tables,
        "by_uid": _plain(api.store.by_uid),
        "dependents": _plain(api.store.dependents),
        "calls": [_plain(c) for c in api.trace.calls],
        "entries": len(api.trace.entries),
        "logs": logs,
        "rv": (api._rv, api.resource_version),
        "rng": (rng.getstate(), getattr(rng, "drawn", None)),
        "gc": _plain(api.gc.work) if api.gc is not None else None,  # type: ignore[attr-defined]
        "guard": guard,
        "warnings": api.last_warnings,
        "decoded": len(api.decoded) if "decoded" in vars(api) else None,
    }


@pytest.fixture
def no_templates(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[bool, Any]]:
    """A process with no template loaded yet (the next server reads the file)."""
    fresh: dict[bool, Any] = {}
    monkeypatch.setattr(apiserver, "_NAMESPACE_TEMPLATES", fresh)
    monkeypatch.setattr(apiserver, "_NAMESPACE_TEMPLATES_CHECKED", set())
    yield fresh


def _both(options: dict[str, Any], start: str | None) -> tuple[APIServer, APIServer, APIServer]:
    """(the first server, which loads the templates; one made by the four public creates; a later server)."""
    def clock() -> Clock:
        return Clock(start) if start else Clock()

    first = APIServer(clock=clock(), **options)
    assert apiserver._NAMESPACE_TEMPLATES.get(options.get("managed_fields", True)) is not None
    by_creates = APIServer(clock=clock(), default_namespaces=False, **options)
    for ns in DEFAULT_NAMESPACES:  # (the public create, as a client would make it)
        by_creates.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, actor="system")
    from_template = APIServer(clock=clock(), **options)
    return first, by_creates, from_template


def test_the_committed_templates_are_what_the_creates_store() -> None:
    """``default_namespaces.json`` is what ``python -m fakeapi.server.namespacetemplates`` writes now
    (run it after changing what a Namespace create stores)."""
    with open(apiserver.NAMESPACE_TEMPLATES_FILE, encoding="utf-8") as f:
        committed = f.read()
    assert committed == namespacetemplates.render(), "stale: run python -m fakeapi.server.namespacetemplates"


@pytest.mark.parametrize("options", [
    {},
    {"seed": 7},
    {"managed_fields": False},
    {"garbage_collector": False, "seed": 3},
    {"watch_history": 2},
])
@pytest.mark.parametrize("start", [None, "2031-05-06T07:08:09Z"])
@pytest.mark.parametrize("guard", ["1", "0"])
def test_template_server_equals_created_server(no_templates: dict[bool, Any], monkeypatch: pytest.MonkeyPatch,
                                               options: dict[str, Any], start: str | None, guard: str) -> None:
    monkeypatch.setenv("FAKEAPI_CHECK_SNAPSHOTS", guard)
    first, by_creates, from_template = _both(options, start)
    want = state(by_creates)
    assert [c.name for c in by_creates.trace.calls] == list(DEFAULT_NAMESPACES)
    assert state(first) == want
    assert state(from_template) == want


def test_templates_loaded_without_the_guard_are_checked_once_with_it(
        no_templates: dict[bool, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKEAPI_CHECK_SNAPSHOTS", "0")
    APIServer()  # (loads the templates without a guard of its own)
    assert not apiserver._NAMESPACE_TEMPLATES_CHECKED
    monkeypatch.setenv("FAKEAPI_CHECK_SNAPSHOTS", "1")
    checked = []
    real = snapshots.SnapshotGuard.stored

    def stored(self: snapshots.SnapshotGuard, *args: Any) -> Any:
        checked.append(args[1])
        return real(self, *args)

    monkeypatch.setattr(snapshots.SnapshotGuard, "stored", stored)
    APIServer()
    APIServer()
    assert True in apiserver._NAMESPACE_TEMPLATES_CHECKED
    assert checked.count("default") == 3  # (the templates once, then each server's own store of it)


def test_a_mutated_template_is_caught_by_the_guard(no_templates: dict[bool, Any],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The templates' Go form is checked once: a template that is not as Go encodes it fails that check."""
    monkeypatch.setenv("FAKEAPI_CHECK_SNAPSHOTS", "0")
    APIServer()
    no_templates[True][0].obj["spec"]["finalizers"] = [5]
    monkeypatch.setenv("FAKEAPI_CHECK_SNAPSHOTS", "1")
    with pytest.raises(Exception, match="cannot unmarshal number into Go value of type string"):
        APIServer()


def test_writes_after_a_template_start_answer_as_after_creates(no_templates: dict[bool, Any],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKEAPI_CHECK_SNAPSHOTS", "1")
    _, by_creates, from_template = _both({"seed": 11}, None)
    answers = []
    for api in (by_creates, from_template):
        got = [
            api.patch("Namespace", "default", {"metadata": {"labels": {"team": "a"}}}, api_version="v1",
                      patch_type="merge", actor="user"),
            api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "kube-public"}}),
            api.patch("Namespace", "kube-system", {"apiVersion": "v1", "kind": "Namespace",
                                                   "metadata": {"name": "kube-system", "labels": {"x": "y"}}},
                      patch_type="apply", field_manager="tool"),
            api.list("Namespace"),
        ]
        api.delete("Namespace", "kube-node-lease", None, actor="user")
        api.check_snapshots()
        answers.append((json.dumps(got), state(api)))
    assert answers[0] == answers[1]


@pytest.mark.parametrize("managed_fields", [True, False])
def test_the_templates_pass_the_namespace_schema(no_templates: dict[bool, Any], managed_fields: bool) -> None:
    """No default Namespace is validated when a server starts: what the templates hold passes the Namespace
    schema's check, and a Namespace the schema rejects is still refused."""
    api = APIServer(managed_fields=managed_fields)
    kind = api.kinds.require("Namespace", "v1")
    assert kind.compiled is not None
    for ns in DEFAULT_NAMESPACES:
        stored = api.get("Namespace", ns)
        assert stored["spec"] == {"finalizers": ["kubernetes"]} and stored["status"] == {"phase": "Active"}
        assert kind.compiled.validate(stored) == []
        assert kind.compiled.validate({**stored, "spec": {"finalizers": [5]}}) != []  # (the check is a real one)
    with pytest.raises(ApiError) as bad:  # (a client's Namespace is checked as before)
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}, "spec": {"finalizers": "k"}})
    assert bad.value.code == 400 and "spec.finalizers" in str(bad.value)
