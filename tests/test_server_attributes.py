"""A server's attributes are all set by ``APIServer.__init__``: using it adds none.

An attribute added to an instance after ``__init__`` changes the layout of its dict, and CPython's
specialised attribute reads then miss on every read of that server: a lazily made attribute
(``functools.cached_property``) once cost about 2% of an ARC lifecycle. Lazy parts are kept in
attributes ``__init__`` sets to None instead.
"""

from __future__ import annotations

from fakeapi import APIServer
from fakeapi.host.client import Client


def _cm(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": {"a": "1"}}


def test_no_verb_adds_an_attribute_to_the_server() -> None:
    api = APIServer()
    before = list(vars(api))
    api.create(_cm("a"))
    client = Client(api)
    assert client.get("ConfigMap", "a", "default")["data"] == {"a": "1"}
    api.patch("ConfigMap", "a", {"data": {"b": "2"}}, namespace="default")
    api.patch("ConfigMap", "a", {"data": {"c": "3"}}, namespace="default", patch_type="strategic")
    api.patch("ConfigMap", "a", [{"op": "add", "path": "/data/d", "value": "4"}], namespace="default",
              patch_type="json")
    api.patch("ConfigMap", "b", _cm("b"), namespace="default", patch_type="apply", field_manager="m")
    cur = api.get("ConfigMap", "a", "default")
    cur["data"]["e"] = "5"
    api.update(cur)
    api.list("ConfigMap", "default")
    api.delete("ConfigMap", "a", "default")
    api.check_snapshots()
    assert list(vars(api)) == before
