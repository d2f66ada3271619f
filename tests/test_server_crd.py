"""CRD lifecycle (issue 2, Kinds): creating a CRD serves its kind, updating changes the schema,
deleting removes the kind and its objects. Plus generateName with seeded suffixes."""

from __future__ import annotations

import copy
import re

import pytest
from support import NAME_ALPHABET, R, expect_error, make_api, widget, widget_crd, widget_schema

from fakeapi.machinery.errors import ApiError
from fakeapi.server.apiserver import APIServer
from fakeapi.server.watch import DELETED


class TestCrdLifecycle:
    def test_create_registers_the_kind(self) -> None:
        api = APIServer()
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
        expect_error(lambda: api.list("Widget", "ns"), 404, "NotFound")
        crd = api.create(widget_crd())
        assert crd["metadata"]["generation"] == 1
        conds = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
        assert conds == {"NamesAccepted": "True", "Established": "True"}
        assert crd["status"]["acceptedNames"]["kind"] == "Widget"
        assert crd["status"]["storedVersions"] == ["v1"]
        api.create(widget())
        kind = api.kinds.require("Widget")
        assert kind.group == "example.com" and kind.plural == "widgets" and kind.status_subresource
        assert kind.crd_name == "widgets.example.com"
        assert api.kinds.find("widgets") is kind and api.kinds.find("Widget", "example.com/v1") is kind

    def test_register_crd_returns_the_kind_and_is_idempotent(self) -> None:
        api = APIServer()
        k1 = api.register_crd(widget_crd())
        k2 = api.register_crd(widget_crd())
        assert k1.kind == k2.kind == "Widget"
        assert len(api.list("CustomResourceDefinition")["items"]) == 1

    def test_register_crd_again_leaves_the_manifest_alone(self) -> None:
        api = APIServer()
        manifest = widget_crd()
        before = copy.deepcopy(manifest)
        api.register_crd(manifest)
        api.register_crd(manifest)
        assert manifest == before
        assert api.get("CustomResourceDefinition", "widgets.example.com")["metadata"]["generation"] == 1
        # a changed manifest updates the CRD; the stored object shares nothing with the manifest
        manifest["spec"]["names"]["shortNames"] = ["wd"]
        api.register_crd(manifest)
        assert "resourceVersion" not in manifest["metadata"]
        manifest["spec"]["names"]["shortNames"].append("changed")
        manifest["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"].clear()
        stored = api.get("CustomResourceDefinition", "widgets.example.com")
        assert stored["metadata"]["generation"] == 2 and stored["spec"]["names"]["shortNames"] == ["wd"]
        assert stored["spec"]["versions"][0]["schema"] == before["spec"]["versions"][0]["schema"]

    def test_schema_compiled_on_first_use_and_shared(self) -> None:
        # registering records the schema; the compiled form is looked up when first needed,
        # and kinds of equal schemas (one per server) share it, and one schema object (so the
        # typed walks' types, made by schema identity, are made once for every server)
        a, b = APIServer(), APIServer()
        ka, kb = a.register_crd(widget_crd()), b.register_crd(widget_crd())
        assert "compiled" not in ka.__dict__ and "compiled" not in kb.__dict__
        assert "schema" not in ka.__dict__ and "schema" not in kb.__dict__
        a.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
        a.create(widget())
        assert "compiled" in ka.__dict__ and "compiled" not in kb.__dict__
        assert kb.compiled is ka.compiled and kb.schema is ka.schema and ka.schema == widget_schema()
        assert bool(ka.extra["typed"]) == bool(kb.extra["typed"]) and ka == kb

    def test_update_changes_the_schema(self, api: APIServer) -> None:
        api.create(widget(spec={"mode": "a"}))
        expect_error(lambda: api.create(widget("w2", spec={"mode": "c"})), 422, "Invalid")
        schema = widget_schema()
        schema["properties"]["spec"]["properties"]["mode"]["enum"] = ["a", "b", "c"]
        schema["properties"]["spec"]["properties"]["color"] = {"type": "string", "default": "red"}
        api.register_crd(widget_crd(schema=schema))
        out = api.create(widget("w2", spec={"mode": "c"}))
        assert out["spec"]["color"] == "red"
        # existing objects are defaulted on read with the new schema (stored bytes unchanged)
        assert api.get("Widget", "w1", "ns")["spec"].get("color") == "red"

    def test_update_through_the_api_toggles_status_subresource(self, api: APIServer) -> None:
        crd = api.get("CustomResourceDefinition", "widgets.example.com")
        del crd["spec"]["versions"][0]["subresources"]
        api.update(crd)
        assert not api.kinds.require("Widget").status_subresource
        api.create(widget())
        expect_error(lambda: api.patch("Widget", "w1", {"status": {"x": 1}}, namespace="ns", subresource="status"),
                     404, "NotFound", f'{R} "w1" not found')

    def test_delete_removes_the_kind_and_its_objects(self, api: APIServer) -> None:
        api.create(widget("a"))
        api.create(widget("b", finalizers=["example.com/f"]))
        w = api.watch("Widget", "ns", resource_version=str(api.resource_version))
        api.delete("CustomResourceDefinition", "widgets.example.com")
        assert [e.type for e in w.poll()] == [DELETED, DELETED]
        expect_error(lambda: api.list("Widget", "ns"), 404, "NotFound",
                     "the server could not find the requested resource")
        # a new CRD of the same name starts empty
        api.register_crd(widget_crd())
        assert api.list("Widget", "ns")["items"] == []

    def test_crd_with_a_finalizer_keeps_serving_until_removed(self, api: APIServer) -> None:
        api.create(widget())
        api.patch("CustomResourceDefinition", "widgets.example.com",
                  {"metadata": {"finalizers": ["example.com/keep"]}})
        api.delete("CustomResourceDefinition", "widgets.example.com")
        api.patch("CustomResourceDefinition", "widgets.example.com", {"metadata": {"finalizers": None}})
        expect_error(lambda: api.list("Widget", "ns"), 404, "NotFound")

    def test_cluster_scoped_crd(self) -> None:
        api = APIServer()
        api.register_crd(widget_crd(scope="Cluster"))
        out = api.create({"apiVersion": "example.com/v1", "kind": "Widget",
                          "metadata": {"name": "c1", "namespace": "ignored"}, "spec": {}})
        assert "namespace" not in out["metadata"]
        assert api.get("Widget", "c1")["metadata"]["name"] == "c1"
        assert [i["metadata"]["name"] for i in api.list("Widget")["items"]] == ["c1"]

    def test_multiple_versions(self) -> None:
        api = make_api()
        crd = widget_crd()
        v2 = copy.deepcopy(crd["spec"]["versions"][0])
        v2["name"] = "v2"
        v2["storage"] = False
        crd["spec"]["versions"].append(v2)
        api.register_crd(crd)
        api.create(widget())
        out = api.get("Widget", "w1", "ns", api_version="example.com/v2")
        assert out["apiVersion"] == "example.com/v2"

    def test_a_resource_resolves_to_its_first_version_until_the_kinds_change(self) -> None:
        api = make_api()
        crd = widget_crd()
        v2 = copy.deepcopy(crd["spec"]["versions"][0])
        v2["name"], v2["storage"] = "v2", False
        crd["spec"]["versions"].append(v2)
        api.register_crd(crd)
        assert api.kinds.by_group_plural("example.com", "widgets") is api.kinds.find("Widget", "example.com/v1")
        assert api.kinds.by_group_plural("example.com", "gadgets") is None
        api.delete("CustomResourceDefinition", "widgets.example.com")
        api.gc.run()
        assert api.kinds.by_group_plural("example.com", "widgets") is None  # (the answer is not kept)
        assert api.kinds.by_group_plural("", "pods") is api.kinds.find("Pod", "v1")

    def test_schemaless_crd_preserves_everything(self) -> None:
        api = APIServer()
        crd = widget_crd()
        del crd["spec"]["versions"][0]["schema"]
        api.register_crd(crd)
        out = api.create({"apiVersion": "example.com/v1", "kind": "Widget",
                          "metadata": {"name": "w", "namespace": "default"}, "spec": {"any": {"thing": [1]}}})
        assert out["spec"] == {"any": {"thing": [1]}}


CRD_UPDATES = [
    ("scope", lambda spec: spec.update(scope="Cluster"), 'spec.scope: Invalid value: "Cluster": field is immutable'),
    ("group", lambda spec: spec.update(group="other.example.com"),
     'spec.group: Invalid value: "other.example.com": field is immutable'),
    ("kind", lambda spec: spec["names"].update(kind="Gadget"), 'spec.names.kind: Invalid value: "Gadget": field is immutable'),
    ("plural", lambda spec: spec["names"].update(plural="gadgets"),
     'spec.names.plural: Invalid value: "gadgets": field is immutable'),
    ("short names", lambda spec: spec["names"].update(shortNames=["wd"]), None),
]


@pytest.mark.parametrize(("what", "change", "error"), CRD_UPDATES, ids=[c[0] for c in CRD_UPDATES])
def test_what_an_established_crd_update_may_change(what: str, change: object, error: str | None) -> None:
    """validateCustomResourceDefinitionSpecUpdate: group and plural never change; scope and kind not
    once the CRD is Established (here at once). The name is not checked against the names again."""
    api = make_api()
    crd = api.get("CustomResourceDefinition", "widgets.example.com")
    assert callable(change)
    change(crd["spec"])
    if error is None:
        api.update(crd)
        return
    with pytest.raises(ApiError) as err:
        api.update(crd)
    assert err.value.code == 422
    assert err.value.message == f'CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: {error}'
    assert api.kinds.require("Widget").namespaced


class TestGenerateName:
    def test_seeded_and_deterministic(self) -> None:
        def names(seed: int) -> list[str]:
            api = make_api(seed=seed)
            return [api.create(widget("", generateName="w-"))["metadata"]["name"] for _ in range(5)]

        assert names(1) == names(1)
        assert names(1) != names(2)
        for n in names(3):
            assert re.fullmatch(rf"w-[{NAME_ALPHABET}]{{5}}", n)

    def test_name_wins_over_generate_name(self, api: APIServer) -> None:
        out = api.create(widget("fixed", generateName="gen-"))
        assert out["metadata"]["name"] == "fixed" and out["metadata"]["generateName"] == "gen-"

    def test_collisions_are_retried(self, api: APIServer, monkeypatch: pytest.MonkeyPatch) -> None:
        for n in ("web-aaaaa", "web-bbbbb", "web-ccccc"):
            api.create(widget(n))
        queue = iter(["web-aaaaa", "web-bbbbb", "web-ccccc", "web-ddddd"])
        monkeypatch.setattr(api, "_generate_name", lambda base: next(queue))
        out = api.create(widget("", generateName="web-"))
        assert out["metadata"]["name"] == "web-ddddd"

    def test_eight_attempts_then_already_exists(self, api: APIServer, monkeypatch: pytest.MonkeyPatch) -> None:
        taken = [f"web-{c * 5}" for c in "bcdfghjk"]
        for n in taken:
            api.create(widget(n))
        queue = iter([*taken, "web-zzzzz"])
        monkeypatch.setattr(api, "_generate_name", lambda base: next(queue))
        before = api.resource_version
        err = expect_error(lambda: api.create(widget("", generateName="web-")), 409, "AlreadyExists")
        assert err.details["retryAfterSeconds"] == 1 and err.details["name"] == "web-kkkkk"
        assert api.resource_version == before
        assert next(queue) == "web-zzzzz"

    def test_generated_name_for_a_configmap(self, api: APIServer) -> None:
        out = api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "cfg-",
                                                                                 "namespace": "ns"}})
        assert re.fullmatch(rf"cfg-[{NAME_ALPHABET}]{{5}}", out["metadata"]["name"])


def test_register_crd_rejects_other_objects() -> None:
    api = APIServer()
    expect_error(lambda: api.register_crd({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}),
                 400, "BadRequest")
    expect_error(lambda: api.register_crd({"kind": "CustomResourceDefinition"}), 400, "BadRequest")
    expect_error(lambda: api.register_crd(widget_crd(scope="Nowhere")), 422, "Invalid")
    assert api.list("CustomResourceDefinition")["items"] == []
