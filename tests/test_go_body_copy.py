"""A body a Go client marshals is copied, not walked, by the decoder when the schema prunes nothing of
its Go type (issue 22: ``Pipeline._decode``'s ``go_body``): the plain copy equals the walk's.

For each built-in kind, a few documents and every one-value change of them are Go-marshalled
(``go_roundtrip``: what a Go client sends); wherever :meth:`CompiledSchema.prunes_nothing` says the
walk leaves such a body as it is, the walk must give the plain copy and no warning. The places the
Go model keeps free-form while the schema types them (an ObjectMeta's managedFields inside a
template) are walked, and a server answers a ``go_encoded`` create there as it answers any create.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from support import one_value_mutations

from fakeapi.codec.gomodel import GoDecodeError, go_roundtrip
from fakeapi.machinery.jsonutil import copy_normalized, freeze_json
from fakeapi.schema.structural import go_body_plan
from fakeapi.server.apiserver import APIServer

STAND_INS: tuple[Any, ...] = ("s", 3, True, 2.0, None, {}, [], {"zz": 1}, [{"zz": 1}])
TEMPLATE_META = {"labels": {"a": "b"}, "managedFields": [{"manager": "m", "operation": "Update"}]}
DOCS: dict[str, dict[str, Any]] = {
    "Pod": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}],
                                     "resources": {"limits": {"cpu": "1"}}}],
                     "volumes": [{"name": "v", "ephemeral": {"volumeClaimTemplate": {
                         "metadata": TEMPLATE_META, "spec": {"accessModes": ["ReadWriteOnce"]}}}}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}},
    "Secret": {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"},
               "type": "Opaque", "data": {"k": "dg=="}, "stringData": {"x": "y"}},
    "ConfigMap": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"},
                  "data": {"k": "v"}},
    "Deployment": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
                   "spec": {"replicas": 2, "selector": {"matchLabels": {"a": "b"}},
                            "template": {"metadata": TEMPLATE_META,
                                         "spec": {"containers": [{"name": "c", "image": "i"}]}}}},
    "Service": {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "default"},
                "spec": {"ports": [{"port": 80, "targetPort": "http"}], "selector": {"a": "b"}}},
}

API = APIServer()


def _bodies(kind: str) -> list[dict[str, Any]]:
    t = API.resolve_kind(kind).go_type
    out = []
    for doc in [DOCS[kind], *one_value_mutations(DOCS[kind], STAND_INS)]:
        try:
            body = go_roundtrip(doc, t)
        except GoDecodeError:
            continue
        if isinstance(body, dict) and isinstance(body.get("metadata"), dict):
            out.append(body)
    return out


@pytest.mark.parametrize("kind", sorted(DOCS))
def test_the_plain_copy_equals_the_walk_wherever_it_is_taken(kind: str) -> None:
    k = API.resolve_kind(kind)
    assert k.compiled is not None
    taken = walked = 0
    for body in _bodies(kind):
        before = copy.deepcopy(body)
        want, warnings = k.compiled.prepare_copy(body, copy_normalized(body["metadata"]), prune_metadata=False)
        if k.compiled.prunes_nothing(body, k.go_type):
            taken += 1
            assert warnings == []
            copied = {key: copy_normalized(v) for key, v in body.items()}
            assert freeze_json(want) == freeze_json(copied)
        else:
            walked += 1
        assert body == before
    assert taken  # (and the documents with content where the model is free-form are walked)
    if kind in ("Pod", "Deployment"):
        assert walked


def test_a_template_s_managed_fields_are_walked() -> None:
    """The Go model keeps an ObjectMeta's managedFields as they come; the schema prunes their unknown keys."""
    k = API.resolve_kind("Pod")
    assert go_body_plan(k.compiled._prune_schema, k.go_type) not in (None, True)
    body = go_roundtrip(copy.deepcopy(DOCS["Pod"]), k.go_type)
    body["spec"]["volumes"][0]["ephemeral"]["volumeClaimTemplate"]["metadata"]["managedFields"][0]["zz"] = 1
    assert not k.compiled.prunes_nothing(body, k.go_type)
    body["spec"]["volumes"][0]["ephemeral"]["volumeClaimTemplate"]["metadata"].pop("managedFields")
    assert k.compiled.prunes_nothing(body, k.go_type)


def test_kinds_whose_types_the_schema_covers() -> None:
    for kind in ("Secret", "ConfigMap", "Service", "Namespace"):
        k = API.resolve_kind(kind)
        assert go_body_plan(k.compiled._prune_schema, k.go_type) is True, kind
    crd = API.resolve_kind("CustomResourceDefinition")
    assert not crd.compiled.prunes_nothing(go_roundtrip({"spec": {}}, crd.go_type), crd.go_type)


@pytest.mark.parametrize("guard", ["1", "0"])
@pytest.mark.parametrize("extra", [{}, {"zz": 1}], ids=["known", "unknown-in-template-managed-fields"])
def test_a_go_encoded_create_answers_as_any_create(monkeypatch: pytest.MonkeyPatch, guard: str,
                                                   extra: dict[str, Any]) -> None:
    monkeypatch.setenv("FAKEAPI_CHECK_SNAPSHOTS", guard)
    answers = []
    for go_encoded in (True, False):
        api = APIServer()
        body = go_roundtrip(copy.deepcopy(DOCS["Pod"]), api.resolve_kind("Pod").go_type)
        body["spec"]["volumes"][0]["ephemeral"]["volumeClaimTemplate"]["metadata"]["managedFields"][0].update(extra)
        out = api.create(body, go_encoded=go_encoded)
        answers.append((out, api.last_warnings))
    assert answers[0] == answers[1]
    assert bool(answers[0][1]) == bool(extra)
