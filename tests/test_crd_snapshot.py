"""A CRD installed from a snapshot (crdsnapshot) is what register_crd makes of the manifest.

Each test makes two servers in the same state, registers the manifest in one and installs it
from a snapshot in the other (whose template an earlier server, at another time, made), and
compares everything a client or a test can see: the stored objects byte for byte (key order
included), their managedFields as decoded, the trace, the watch events, the warnings, the
kinds served and the resourceVersion, then the same after a later write.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from support import widget_crd

from fakeapi import APIServer
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.jsonutil import fast_copy
from fakeapi.registry.apiextensions.crdsnapshot import CRDSnapshot
from reconcilers.crds import crd_manifests

CRD = "CustomResourceDefinition"


def _observed(api: APIServer, warnings: list[str]) -> dict[str, Any]:
    """Everything observable about a server's state, as text."""
    crd_kind = api.resolve_kind(CRD)
    stored = []
    managed = []
    for _, table in sorted(api.store.tables.items()):
        for key in table.keys:
            e = table.entries[key]
            stored.append(json.dumps(e.obj))
            managed.append(repr(api._stored_managed(e)))
    log = api._log(crd_kind)
    kinds = sorted(repr((k, k.namespaced, k.status_subresource, k.selectable_fields, k.short_names, k.list_kind,
                         k.crd_name, json.dumps(k.schema))) for k in api.kinds.all() if not k.builtin)
    return {"stored": stored, "managed": managed, "trace": [c.render() for c in api.trace.calls],
            "events": [(ev.rv, ev.type, json.dumps(ev.obj)) for ev in log.events[log.offset - log.offset:]],
            "warnings": warnings, "kinds": kinds, "rv": api.resource_version}


def _pair(managed_fields: bool = True) -> tuple[APIServer, APIServer]:
    a, b = (APIServer(seed=7, managed_fields=managed_fields) for _ in range(2))
    for api in (a, b):
        api.clock.advance("90s")
    return a, b


def _snapshot(manifest: dict[str, Any], managed_fields: bool = True) -> CRDSnapshot:
    """A snapshot whose template an earlier server, at another time, made."""
    snap = CRDSnapshot(fast_copy(manifest))
    first = APIServer(seed=99, managed_fields=managed_fields)
    first.clock.advance("1h")
    first.install_crd(snap)
    assert snap.template(managed_fields) is not None
    return snap


MANIFESTS = {m["spec"]["names"]["kind"]: m for m in crd_manifests()}
MANIFESTS["Widget"] = widget_crd(selectable=("spec.size",))
# (a field the CRD schema does not know: a warning, given by every install)
MANIFESTS["Widget with an unknown field"] = {**widget_crd(), "bogus": 1,
                                             "metadata": {"name": "widgets.example.com", "labels": {"a": "b"}}}


@pytest.mark.parametrize("managed_fields", [True, False])
@pytest.mark.parametrize("name", list(MANIFESTS))
def test_an_install_stores_what_register_crd_stores(name: str, managed_fields: bool) -> None:
    manifest = MANIFESTS[name]
    snap = _snapshot(manifest, managed_fields)
    a, b = _pair(managed_fields)
    ka = a.register_crd(fast_copy(manifest))
    wa = a.last_warnings
    kb = b.install_crd(snap)
    wb = b.last_warnings
    assert ka == kb
    assert _observed(b, wb) == _observed(a, wa)
    # a later write sees the same object: a label, then a schema change
    for api in (a, b):
        api.clock.advance("5s")
        cur = api.get(CRD, manifest["metadata"]["name"])
        api.patch(CRD, cur["metadata"]["name"], {"metadata": {"labels": {"x": "y"}}})
        api.update({**cur, "metadata": {**cur["metadata"], "resourceVersion": api.get(CRD, cur["metadata"]["name"])
                                        ["metadata"]["resourceVersion"]}, "spec": {**cur["spec"], "scope": cur["spec"]["scope"]}})
    assert _observed(b, b.last_warnings) == _observed(a, a.last_warnings)
    assert "Warn" not in name or wb  # (the warning case gives one)


def test_the_warning_of_an_unknown_field_is_given_by_every_install() -> None:
    snap = _snapshot(MANIFESTS["Widget with an unknown field"])
    api = APIServer()
    api.install_crd(snap)
    assert any("bogus" in w for w in api.last_warnings), api.last_warnings


def test_an_install_over_an_existing_crd_is_register_crds_update() -> None:
    manifest = MANIFESTS["Widget"]
    snap = _snapshot(manifest)
    a, b = _pair()
    for api in (a, b):
        api.register_crd(widget_crd())  # (another version of it first)
        api.clock.advance("1s")
    a.register_crd(fast_copy(manifest))
    b.install_crd(snap)
    assert _observed(b, b.last_warnings) == _observed(a, a.last_warnings)


def test_an_invalid_manifest_is_refused_as_register_crd_refuses_it() -> None:
    bad = {**widget_crd(), "metadata": {"name": "wrong.example.com"}}
    snap = CRDSnapshot(bad)
    a, b = _pair()
    with pytest.raises(ApiError) as ea:
        a.register_crd(fast_copy(bad))
    with pytest.raises(ApiError) as eb:
        b.install_crd(snap)
    assert ea.value.status == eb.value.status
    assert snap.template(True) is None
    assert _observed(b, []) == _observed(a, [])


def test_a_fault_on_the_create_is_met_as_register_crd_meets_it() -> None:
    snap = _snapshot(MANIFESTS["Widget"])
    a, b = _pair()
    rule = {"on": {"verb": "create", "kind": CRD}, "error": {"code": 500, "reason": "InternalError"}}
    for api in (a, b):
        api.faults.add(rule)
    with pytest.raises(ApiError) as ea:
        a.register_crd(fast_copy(MANIFESTS["Widget"]))
    with pytest.raises(ApiError) as eb:
        b.install_crd(snap)
    assert ea.value.status == eb.value.status
    assert _observed(b, []) == _observed(a, [])


def test_installs_share_the_template_spec_and_never_change_it() -> None:
    snap = _snapshot(MANIFESTS["EphemeralRunner"])
    tmpl = snap.template(True)
    assert tmpl is not None
    text = json.dumps(tmpl.obj)
    servers = [APIServer() for _ in range(3)]
    for api in servers:
        api.install_crd(snap)
        stored = api.get(CRD, snap.name, shared=True)
        assert stored["spec"] is tmpl.obj["spec"] and stored["metadata"] is not tmpl.obj["metadata"]
        api.check_snapshots()
    assert json.dumps(tmpl.obj) == text


def test_a_snapshot_needs_a_crd_manifest() -> None:
    with pytest.raises(ValueError, match=r"spec\.names\.kind"):
        CRDSnapshot({"metadata": {"name": "x"}})
