"""A JSON Patch's values checked at their paths (issue 22) answer as decoding the patched object does."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi import APIServer
from fakeapi.codec.gounmarshal import unmarshal_error
from fakeapi.machinery import patches
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.patcherrors import PatchError
from fakeapi.server import decoding

_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 80}]}]}}

_OPS: list[list[dict[str, Any]]] = [
    [{"op": "add", "path": "/metadata/labels/i", "value": "j"}],
    [{"op": "add", "path": "/metadata/labels/i", "value": 1}],
    [{"op": "replace", "path": "/metadata/labels", "value": {"x": True}}],
    [{"op": "add", "path": "/spec/containers/0/ports/0/containerPort", "value": "80"}],
    [{"op": "add", "path": "/spec/containers/0/ports/-", "value": {"containerPort": 1.5}}],
    [{"op": "add", "path": "/spec/containers/-", "value": {"name": "d", "image": 3}}],
    [{"op": "replace", "path": "/spec/activeDeadlineSeconds", "value": 2**40}],
    [{"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 2**70}],
    [{"op": "add", "path": "/metadata/creationTimestamp", "value": "yesterday"}],
    [{"op": "add", "path": "/spec/containers/0/resources", "value": {"limits": {"cpu": "lots"}}}],
    [{"op": "add", "path": "/spec/unknownField", "value": {"x": 1}}],
    [{"op": "add", "path": "/spec/containers/0/ports/0/hostPort", "value": None}],
    [{"op": "test", "path": "/metadata/name", "value": "p"}, {"op": "remove", "path": "/metadata/labels/a"}],
    [{"op": "copy", "from": "/metadata/name", "path": "/spec/activeDeadlineSeconds"}],
    [{"op": "move", "from": "/metadata/labels", "path": "/spec/nodeSelector"}],
    [{"op": "add", "path": "/metadata/labels/a~1b", "value": "c"}],
    [{"op": "add", "path": "/spec/containers/0/ports/-1", "value": {"containerPort": "x"}}],
    [{"op": "replace", "path": "", "value": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": 1}}],
]


_REFUSED = object()


def _answer(api: APIServer, ops: list[dict[str, Any]]) -> Any:
    try:
        return api.patch("Pod", "p", ops, namespace="default", patch_type="json")
    except ApiError as e:
        return (e.code, e.message)


@pytest.mark.parametrize("ops", _OPS, ids=[str(i) for i in range(len(_OPS))])
def test_a_json_patch_is_refused_as_decoding_its_result_would(ops: list[dict[str, Any]],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    api = APIServer()
    api.create(_POD)
    k = api.resolve_kind("Pod")
    stored = api._table(k).get("default", "p")
    assert stored is not None
    if decoding._json_patch_values_decode(ops, k.go_type):  # (settled without the patched object: it decodes)
        try:
            result = patches.apply_json_patch(stored.obj, ops)
        except PatchError:
            result = _REFUSED  # (the patch itself fails: nothing to decode)
        if result is not _REFUSED:
            assert unmarshal_error(result, k.go_type, sorted_keys=True) is None
    got = _answer(api, ops)
    # the reference: the same patch with the shortcut off (every patched object decoded)
    monkeypatch.setattr(decoding, "_json_patch_values_decode", lambda ops, t: False)
    again = APIServer()
    again.create(_POD)
    assert got == _answer(again, ops)
