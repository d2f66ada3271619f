"""fakeapi used as another project would use it: only names exported by ``fakeapi``.

A small custom kind is registered from the CRD manifest the project already
has (YAML), then written, read, watched and deleted through the public API,
as a controller's test suite would.
"""

from __future__ import annotations

import pytest
import yaml

import fakeapi
from fakeapi import (
    ADDED,
    DELETED,
    MODIFIED,
    ApiError,
    APIServer,
    Client,
    Clock,
    ControllerCrash,
    FaultRule,
    Watch,
    WatchEvent,
    go_type_from_structural,
    is_conflict,
    is_invalid,
    is_not_found,
    semantic_equal,
)

CRD_YAML = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: backups.demo.io
spec:
  group: demo.io
  scope: Namespaced
  names: {kind: Backup, plural: backups, singular: backup, listKind: BackupList, shortNames: [bk]}
  versions:
    - name: v1alpha1
      served: true
      storage: true
      subresources: {status: {}}
      selectableFields: [{jsonPath: .spec.schedule}]
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [schedule]
              properties:
                schedule: {type: string}
                retain: {type: integer, default: 7, minimum: 1}
                targets: {type: array, items: {type: string}}
            status:
              type: object
              properties:
                phase: {type: string, enum: [Pending, Done]}
                lastRun: {type: string, format: date-time}
"""


def _backup(name: str, schedule: str = "@daily", **spec: object) -> dict:
    return {"apiVersion": "demo.io/v1alpha1", "kind": "Backup", "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedule": schedule, **spec}}


def test_everything_exported_resolves() -> None:
    for name in fakeapi.__all__:
        assert getattr(fakeapi, name) is not None, name


def test_custom_kind_from_a_manifest_written_and_watched() -> None:
    clock = Clock("2030-05-01T12:00:00Z")
    api = APIServer(clock=clock, seed=42)
    kind = api.register_crd(yaml.safe_load(CRD_YAML))
    assert (kind.group, kind.version, kind.kind, kind.plural) == ("demo.io", "v1alpha1", "Backup", "backups")

    watch = api.watch("Backup", "default")
    assert isinstance(watch, Watch)
    created = api.create(_backup("nightly", targets=[]))
    assert created["spec"] == {"schedule": "@daily", "retain": 7, "targets": []}
    assert created["metadata"]["creationTimestamp"] == "2030-05-01T12:00:00Z"

    ctrl = Client(api, "backup-controller")
    obj = ctrl.get("Backup", "nightly", "default")
    obj["status"] = {"phase": "Done", "lastRun": "2030-05-01T12:00:00Z"}
    done = ctrl.update_status(obj)
    assert done["status"]["phase"] == "Done"

    events = watch.poll()
    assert all(isinstance(e, WatchEvent) for e in events)
    assert [e.type for e in events] == [ADDED, MODIFIED]
    assert events[1].object["status"]["phase"] == "Done"

    listed = api.list("bk", "default", field_selector="spec.schedule=@daily")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["nightly"]

    api.delete("Backup", "nightly", "default")
    assert [e.type for e in watch.poll()] == [DELETED]
    try:
        ctrl.get("Backup", "nightly", "default")
    except ApiError as err:
        assert is_not_found(err)
    else:
        raise AssertionError("expected NotFound")


def test_errors_faults_and_semantics_through_the_public_api() -> None:
    api = APIServer()
    api.register_crd(yaml.safe_load(CRD_YAML))
    try:
        api.create(_backup("bad", retain=0))
    except ApiError as err:
        assert is_invalid(err)
        assert err.causes[0]["field"] == "spec.retain"
    stale = api.create(_backup("b1"))
    api.patch("Backup", "b1", {"spec": {"retain": 3}}, namespace="default")
    try:
        api.update(stale)
    except ApiError as err:
        assert is_conflict(err)
    api.faults.add(FaultRule(verb="create", actor="ctrl", crash="after"))
    with pytest.raises(ControllerCrash):
        Client(api, "ctrl").create(_backup("b2"))
    assert api.get("Backup", "b2", "default")["metadata"]["name"] == "b2"
    kind = api.kinds.require("Backup")
    assert kind.schema is not None
    t = go_type_from_structural(kind.schema)
    assert semantic_equal({"spec": {"targets": []}}, {"spec": {}}, t)
