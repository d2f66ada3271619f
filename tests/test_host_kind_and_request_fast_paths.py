"""Two per-call savings of the host, each compared with the path it replaces on many inputs.

* ``Client._kind`` reads the registry's memo of found kinds first and falls back to
  ``APIServer.resolve_kind``: it answers as ``resolve_kind`` does (the same Kind object, or the same
  404) for kind names, plurals, short names, ``group/version/Kind`` forms, unknown names and arguments
  that are not strings (hashable or not), before and after the memo holds them.
* The event handlers make their requests with ``tuple.__new__(Request, ...)``: the same ``Request``
  (type, equality, hash, fields, text) as ``Request(namespace, name)``.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from fakeapi.host.builder import EnqueueForObject, EnqueueForOwner, Request, _new_tuple
from fakeapi.host.client import Client
from fakeapi.host.workqueue import WorkQueue
from fakeapi.machinery.errors import ApiError
from fakeapi.server.apiserver import APIServer

KIND_ARGS: list[tuple[Any, Any]] = [
    ("Pod", None), ("Pod", "v1"), ("pods", None), ("po", None), ("pod", None), ("v1/Pod", None),
    ("Deployment", "apps/v1"), ("apps/v1/Deployment", None), ("deployments", "apps/v1"), ("deploy", None),
    ("Deployment", "v1"), ("Deployment", "apps/v2"), ("Nope", None), ("", None), ("Pod", ""),
    ("ConfigMap", None), ("configmaps", "v1"), ("Namespace", None), ("ns", None),
    (5, None), (None, None), ("Pod", 5), (("Pod",), None), (["Pod"], None), ("Pod", ["v1"]), ({"k": 1}, "v1"),
]


def _outcome(f: Any, *args: Any) -> tuple[str, Any]:
    try:
        return "kind", id(f(*args))
    except ApiError as e:
        return "error", (e.code, e.message)


@pytest.mark.parametrize("warm", [False, True], ids=["cold-memo", "warm-memo"])
def test_client_kind_answers_as_resolve_kind(warm: bool) -> None:
    api = APIServer()
    client = Client(api, "c")
    args = list(KIND_ARGS)
    random.Random(0).shuffle(args)
    if warm:
        for a in args:
            _outcome(api.resolve_kind, *a)
    for kind, api_version in args:
        want = _outcome(api.resolve_kind, kind, api_version)
        assert _outcome(client._kind, kind, api_version) == want, (kind, api_version)
        assert _outcome(client._kind, kind, api_version) == want, (kind, api_version)  # (memo filled now)


def test_a_request_made_without_its_new_is_the_request() -> None:
    rng = random.Random(1)
    for _ in range(300):
        ns = rng.choice(["", "ns", "kube-system", "a/b", "日本"])
        name = "".join(rng.choice("ab-1") for _ in range(rng.randint(0, 6)))
        r, want = _new_tuple(Request, (ns, name)), Request(ns, name)
        assert type(r) is Request and r == want and hash(r) == hash(want)
        assert (r.namespace, r.name, str(r), repr(r)) == (want.namespace, want.name, str(want), repr(want))


def test_the_handlers_enqueue_requests() -> None:
    """What the handlers put in the queue is ``Request`` objects, as ``requests()`` (``Request(...)``) gives."""
    api = APIServer()
    q: WorkQueue[Request] = WorkQueue(api.clock, random.Random(0))
    pod = {"metadata": {"namespace": "ns", "name": "p", "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}]}}
    for h in (EnqueueForObject(q, (), True), EnqueueForObject(q, (), False),
              EnqueueForOwner(q, (), "apps", "ReplicaSet", True), EnqueueForOwner(q, (), "apps", "ReplicaSet", False)):
        h.on_create(pod)
        (want,) = h.requests(pod)
        assert type(want) is Request
    got = q.ready()
    assert {(type(r), r) for r in got} == {(Request, Request("ns", "p")), (Request, Request("", "p")),
                                           (Request, Request("ns", "rs")), (Request, Request("", "rs"))}
