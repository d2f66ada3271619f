"""The store's indexes (sorted keys, labels, names) answer lists exactly as a scan of every object does.

A list reads only its candidates: a namespace's run of keys, the smallest label index set, the
name index for ``metadata.name=``, a page from its continue key. These tests compare each
answer with a brute-force filter of every stored object in key order, over namespaces whose
names are prefixes of each other (``a``, ``a-b``, ``a0``, ``ab``), pages of every size, and
selectors mixing indexed and unindexed terms.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from fakeapi import APIServer
from fakeapi.machinery.selectors import field_value, parse_field_selector, parse_label_selector

NAMESPACES = ["a", "a-b", "a0", "ab", "b"]


@pytest.fixture(scope="module")
def api() -> APIServer:
    rng = random.Random(5)
    a = APIServer(managed_fields=False, garbage_collector=False)
    for ns in NAMESPACES:
        a.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    names = [f"cm-{i}" for i in range(40)]
    order = [(ns, n) for ns in NAMESPACES for n in names if rng.random() < 0.6]
    rng.shuffle(order)  # (inserted out of key order)
    for ns, n in order:
        labels = {"app": rng.choice(["web", "db"]), "tier": rng.choice(["1", "2", "3"])}
        if rng.random() < 0.3:
            labels["rare"] = "yes"
        a.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n, "namespace": ns, "labels": labels}})
    # and some gone again (the indexes forget them)
    for ns, n in order[::7]:
        a.delete("ConfigMap", n, ns)
    return a


def _scan(api: APIServer, namespace: str, label: str, field: str) -> list[str]:
    """Keys of every stored ConfigMap that matches, in key order, read without any index."""
    lsel, fsel = parse_label_selector(label), parse_field_selector(field)
    table = api.store.table("", "configmaps")
    out = []
    for key in sorted(table.entries, key=lambda k: k.encode()):
        obj = table.entries[key].obj
        if namespace and obj["metadata"]["namespace"] != namespace:
            continue
        if lsel.matches(obj["metadata"].get("labels") or {}) and fsel.matches(lambda p, o=obj: field_value(o, p)):
            out.append(key)
    return out


def _key(obj: dict[str, Any]) -> str:
    return f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"


QUERIES = [
    ("", "", ""), ("a", "", ""), ("a-b", "", ""), ("a0", "", ""), ("zz", "", ""),
    ("", "app=web", ""), ("a", "app=web,tier in (1,3)", ""), ("", "rare=yes,app=db", ""), ("", "app!=web", ""),
    ("", "tier notin (2),rare", ""), ("", "app=none", ""),
    ("", "", "metadata.name=cm-3"), ("a", "", "metadata.name=cm-3"), ("", "app=web", "metadata.name=cm-7"),
    ("", "", "metadata.namespace=a"), ("", "", "metadata.namespace=a-b,metadata.name=cm-1"),
    ("ab", "", "metadata.namespace=a"), ("", "", "metadata.name!=cm-1"), ("", "", "metadata.name=cm-1,metadata.name=cm-2"),
    ("", "rare=yes", "metadata.namespace=ab"),
]


@pytest.mark.parametrize(("namespace", "label", "field"), QUERIES)
def test_a_list_is_what_a_scan_finds(api: APIServer, namespace: str, label: str, field: str) -> None:
    want = _scan(api, namespace, label, field)
    got = api.list("ConfigMap", namespace or None, label_selector=label, field_selector=field)["items"]
    assert [_key(o) for o in got] == want


@pytest.mark.parametrize(("namespace", "label", "field"), QUERIES[:12])
@pytest.mark.parametrize("limit", [1, 2, 7, 1000])
def test_paging_through_a_list_finds_what_a_scan_finds(api: APIServer, namespace: str, label: str, field: str,
                                                        limit: int) -> None:
    want = _scan(api, namespace, label, field)
    got: list[str] = []
    token = None
    while True:
        out = api.list("ConfigMap", namespace or None, label_selector=label, field_selector=field, limit=limit,
                       continue_=token)
        got += [_key(o) for o in out["items"]]
        token = out["metadata"].get("continue")
        if not label and not field and token:  # (no selector: the count of what is left is exact)
            assert out["metadata"]["remainingItemCount"] == len(want) - len(got)
        if not token:
            break
    assert got == want


@pytest.mark.parametrize(("namespace", "label", "field"), QUERIES)
def test_a_watch_starts_with_what_a_scan_finds(api: APIServer, namespace: str, label: str, field: str) -> None:
    want = _scan(api, namespace, label, field)
    with api.watch("ConfigMap", namespace or None, label_selector=label, field_selector=field) as w:
        got = [_key(ev.object) for ev in w.poll()]
    assert got == want


def test_the_key_index_follows_creates_and_deletes() -> None:
    api = APIServer(managed_fields=False, garbage_collector=False)
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}})
    for name in ["c", "a", "b"]:
        api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "n"}})
    api.delete("ConfigMap", "b", "n")
    table = api.store.table("", "configmaps")
    assert list(table.keys) == ["n/a", "n/c"]
    assert table.by_name == {"a": {"n/a"}, "c": {"n/c"}}
    assert api.list("ConfigMap", field_selector="metadata.name=b")["items"] == []
