"""The ``FieldsV1`` set algebra of fakeapi.machinery.fieldpath against structured-merge-diff's ``fieldpath.Set``.

A set is the ``fieldsV1`` tree of a managedFields entry: a child ``{}`` is a member
leaf, a child holding ``"."`` is a member with members under it, and a child
without ``"."`` that has children only leads to members. Every case below is
what ``sigs.k8s.io/structured-merge-diff/fieldpath`` answers for the same sets
(``Union``, ``Difference``, ``Intersection``, ``RecursiveDifference``,
``Leaves``, ``Iterate``, ``Path.String``, and the order ``FieldsV1`` is
serialized in).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from fakeapi.machinery import fieldpath as fp

FieldSet = dict[str, Any]

C = 'k:{"name":"c"}'  # a containers item
PORT = 'k:{"containerPort":80,"protocol":"TCP"}'

# ------------------------------------------------------------------ union

UNION: list[tuple[str, FieldSet, FieldSet, FieldSet]] = [
    ("member-and-child-make-member-with-child",
     {"f:a": {}}, {"f:a": {"f:b": {}}}, {"f:a": {".": {}, "f:b": {}}}),
    ("disjoint", {"f:a": {}}, {"f:b": {}}, {"f:a": {}, "f:b": {}}),
    ("non-members-stay-non-members",
     {"f:a": {"f:b": {}}}, {"f:a": {"f:c": {}}}, {"f:a": {"f:b": {}, "f:c": {}}}),
    ("member-already-there",
     {"f:a": {".": {}, "f:b": {}}}, {"f:a": {}}, {"f:a": {".": {}, "f:b": {}}}),
    ("empty-right", {"f:a": {"f:b": {}}}, {}, {"f:a": {"f:b": {}}}),
    ("empty-left", {}, {"f:a": {"f:b": {}}}, {"f:a": {"f:b": {}}}),
    ("list-items-by-key",
     {"f:containers": {C: {".": {}, "f:name": {}}}},
     {"f:containers": {C: {"f:image": {}}, 'k:{"name":"d"}': {}}},
     {"f:containers": {C: {".": {}, "f:image": {}, "f:name": {}}, 'k:{"name":"d"}': {}}}),
]


@pytest.mark.parametrize(("a", "b", "expected"), [c[1:] for c in UNION], ids=[c[0] for c in UNION])
def test_union(a: FieldSet, b: FieldSet, expected: FieldSet) -> None:
    """``Set.Union``: every path of either set; a path is a member when it is one in either."""
    before_a, before_b = copy.deepcopy(a), copy.deepcopy(b)
    assert fp.union(a, b) == expected
    assert fp.union(b, a) == expected
    assert (a, b) == (before_a, before_b)  # sets are values: the arguments are not changed


# ------------------------------------------------------------- difference

COVERS: list[tuple[str, FieldSet, FieldSet, bool]] = [
    ("a-leaf-it-holds", {"f:a": {}, "f:b": {}}, {"f:a": {}}, True),
    ("a-path-down-a-chain", {"f:m": {"f:l": {".": {}, "f:i": {}, "f:j": {}}}}, {"f:m": {"f:l": {"f:i": {}}}}, True),
    ("a-missing-leaf", {"f:m": {"f:l": {"f:i": {}}}}, {"f:m": {"f:l": {"f:k": {}}}}, False),
    ("a-member-it-only-leads-to", {"f:a": {"f:b": {}}}, {"f:a": {}}, False),
    ("a-member-with-children", {"f:a": {".": {}, "f:b": {}}}, {"f:a": {}}, True),
    ("children-of-a-leaf", {"f:a": {}}, {"f:a": {"f:b": {}}}, False),
    ("several-paths", {"f:a": {}, "f:b": {"f:c": {}}}, {"f:a": {}, "f:b": {"f:c": {}}}, True),
    ("several-paths-one-missing", {"f:a": {}, "f:b": {"f:c": {}}}, {"f:a": {}, "f:b": {"f:d": {}}}, False),
    ("the-empty-set", {"f:a": {}}, {}, True),
]


@pytest.mark.parametrize(("a", "b", "expected"), [c[1:] for c in COVERS], ids=[c[0] for c in COVERS])
def test_covers(a: FieldSet, b: FieldSet, expected: bool) -> None:
    """``covers``: every path of ``b`` is in ``a``, exactly when ``union(a, b)`` gives ``a`` itself back."""
    assert fp.covers(a, b) is expected
    assert (fp.union(a, b) is a) is expected


def test_covers_agrees_with_union_on_generated_sets() -> None:
    """Over sets generated from a fixed seed (members, members with children, paths that only lead
    to members), ``covers(a, b)`` is ``union(a, b) is a`` and holds for ``a`` against any part of it."""
    import random

    rng = random.Random(7)

    def gen(depth: int) -> FieldSet:
        out: FieldSet = {}
        for name in rng.sample("abcd", rng.randint(1, 3)):
            if depth == 0 or rng.random() < 0.4:
                out["f:" + name] = {}
            else:
                kids = gen(depth - 1)
                out["f:" + name] = {".": {}, **kids} if rng.random() < 0.5 else kids
        return fp.canonical(out)

    held = 0
    for _ in range(400):
        a, b = gen(3), gen(3)
        assert fp.covers(a, b) is (fp.union(a, b) is a)
        held += fp.covers(a, b)
        assert fp.covers(fp.union(a, b), b) and fp.covers(a, fp.intersection(a, b))
    assert 0 < held < 400  # (both answers met)


DIFFERENCE: list[tuple[str, FieldSet, FieldSet, FieldSet]] = [
    ("removing-a-member-keeps-what-is-under-it",
     {"f:a": {".": {}, "f:b": {}}}, {"f:a": {}}, {"f:a": {"f:b": {}}}),
    ("removing-the-children-keeps-the-member",
     {"f:a": {".": {}, "f:b": {}}}, {"f:a": {"f:b": {}}}, {"f:a": {}}),
    ("a-non-member-path-does-not-remove-the-member",
     {"f:a": {}}, {"f:a": {"f:b": {}}}, {"f:a": {}}),
    ("everything", {"f:a": {"f:b": {}}}, {"f:a": {"f:b": {}}}, {}),
    ("one-sibling", {"f:a": {"f:b": {}, "f:c": {}}}, {"f:a": {"f:b": {}}}, {"f:a": {"f:c": {}}}),
    ("nothing-shared", {"f:a": {}, "f:b": {}}, {"f:c": {}}, {"f:a": {}, "f:b": {}}),
    ("empty-right", {"f:a": {}}, {}, {"f:a": {}}),
    ("empty-left", {}, {"f:a": {}}, {}),
    ("list-item-field",
     {"f:containers": {C: {".": {}, "f:image": {}, "f:name": {}}}},
     {"f:containers": {C: {"f:image": {}}}},
     {"f:containers": {C: {".": {}, "f:name": {}}}}),
]


@pytest.mark.parametrize(("a", "b", "expected"), [c[1:] for c in DIFFERENCE], ids=[c[0] for c in DIFFERENCE])
def test_difference(a: FieldSet, b: FieldSet, expected: FieldSet) -> None:
    """``Set.Difference``: a member of ``b`` removes only itself, never the members under it."""
    before_a, before_b = copy.deepcopy(a), copy.deepcopy(b)
    assert fp.difference(a, b) == expected
    assert (a, b) == (before_a, before_b)


# ----------------------------------------------------------- intersection

INTERSECTION: list[tuple[str, FieldSet, FieldSet, FieldSet]] = [
    ("shared-child-only", {"f:a": {".": {}, "f:b": {}}}, {"f:a": {"f:b": {}}}, {"f:a": {"f:b": {}}}),
    ("shared-member-only", {"f:a": {".": {}, "f:b": {}}}, {"f:a": {}}, {"f:a": {}}),
    ("disjoint", {"f:a": {}}, {"f:b": {}}, {}),
    ("disjoint-under-a-common-prefix", {"f:a": {"f:b": {}}}, {"f:a": {"f:c": {}}}, {}),
    ("member-versus-non-member", {"f:a": {}}, {"f:a": {"f:b": {}}}, {}),
    ("empty", {"f:a": {}}, {}, {}),
    ("conflict-style",
     {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
         C: {".": {}, "f:image": {}, "f:name": {}}}}}}},
     {"f:spec": {"f:replicas": {}, "f:paused": {}, "f:template": {"f:spec": {"f:containers": {
         C: {"f:image": {}}}}}}},
     {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {C: {"f:image": {}}}}}}}),
]


@pytest.mark.parametrize(("a", "b", "expected"), [c[1:] for c in INTERSECTION],
                         ids=[c[0] for c in INTERSECTION])
def test_intersection(a: FieldSet, b: FieldSet, expected: FieldSet) -> None:
    """``Set.Intersection``: the paths that are members in both sets (commutative)."""
    assert fp.intersection(a, b) == expected
    assert fp.intersection(b, a) == expected


# --------------------------------------------------- recursive difference

RECURSIVE: list[tuple[str, FieldSet, FieldSet, FieldSet]] = [
    ("a-member-removes-its-subtree", {"f:a": {".": {}, "f:b": {}}}, {"f:a": {}}, {}),
    ("a-member-removes-paths-under-it", {"f:a": {"f:b": {"f:c": {}}}}, {"f:a": {}}, {}),
    ("a-non-member-path-removes-only-its-members",
     {"f:a": {"f:b": {}, "f:c": {}}}, {"f:a": {"f:b": {}}}, {"f:a": {"f:c": {}}}),
    ("unrelated-paths-stay",
     {"f:a": {".": {}, "f:b": {}}}, {"f:a": {"f:c": {}}}, {"f:a": {".": {}, "f:b": {}}}),
    ("status-reset",
     {"f:spec": {"f:x": {}}, "f:status": {".": {}, "f:phase": {}}}, {"f:status": {}}, {"f:spec": {"f:x": {}}}),
    ("empty-right", {"f:a": {}}, {}, {"f:a": {}}),
]


@pytest.mark.parametrize(("a", "b", "expected"), [c[1:] for c in RECURSIVE], ids=[c[0] for c in RECURSIVE])
def test_recursive_difference(a: FieldSet, b: FieldSet, expected: FieldSet) -> None:
    """``Set.RecursiveDifference``: a member of ``b`` removes itself and everything under it
    (how the fields a subresource resets are dropped from an entry)."""
    assert fp.recursive_difference(a, b) == expected


def test_difference_and_recursive_difference_differ_on_a_member_with_children() -> None:
    """Where the two differ: removing ``.a`` from ``{.a, .a.b}`` keeps ``.a.b`` only in ``Difference``."""
    s: FieldSet = {"f:a": {".": {}, "f:b": {}}}
    assert fp.difference(s, {"f:a": {}}) == {"f:a": {"f:b": {}}}
    assert fp.recursive_difference(s, {"f:a": {}}) == {}


# ------------------------------------------------------------------ leaves

LEAVES: list[tuple[str, FieldSet, FieldSet]] = [
    ("a-member-with-members-under-it-is-not-a-leaf",
     {"f:a": {".": {}, "f:b": {}}, "f:c": {}}, {"f:a": {"f:b": {}}, "f:c": {}}),
    ("nested", {"f:a": {"f:b": {".": {}, "f:c": {}}}}, {"f:a": {"f:b": {"f:c": {}}}}),
    ("list-item-member",
     {"f:containers": {C: {".": {}, "f:image": {}, "f:name": {}}}},
     {"f:containers": {C: {"f:image": {}, "f:name": {}}}}),
    ("list-item-without-fields", {"f:containers": {C: {}}}, {"f:containers": {C: {}}}),
    ("empty", {}, {}),
]


@pytest.mark.parametrize(("a", "expected"), [c[1:] for c in LEAVES], ids=[c[0] for c in LEAVES])
def test_leaves(a: FieldSet, expected: FieldSet) -> None:
    """``Set.Leaves``: the members with no members under them (what a conflict is reported on)."""
    assert fp.leaves(a) == expected


# ------------------------------------------------------------------- paths


def test_paths_lists_members_only_in_go_order() -> None:
    """``Set.Iterate``: members only (a path that just leads to members is not one), depth first,
    siblings in PathElement order."""
    s = {
        "f:b": {},
        "f:a": {".": {}, 'k:{"name":"x"}': {"f:c": {}}},
        "f:spec": {"f:ports": {PORT: {".": {}, "f:containerPort": {}}}},
    }
    assert fp.paths(s) == [
        ("f:a",),
        ("f:a", 'k:{"name":"x"}', "f:c"),
        ("f:b",),
        ("f:spec", "f:ports", PORT),
        ("f:spec", "f:ports", PORT, "f:containerPort"),
    ]


def test_paths_of_the_empty_set() -> None:
    """The empty set has no members."""
    assert fp.paths({}) == []


# ------------------------------------------------------------- path_string

PATH_STRINGS: list[tuple[tuple[str, ...], str]] = [
    (("f:spec", C, "f:image"), '.spec[name="c"].image'),
    (("f:spec", "f:template", "f:spec", "f:containers", C, "f:image"),
     '.spec.template.spec.containers[name="c"].image'),
    (("f:spec", "f:replicas"), ".spec.replicas"),
    (("f:metadata", "f:finalizers", 'v:"x"'), '.metadata.finalizers[="x"]'),
    (("f:values", "v:5"), ".values[=5]"),
    (("f:ports", PORT), '.ports[containerPort=80,protocol="TCP"]'),
    (("f:args", "i:3"), ".args[3]"),
    (("f:metadata", "f:labels", "f:app.kubernetes.io/name"), ".metadata.labels.app.kubernetes.io/name"),
    ((), ""),
]


@pytest.mark.parametrize(("elements", "text"), PATH_STRINGS, ids=[t or "root" for _, t in PATH_STRINGS])
def test_path_string(elements: tuple[str, ...], text: str) -> None:
    """``Path.String``: ``.field``, ``[key=value,...]``, ``[=value]``, ``[index]`` (as conflict
    messages and causes print a field)."""
    assert fp.path_string(elements) == text


# ------------------------------------------------------- path elements

KEY_ELEMENTS: list[tuple[dict[str, Any], str]] = [
    ({"name": "c"}, 'k:{"name":"c"}'),
    ({"protocol": "TCP", "containerPort": 80}, 'k:{"containerPort":80,"protocol":"TCP"}'),
    ({"containerPort": 80, "protocol": "TCP"}, 'k:{"containerPort":80,"protocol":"TCP"}'),
    ({"uid": "1234"}, 'k:{"uid":"1234"}'),
    ({"port": 8080}, 'k:{"port":8080}'),
    ({"name": 'a"b'}, 'k:{"name":"a\\"b"}'),
    ({"name": "a b"}, 'k:{"name":"a b"}'),
]


@pytest.mark.parametrize(("fields", "element"), KEY_ELEMENTS, ids=[e for _, e in KEY_ELEMENTS])
def test_key_element(fields: dict[str, Any], element: str) -> None:
    """An associative list item's element: its key fields as compact JSON, sorted by name."""
    assert fp.key_element(fields) == element
    assert json.loads(element[2:]) == fields


@pytest.mark.parametrize(("value", "element"), [
    ("x", 'v:"x"'), (5, "v:5"), (True, "v:true"), ("a b", 'v:"a b"'),
    # (past the common case: quotes, backslashes, control and non-ASCII characters go through the encoder)
    ('say "hi"', 'v:"say \\"hi\\""'), ("a\\b", 'v:"a\\\\b"'), ("tab\there", 'v:"tab\\there"'), ("ünï", 'v:"ünï"'),
    (None, "v:null"), (1.5, "v:1.5")])
def test_value_element(value: Any, element: str) -> None:
    """A set item's element: its value as compact JSON."""
    assert fp.value_element(value) == element


IN_ORDER: list[tuple[str, list[str], list[str]]] = [
    ("fields sort by name, after the member", ["f:b", ".", "f:a.b", "f:a"], [".", "f:a", "f:a.b", "f:b"]),
    ("fields, keys, values, indexes", ["i:0", 'v:"x"', 'k:{"name":"a"}', "f:z", "."],
     [".", "f:z", 'k:{"name":"a"}', 'v:"x"', "i:0"]),
    ("indexes by number, not text", ["i:10", "i:9", "i:1"], ["i:1", "i:9", "i:10"]),
    ("values by value: numbers before strings", ['v:"a"', "v:10", "v:9"], ["v:9", "v:10", 'v:"a"']),
]


@pytest.mark.parametrize(("elements", "expected"), [c[1:] for c in IN_ORDER], ids=[c[0] for c in IN_ORDER])
def test_in_order(elements: list[str], expected: list[str]) -> None:
    """Elements sort as Go sorts them, whether or not only fields are present (the shortcut)."""
    assert fp.in_order(elements) == expected


def test_in_order_agrees_with_the_element_order_on_generated_lists() -> None:
    """The shortcut for fields alone (one plain sort, its ends looked at) against the definition: fields
    alone sort as strings, anything else by the element order; every subset of a pool of elements, odd
    ones (``a:x``, ``-``, ``fx``, one a character long) included, in two orders."""
    import itertools

    def reference(elements: list[str]) -> list[str]:
        if all(e[0] == "f" or e == fp.MEMBER for e in elements):
            return sorted(elements)
        return sorted(elements, key=fp._element_order)

    pool = [".", "f:b", "f:a", 'k:{"n":"x"}', 'v:"a"', "i:3", "a:x", "-", "fx", "z", "f:", "g:1"]
    for n in range(1, 5):
        for combo in itertools.combinations(pool, n):
            for elements in (list(combo), list(reversed(combo))):
                assert fp.in_order(elements) == reference(elements), elements
                assert fp.in_order(dict.fromkeys(elements)) == reference(elements), elements
    assert fp.in_order([]) == []


def test_element_order_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The element-order memo starts again past its size (elements name objects: a long session
    meets ever new ones), and orders the same after."""
    monkeypatch.setattr(fp, "_ORDER_SIZE", 4)
    monkeypatch.setattr(fp, "_ORDER", {fp.MEMBER: (-1,)})
    elements = [f'k:{{"uid":"u{i}"}}' for i in range(9)] + ["i:2", "i:10", "f:a", "."]
    assert fp.in_order(elements) == [".", "f:a", *sorted(elements[:9]), "i:2", "i:10"]
    assert len(fp._ORDER) <= 4
    assert fp.in_order(elements) == [".", "f:a", *sorted(elements[:9]), "i:2", "i:10"]


def test_field_element() -> None:
    """A struct field or map key is ``f:<name>``, unquoted."""
    assert fp.field_element("app.kubernetes.io/name") == "f:app.kubernetes.io/name"


# --------------------------------------------------------------- canonical

CANONICAL: list[tuple[str, FieldSet, list[str]]] = [
    ("dot-then-fields-keys-values-indexes",
     {"i:1": {}, 'v:"a"': {}, 'k:{"a":1}': {}, "f:z": {}, "f:a": {}, ".": {}},
     [".", "f:a", "f:z", 'k:{"a":1}', 'v:"a"', "i:1"]),
    ("fields-by-name", {"f:b": {}, "f:B": {}, "f:a": {}, "f:aa": {}}, ["f:B", "f:a", "f:aa", "f:b"]),
    ("numbers-compare-as-numbers", {"v:10": {}, "v:2": {}, "i:10": {}, "i:2": {}}, ["v:2", "v:10", "i:2", "i:10"]),
    ("numbers-before-strings-before-booleans", {"v:true": {}, 'v:"a"': {}, "v:3": {}}, ["v:3", 'v:"a"', "v:true"]),
    ("false-before-true", {"v:true": {}, "v:false": {}}, ["v:false", "v:true"]),
    ("keys-by-field-then-value",
     {'k:{"containerPort":443,"protocol":"TCP"}': {}, 'k:{"containerPort":80,"protocol":"UDP"}': {},
      'k:{"containerPort":80,"protocol":"TCP"}': {}},
     ['k:{"containerPort":80,"protocol":"TCP"}', 'k:{"containerPort":80,"protocol":"UDP"}',
      'k:{"containerPort":443,"protocol":"TCP"}']),
]


@pytest.mark.parametrize(("a", "order"), [c[1:] for c in CANONICAL], ids=[c[0] for c in CANONICAL])
def test_canonical_order(a: FieldSet, order: list[str]) -> None:
    """``FieldsV1`` serialization order: ``.`` first, then PathElement order (fields by name,
    keys, values, indexes; values compared as values: numbers, strings, booleans)."""
    out = fp.canonical(a)
    assert list(out) == order
    assert out == a


def test_canonical_orders_every_level() -> None:
    """The order applies at every depth, and the set itself is unchanged."""
    a = {"f:spec": {"f:template": {}, "f:replicas": {}, ".": {}},
         "f:metadata": {"f:labels": {"f:b": {}, ".": {}, "f:a": {}}}}
    out = fp.canonical(a)
    assert list(out) == ["f:metadata", "f:spec"]
    assert list(out["f:spec"]) == [".", "f:replicas", "f:template"]
    assert list(out["f:metadata"]["f:labels"]) == [".", "f:a", "f:b"]
    assert out == a
