"""The changes memo's masked keys (issue 22): objects holding their own name share their changes.

:func:`fakeapi.machinery.typedfields.changes` keys its memo by the JSON of each top-level field with the
object's name masked (``_mask_name``), so the pods of one runner set, which differ in their secret's name
alone, share one walk. Each case here writes a run of objects made from one template under different
names, through one memo, and compares every answer with the walk without a memo (the reference). The
surprising ones: the name in a map key, a list item's key or a set's item belongs in the set, so no
object may be given another's; a name that could sit in a number or a literal is never masked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from fakeapi.machinery import fieldmanager
from fakeapi.machinery import typedfields as tf
from fakeapi.server.apiserver import APIServer

Pod = dict[str, Any]


def _pod(name: str, spec: dict[str, Any], **meta: Any) -> Pod:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ci", **meta}, "spec": spec}


def _container(name: str = "runner", **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": "img:1", **fields}


def _secret_ref(name: str) -> Pod:  # (the name in a leaf: the one the memo shares)
    env = [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": name, "key": "jit"}}}]
    return _pod(name, {"restartPolicy": "Never", "containers": [_container(env=env)]})


def _label_key(name: str) -> Pod:  # (the name in a map key: an element of the set)
    return _pod(name, {"containers": [_container()]}, labels={name: "x", "app": name})


def _list_key(name: str) -> Pod:  # (the name in an associative list's key)
    return _pod(name, {"containers": [_container(name), _container("sidecar", args=[name])]})


def _set_item(name: str) -> Pod:  # (the name in a set's item: metadata.finalizers)
    return _pod(name, {"containers": [_container()]}, finalizers=[f"example.com/{name}", "example.com/x"])


def _env_name(name: str) -> Pod:  # (the name in an env var's name: a list key deep in the spec)
    return _pod(name, {"containers": [_container(env=[{"name": name, "value": name}, {"name": "A", "value": "1"}])]})


def _prefix(name: str) -> Pod:  # (the name as part of longer strings and keys)
    return _pod(name, {"containers": [_container(f"{name}-main", command=[f"/bin/{name}"])],
                       "nodeSelector": {f"{name}x": "1"}})


CASES: dict[str, Callable[[str], Pod]] = {
    "secret ref (leaf)": _secret_ref, "label key": _label_key, "list key": _list_key,
    "set item": _set_item, "env var name": _env_name, "prefix of keys": _prefix,
}

#: Names masked, and names never masked (no dash; a dash but only e for a letter: both could be parts of a
#: number; a literal; too short), each run through every case.
NAMES = ["runner-ab12", "runner-cd34", "runner-ef56", "runner-gh78", "runner-ij90"] * 4
UNMASKED = ["runner1", "1e-5", "e-10", "true", "a-b"]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("names", [NAMES, UNMASKED + NAMES[:3] + UNMASKED], ids=["masked", "mixed"])
def test_creates_through_one_memo_answer_the_reference(case: str, names: list[str]) -> None:
    """Creates of one template under many names, through one memo, answer what walks without one do."""
    api = APIServer()
    kind = api.resolve_kind("Pod")
    t = fieldmanager.compare_type(kind.schema, "", kind.status_subresource)
    zero = api._zero_object(kind)
    memo = tf.Memo()
    for name in names:
        pod = CASES[case](name)
        assert tf.changes(zero, pod, t, memo) == tf.changes(zero, pod, t, None), (case, name)


def test_a_pod_spec_naming_its_secret_is_walked_once() -> None:
    """The shortcut is taken: pods differing in their secret's name alone share the spec's changes."""
    api = APIServer()
    kind = api.resolve_kind("Pod")
    t = fieldmanager.compare_type(kind.schema, "", kind.status_subresource)
    zero = api._zero_object(kind)
    memo = tf.Memo()
    answers = [tf.changes(zero, _secret_ref(name), t, memo) for name in NAMES[:5]]
    assert all(a == answers[0] for a in answers)
    assert memo.tries[(id(t), "spec")] == [5, 4]


def test_a_spec_naming_itself_in_a_key_is_never_shared() -> None:
    """Pods whose container is named as the pod: each one's set names it, so none is memoized masked."""
    api = APIServer()
    kind = api.resolve_kind("Pod")
    t = fieldmanager.compare_type(kind.schema, "", kind.status_subresource)
    zero = api._zero_object(kind)
    memo = tf.Memo()
    for name in NAMES[:5]:
        changed, _ = tf.changes(zero, _list_key(name), t, memo)
        assert f'k:{{"name":"{name}"}}' in changed["f:spec"]["f:containers"]
    assert memo.tries[(id(t), "spec")] == [5, 0]


@pytest.mark.parametrize("case", CASES)
def test_updates_naming_the_object_on_both_sides_answer_the_reference(case: str) -> None:
    """Updates whose old and new values both hold the name (masked alike) answer the reference too."""
    api = APIServer()
    kind = api.resolve_kind("Pod")
    t = fieldmanager.compare_type(kind.schema, "", kind.status_subresource)
    memo = tf.Memo()
    for name in NAMES:
        old = CASES[case](name)
        new = CASES[case](name)
        new["spec"]["containers"][0]["image"] = "img:2"
        new["spec"]["activeDeadlineSeconds"] = 30
        new["metadata"].setdefault("annotations", {})["by"] = name
        assert tf.changes(old, new, t, memo) == tf.changes(old, new, t, None), (case, name)


@pytest.mark.parametrize("name,masked", [
    ("runner-ab12", True), ("linux-runner-jwtsv", True), ("a.b-c", True),
    ("runner1", False), ("1e-5", False), ("e-10", False), ("true", False), ("a-b", False),
    ("Runner-ab", False), ("runner-é1", False), ("run_ner-1", False),
])
def test_which_names_are_masked(name: str, masked: bool) -> None:
    """Only names that lie in JSON inside strings alone are masked (a dash, a letter but e, DNS characters)."""
    assert tf._mask_name({"metadata": {"name": name}}) == (name.encode() if masked else b"")
