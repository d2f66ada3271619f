"""The generic server asks each kind's strategy; it never tests which kind it serves (issue 19).

What differs per kind lives in ``fakeapi/registry/<group>/strategy.py``: these tests check that
the server's modules hold no comparison of a kind's name with a literal (the ``if kind.kind ==
"Service"`` branches the strategies replaced), that every built-in kind has exactly one strategy
registered with it, and that custom resources share the generic one.
"""

from __future__ import annotations

import ast
from pathlib import Path

from support import widget_crd

from fakeapi import APIServer
from fakeapi.registry.builtin import BUILTINS, STRATEGIES, builtin_kinds
from fakeapi.registry.strategy import CUSTOM_RESOURCE, BuiltinStrategy, CustomResourceStrategy, Strategy

SERVER = Path(__file__).resolve().parents[1] / "fakeapi" / "server"


def _kind_name_tests(source: str) -> list[int]:
    """Lines comparing ``<x>.kind`` with a string literal (``==``, ``!=``, ``in``, ``not in``)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        names_kind = any(isinstance(o, ast.Attribute) and o.attr == "kind" for o in operands)
        literal = any((isinstance(o, ast.Constant) and isinstance(o.value, str))
                      or (isinstance(o, ast.Tuple | ast.List | ast.Set)
                      and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in o.elts))
                      for o in operands)
        if names_kind and literal:
            lines.append(node.lineno)
    return lines


def test_the_server_never_tests_a_kind_name() -> None:
    found = {p.name: _kind_name_tests(p.read_text(encoding="utf-8")) for p in sorted(SERVER.glob("*.py"))}
    assert {name: lines for name, lines in found.items() if lines} == {}


def test_the_check_sees_such_a_test() -> None:
    assert _kind_name_tests('if kind.builtin and kind.kind == "Service":\n    pass\n') == [1]
    assert _kind_name_tests('if k.kind in ("Role", "ClusterRole"):\n    pass\n') == [1]
    assert _kind_name_tests("if kind.namespaced:\n    pass\n") == []


def test_every_builtin_kind_has_one_strategy() -> None:
    assert all(isinstance(s, BuiltinStrategy) for s in STRATEGIES)
    keys = [(s.spec.group, s.spec.kind) for s in STRATEGIES]
    assert len(keys) == len(set(keys))
    assert len({id(s) for s in STRATEGIES}) == len(STRATEGIES)
    assert tuple(s.spec for s in STRATEGIES) == BUILTINS
    kinds = builtin_kinds()
    assert [(k.group, k.kind) for k in kinds] == keys
    assert all(k.strategy is s for k, s in zip(kinds, STRATEGIES, strict=True))


def test_each_group_package_holds_its_own_kinds() -> None:
    for s in STRATEGIES:
        package = type(s).__module__.split(".")[2]  # fakeapi.registry.<group>.strategy
        group = s.spec.group.split(".")[0] if s.spec.group else "core"
        assert package == group, f"{s.spec.kind}: strategy in fakeapi.registry.{package}, group {s.spec.group!r}"


def test_custom_resources_get_the_generic_strategy() -> None:
    api = APIServer()
    kind = api.register_crd(widget_crd())
    assert kind.strategy is CUSTOM_RESOURCE and isinstance(kind.strategy, CustomResourceStrategy)
    # (its one override skips asking for rules a custom resource does not have: the base answers the same)
    causes: list = []
    obj = {"metadata": {}, "spec": {}}
    for sub, old in (("", None), ("", obj), ("status", obj)):
        assert CUSTOM_RESOURCE.admit(causes, obj, old, sub, False) == Strategy().admit(causes, obj, old, sub, False)
    assert api.resolve_kind("Pod").strategy is not CUSTOM_RESOURCE
