"""PATCH bodies: JSON Patch (RFC 6902), JSON merge patch (RFC 7386), strategic merge patch.

Semantics follow what kube-apiserver runs (reference §2.5):

- JSON Patch: evanphx/json-patch v4 via the ``jsonpatch`` library; a missing
  ``value`` means null and negative array indices count from the end, as in Go.
- Merge patch: evanphx ``MergePatch`` (nulls delete; nulls inside added values
  are pruned; arrays replace).
- Strategic merge patch: a port of the apply half of
  ``k8s.io/apimachinery/pkg/util/strategicpatch`` driven by the OpenAPI schema
  nodes of the built-in kind (``x-kubernetes-patch-strategy`` /
  ``x-kubernetes-patch-merge-key``).

Errors map to kube-apiserver's answers: :class:`PatchFormatError` → 400 with the
message, :class:`PatchApplyError` → 422 with :data:`GENERIC_INVALID_MESSAGE`,
:class:`PatchTooLargeError` → 413 with the message, and
:class:`PatchInternalError` → 500 (reason empty) with the message — the
strategicpatch errors the apiserver does not classify (unknown ``$patch`` value,
a list item without its merge key, ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import jsonpatch
import jsonpointer
import orjson

from fakeapi.machinery import openapi
from fakeapi.machinery.jsonutil import fast_copy
from fakeapi.machinery.jsonutil import go_json_type as _json_type
from fakeapi.machinery.metavalidation import bad_value
from fakeapi.machinery.patcherrors import (
    GENERIC_INVALID_MESSAGE,
    MAX_JSON_PATCH_OPERATIONS,
    PatchApplyError,
    PatchError,
    PatchFormatError,
    PatchInternalError,
    PatchTooLargeError,
)

__all__ = [
    "GENERIC_INVALID_MESSAGE",
    "MAX_JSON_PATCH_OPERATIONS",
    "PatchApplyError",
    "PatchError",
    "PatchFormatError",
    "PatchInternalError",
    "PatchTooLargeError",
    "apply_json_patch",
    "apply_json_patch_shared",
    "apply_merge_patch",
    "apply_strategic_merge_patch",
    "create_merge_patch",
    "create_strategic_merge_patch",
]

# --- JSON Patch ---------------------------------------------------------------------------

_NEGATIVE_SEGMENT = re.compile(r"/-\d")
_VALUE_OPS = frozenset({"add", "replace", "test"})


def apply_json_patch(doc: dict[str, Any], ops: Any) -> Any:
    """Apply an RFC 6902 patch (the decoded body) to a copy of ``doc``.

    The result is any JSON value (a patch may replace the root with a list): the caller checks it.

    ``null`` is an empty patch. A body that is not a list of objects raises
    PatchFormatError; more than 10,000 operations PatchTooLargeError; any
    failing operation (missing path, failed ``test``, unknown op, ``add`` to
    ``/metadata/finalizers/-`` with no finalizers) PatchApplyError.
    """
    return fast_copy(apply_json_patch_shared(doc, ops))


def apply_json_patch_shared(doc: dict[str, Any], ops: Any) -> Any:
    """:func:`apply_json_patch` without copying ``doc``: the result shares what the patch left alone.

    Copy on write: before each operation, the objects and arrays on the way to what it changes (its
    ``path``'s parent, and a ``move``'s ``from`` parent) are copied, once each; everything else is
    ``doc``'s own, and values the patch adds are the patch's own. Neither is mutated. For a caller that
    copies the result's new parts before keeping them (the server's decoder), as after a merge patch.
    """
    owned: dict[int, Any] = {}  # (the containers this patch made, by id, each kept alive: changed in place)
    if ops is None:
        return _own(doc, [], owned)
    if not isinstance(ops, list):
        raise PatchFormatError(f"json: cannot unmarshal {_json_type(ops)} into Go value of type jsonpatch.Patch")
    for op in ops:
        if op is not None and not isinstance(op, dict):
            raise PatchFormatError(f"json: cannot unmarshal {_json_type(op)} into Go value of type jsonpatch.Operation")
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise PatchTooLargeError(
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(ops)}"
        )
    prepared: list[dict[str, Any]] = []
    negative = False
    for op in ops:
        if op is None:
            raise PatchApplyError("Unexpected kind: unknown")
        if op.get("op") in _VALUE_OPS and "value" not in op:
            op = {**op, "value": None}  # evanphx: a missing value is null
        for k in ("path", "from"):
            p = op.get(k)
            if isinstance(p, str) and _NEGATIVE_SEGMENT.search(p):
                negative = True
        prepared.append(op)
    out: Any = _own(doc, [], owned)
    try:
        # every operation checked before any is applied, as JsonPatch(prepared) does; the operations it
        # builds are applied (unless a negative index is resolved first, against the document as it is then)
        built = [_OPERATION(op) for op in prepared]
        operations = jsonpatch.JsonPatch.operations
        for i, op in enumerate(prepared):
            if negative:
                op = _resolve_negative_indices(out, op)
                operation = operations[op["op"]](op)
            else:
                operation = built[i]
            out = _own(out, operation.pointer.parts[:-1], owned)
            if op["op"] == "move":
                out = _own(out, jsonpointer.JsonPointer(op["from"]).parts[:-1], owned)
            out = operation.apply(out)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as e:
        raise PatchApplyError(str(e)) from None
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        raise PatchApplyError(str(e)) from None
    return out


#: What ``jsonpatch.JsonPatch(ops)`` runs on each operation to check it: the operation object, or
#: ``InvalidJsonPatch`` (no ``op``, not a string, unknown). (A private method of every jsonpatch release
#: the project supports, read by name: the stubs that newer releases ship (1.48 has them) do not declare it.)
_OPERATION: Callable[[Any], Any] = getattr(jsonpatch.JsonPatch([]), "_get_operation")  # noqa: B009 (mypy: not in the stubs)


def _own(root: Any, parts: list[str], owned: dict[int, Any]) -> Any:
    """``root`` with the objects and arrays along ``parts`` (JSON Pointer tokens) its own: each one not yet
    made by this patch is replaced by a shallow copy. Stops where the path leads nowhere (the operation
    then fails as it would have). Returns the (possibly copied) root."""
    if type(root) in (dict, list) and id(root) not in owned:
        root = root.copy()
        owned[id(root)] = root
    cur = root
    for part in parts:
        if type(cur) is dict:
            if part not in cur:
                return root
            key: Any = part
        elif type(cur) is list:
            if not part.isdigit() or int(part) >= len(cur):
                return root
            key = int(part)
        else:
            return root
        child = cur[key]
        if type(child) in (dict, list) and id(child) not in owned:
            child = child.copy()
            owned[id(child)] = child
            cur[key] = child
        cur = child
    return root


def _resolve_negative_indices(doc: Any, op: dict[str, Any]) -> dict[str, Any]:
    """Rewrite ``-N`` array indices (evanphx v4 ``SupportNegativeIndices``) to positive ones."""
    out = dict(op)
    for k in ("path", "from"):
        p = op.get(k)
        if not isinstance(p, str) or not _NEGATIVE_SEGMENT.search(p):
            continue
        parts = p.split("/")[1:]
        cur: Any = doc
        for i, raw in enumerate(parts):
            seg = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(cur, list) and re.fullmatch(r"-\d+", seg):
                idx = int(seg)
                if idx >= -len(cur):
                    parts[i] = str(idx + len(cur))
                    seg = parts[i]
            if isinstance(cur, dict):
                cur = cur.get(seg)
            elif isinstance(cur, list) and seg.isdigit() and int(seg) < len(cur):
                cur = cur[int(seg)]
            else:
                cur = None
        out[k] = "/" + "/".join(parts)
    return out


# --- merge patch --------------------------------------------------------------------------


def apply_merge_patch(doc: dict[str, Any], patch: Any) -> Any:
    """Apply an RFC 7386 merge patch to a copy of ``doc`` (evanphx ``MergePatch``).

    Objects merge recursively, ``null`` deletes, arrays are replaced whole
    (null elements of added values pruned). A list patch replaces the document;
    ``null`` or a scalar raises PatchFormatError("Invalid JSON Patch").
    """
    return fast_copy(apply_merge_patch_shared(doc, patch))


def apply_merge_patch_shared(doc: dict[str, Any], patch: Any) -> Any:
    """:func:`apply_merge_patch` without copying ``doc``: the result shares its untouched parts.

    Equal to what :func:`apply_merge_patch` returns (keys in the same order), but only the
    objects along the patched paths are new; everything else is ``doc``'s own. Neither is
    mutated. For a caller that copies the result before changing it (the server's decoder).
    """
    if isinstance(patch, list):
        return _prune_nulls(fast_copy(patch))
    if not isinstance(patch, dict):
        raise PatchFormatError("Invalid JSON Patch")
    return _merge_shared(doc, patch)


_JSON_SCALARS = frozenset({str, int, float, bool})


def _merge_shared(doc: dict[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """RFC 7386 merge of ``patch`` into a shallow copy of ``doc`` (returned), copying only what it changes."""
    out = dict(doc)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
            continue
        cur = out.get(k)
        if type(v) in _JSON_SCALARS:  # (the commonest patch value: nothing to copy or prune)
            out[k] = v
        elif cur is None:
            out[k] = _prune_nulls(fast_copy(v))
        elif isinstance(cur, dict):
            if isinstance(v, dict):
                out[k] = _merge_shared(cur, v)
            else:
                out[k] = fast_copy(v)  # evanphx: a non-object over an object is taken as is
        else:
            out[k] = _prune_nulls(fast_copy(v))
    return out




def _prune_nulls(v: Any) -> Any:
    if isinstance(v, dict):
        for k in [k for k, x in v.items() if x is None]:
            del v[k]
        for x in v.values():
            if type(x) not in _JSON_SCALARS:
                _prune_nulls(x)
    elif isinstance(v, list):
        v[:] = [x if type(x) in _JSON_SCALARS else _prune_nulls(x) for x in v if x is not None]
    return v


def create_merge_patch(original: Any, modified: Any) -> Any:
    """The RFC 7386 diff of two documents (evanphx ``CreateMergePatch``, client.MergeFrom).

    Changed scalars are set, removed keys become null, changed arrays are sent
    whole; equal documents give ``{}``. Two lists give a list of per-element
    patches (same length required).
    """
    if isinstance(original, list) and isinstance(modified, list):
        if len(original) != len(modified):
            raise PatchError("Invalid JSON Document")
        return [_get_diff(_as_obj(a), _as_obj(b)) for a, b in zip(original, modified)]
    if isinstance(original, list) or isinstance(modified, list):
        raise PatchError("Mismatched JSON Documents")
    return _get_diff(_as_obj(original), _as_obj(modified))


def _as_obj(v: Any) -> Mapping[str, Any]:
    if type(v) is dict:  # (the commonest: no abstract-class check)
        return v
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise PatchError("Invalid JSON Document")
    return v


def _kind(v: Any) -> str:
    """Go's dynamic type after ``json.Unmarshal`` into interface{} (all numbers are float64)."""
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "float64"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "slice"
    return "map"


_NOT_MAPS = frozenset({str, int, float, bool, type(None), list})


def _get_diff(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    into: dict[str, Any] = {}
    for key, bv in b.items():
        if key not in a:
            into[key] = fast_copy(bv)
            continue
        av = a[key]
        ta = type(av)
        if ta is not type(bv) and _kind(av) != _kind(bv):  # (values of one type are of one kind)
            into[key] = fast_copy(bv)
            continue
        if ta is dict or (ta not in _NOT_MAPS and isinstance(av, Mapping)):
            dst = _get_diff(av, bv)
            if dst:
                into[key] = dst
        elif av is None:
            continue
        elif av != bv:
            into[key] = bv if ta in _JSON_SCALARS else fast_copy(bv)
    for key in a:
        if key not in b:
            into[key] = None
    return into


# --- strategic merge patch ----------------------------------------------------------------

_DIRECTIVE = "$patch"
_DELETE, _REPLACE, _MERGE = "delete", "replace", "merge"
_RETAIN_KEYS = "$retainKeys"
_DELETE_PREFIX = "$deleteFromPrimitiveList"
_ORDER_PREFIX = "$setElementOrder"

_BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
_BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
_BAD_ORDER_LIST = "invalid patch format of setElementOrder list"
_NO_LIST_OF_LISTS = "lists of lists are not supported"

Schema = dict[str, Any]


def apply_strategic_merge_patch(doc: dict[str, Any], patch: Any, schema: Schema | None) -> dict[str, Any]:
    """Apply a strategic merge patch to ``doc`` (``StrategicMergeMapPatch``); ``doc`` is not changed.

    The result is new along the paths the patch touches and shares the rest with ``doc``
    (copy it before mutating it).

    ``schema`` is the kind's root schema (``openapi.builtin_schema``): list
    merge keys and strategies come from its nodes. Lists without a strategy
    are replaced; ``merge`` lists of objects merge by key, primitive ones are
    unioned; ``$patch``, ``$deleteFromPrimitiveList/<f>``,
    ``$setElementOrder/<f>`` and ``$retainKeys`` directives apply; null
    deletes. New items of a merged list come before the existing ones, as in Go.
    """
    if patch is None:
        return fast_copy(doc)
    if not isinstance(patch, dict):
        raise PatchFormatError(
            f"json: cannot unmarshal {_json_type(patch)} into Go value of type map[string]interface {{}}"
        )
    if _plain_patch(patch):
        # (issue 22: nothing to discard or act on, so the merge changes nothing in the patch: not copied, and
        # the result shares the patch's values, as it shares the document's; the server's decoder copies them)
        return _merge_plain(dict(doc), patch, schema)
    return _merge_map(dict(doc), fast_copy(patch), schema)


def _plain_patch(v: Any) -> bool:
    """Does a patch value hold only dicts, lists, strings, numbers and booleans, with no null and no key
    starting with ``$`` (no directive, ``$retainKeys``, ``$setElementOrder/``, ``$deleteFromPrimitiveList/``)?

    Answered at C speed, as :func:`fakeapi.machinery.bodycheck._plain_size` settles a body: orjson writes
    it (dicts with ``str`` keys, lists, tuples, ``str``, ints within 64 bits, floats, bools, None; every
    subclass and the other types it knows refused), the text holds neither ``null`` (a NaN or an infinity
    is written so too) nor a string starting with ``$``, and reads back equal to the value (so there was no
    tuple nor anything else orjson writes as another JSON value). A ``null`` or ``"$`` inside a string
    only sends a patch to the general path, which gives the same answer.
    """
    try:
        data = orjson.dumps(v, default=_refuse, option=_PASSTHROUGH)
    except TypeError:  # (orjson.JSONEncodeError is one)
        return False
    return b"null" not in data and b'"$' not in data and orjson.loads(data) == v


#: orjson hands subclasses of builtin types, dataclasses and dates to ``default`` (:func:`_refuse`).
_PASSTHROUGH = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def _refuse(value: Any) -> Any:
    raise TypeError


_GO_TYPES: dict[type, str] = {type(None): "nil", bool: "bool", int: "int64", float: "float64", str: "string",
                              list: "slice", dict: "map"}


def _go_type(v: Any) -> str:
    """Go's dynamic type of a decoded value (apimachinery keeps integers as int64)."""
    t = _GO_TYPES.get(type(v))
    if t is not None:
        return t
    return _go_type_of_subclass(v)


def _go_type_of_subclass(v: Any) -> str:
    """:func:`_go_type` of a value whose type is a subclass (bool before int: a bool is an int)."""
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int64"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "slice"
    return "map"


def _go_eq(a: Any, b: Any) -> bool:
    """Go ``==`` on two interface values holding scalars."""
    return _go_type(a) == _go_type(b) and a == b


def _fmt_v(v: Any) -> str:
    """Go ``%v`` of a decoded JSON value (maps with sorted keys)."""
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        return bad_value(v)
    if isinstance(v, list):
        return "[" + " ".join(_fmt_v(x) for x in v) + "]"
    return "map[" + " ".join(f"{k}:{_fmt_v(v[k])}" for k in sorted(v)) + "]"


def _fmt_s(v: Any) -> str:
    """Go ``%s`` of an interface value (non-strings print as ``%!s(type=value)``)."""
    if isinstance(v, str):
        return v
    if v is None:
        return "%!s(<nil>)"
    t = _go_type(v)
    if t in ("bool", "int64", "float64"):
        return f"%!s({t}={_fmt_v(v)})"
    return _fmt_v(v)


_GO_TYPE_NAMES = {
    "nil": "%!s(<nil>)",
    "bool": "bool",
    "int64": "int64",
    "float64": "float64",
    "string": "string",
    "slice": "[]interface {}",
    "map": "map[string]interface {}",
}


def _bad_arg_type(expected: str, actual: Any) -> PatchInternalError:
    return PatchInternalError(f"expected a {expected}, but received a {_GO_TYPE_NAMES[_go_type(actual)]}")


def _no_merge_key(m: Any, key: str) -> PatchInternalError:
    return PatchInternalError(f"map: {_fmt_v(m)} does not contain declared merge key: {key}")


#: :func:`_field_facts` answers by (schema node id, key), with the node kept (its id stays its own).
_FACTS: dict[tuple[int, str], tuple[Any, tuple[Any, str, str, Any]]] = {}


def _field_facts(schema: Schema | None, key: str) -> tuple[Schema | None, str, str, Schema | None]:
    """(the field's schema, its patch strategy, its merge key, its items' schema), worked out once per
    schema node and key: strategic merge patches only apply to built-in kinds, whose schemas live as
    long as the process."""
    hit = _FACTS.get((id(schema), key))
    if hit is not None and hit[0] is schema:
        return hit[1]
    sub = openapi.child(schema, key)
    _, strategy = _strategy(sub)
    facts = (sub, strategy, openapi.patch_merge_key(sub), openapi.items(sub))
    _FACTS[(id(schema), key)] = (schema, facts)
    return facts


def _strategy(node: Schema | None) -> tuple[bool, str]:
    """``extractRetainKeysPatchStrategy``: (has retainKeys, other strategy)."""
    raw = openapi.patch_strategy(node)
    if not raw:
        return False, ""
    parts = raw.split(",")
    if len(parts) == 1:
        return (True, "") if parts[0] == "retainKeys" else (False, parts[0])
    if len(parts) == 2:
        if parts[0] == "retainKeys":
            return True, parts[1]
        if parts[1] == "retainKeys":
            return True, parts[0]
    raise PatchInternalError(f"unexpected patch strategy: [{' '.join(parts)}]")


def _merge_map(original: dict[str, Any] | None, patch: dict[str, Any], schema: Schema | None) -> dict[str, Any]:
    if _DIRECTIVE in patch:
        return _directive_in_merge_map(patch[_DIRECTIVE], patch)
    if original is None:
        original = {}
    _apply_retain_keys(original, patch)
    _merge_patch_into_original(original, patch, schema)
    for k, patch_v in list(patch.items()):
        is_delete_list = False
        if k.startswith(_DELETE_PREFIX):
            k = _extract_key(k, _DELETE_PREFIX)
            is_delete_list = True
        if patch_v is None:
            original.pop(k, None)
            continue
        if k not in original or (type(original[k]) is not type(patch_v)
                                 and _go_type(original[k]) != _go_type(patch_v)):  # (one type: one Go type)
            if not is_delete_list:
                _discard_nulls(patch_v)
                value, keep = _remove_directives(patch_v)
                if keep:
                    original[k] = value
                else:
                    original.pop(k, None)
            continue
        orig_v = original[k]
        if isinstance(orig_v, dict):
            sub, strategy, _, _ = _field_facts(schema, k)
            original[k] = patch_v if strategy == _REPLACE else _merge_map(dict(orig_v), patch_v, sub)
        elif isinstance(orig_v, list):
            sub, strategy, merge_key, items = _field_facts(schema, k)
            original[k] = _merge_slice_handler(orig_v, patch_v, items, strategy, merge_key, is_delete_list)
        else:
            value, keep = _remove_directives(patch_v)
            if keep:
                original[k] = value
            else:
                original.pop(k, None)
    return original


def _merge_plain(original: dict[str, Any], patch: dict[str, Any], schema: Schema | None) -> dict[str, Any]:
    """:func:`_merge_map` of a patch :func:`_plain_patch` accepts, which it neither changes nor copies.

    Such a patch has no directive, ``$retainKeys``, ``$setElementOrder/`` or delete list to act on and
    no null to discard (``_discard_nulls`` and ``_remove_directives`` would give each value back as it
    is), so every step left is the general path's own, in its order: an added or retyped value taken,
    maps merged (or replaced), lists by their strategy, scalars set.
    """
    for k, patch_v in patch.items():
        orig_v = original.get(k, _ABSENT_KEY)
        if orig_v is _ABSENT_KEY or (type(orig_v) is not type(patch_v) and _go_type(orig_v) != _go_type(patch_v)):
            original[k] = patch_v
        elif isinstance(orig_v, dict):
            sub, strategy, _, _ = _field_facts(schema, k)
            original[k] = patch_v if strategy == _REPLACE else _merge_plain(dict(orig_v), patch_v, sub)
        elif isinstance(orig_v, list):
            sub, strategy, merge_key, items = _field_facts(schema, k)
            original[k] = _merge_slice_handler(orig_v, patch_v, items, strategy, merge_key, False, _merge_plain)
        else:
            original[k] = patch_v
    return original


#: :func:`_merge_map`, or :func:`_merge_plain` for a patch :func:`_plain_patch` accepts (the list merges' callback).
MergeMap = Callable[[dict[str, Any], dict[str, Any], "Schema | None"], dict[str, Any]]


def _directive_in_merge_map(directive: Any, patch: dict[str, Any]) -> dict[str, Any]:
    if directive == _REPLACE:
        del patch[_DIRECTIVE]
        return patch
    if directive == _DELETE:
        return {}
    raise PatchInternalError(f"unknown patch type: {_fmt_s(directive)} in map: {_fmt_v(patch)}")


def _extract_key(s: str, prefix: str) -> str:
    head, sep, rest = s.partition("/")
    if not sep or head != prefix:
        raise PatchFormatError(_BAD_PRIMITIVE_LIST if prefix == _DELETE_PREFIX else _BAD_ORDER_LIST)
    return rest


def _discard_nulls(v: Any) -> None:
    if isinstance(v, dict):
        for k in [k for k, x in v.items() if x is None]:
            del v[k]
        for x in v.values():
            if isinstance(x, (dict, list)):  # (scalars: nothing to do, no call)
                _discard_nulls(x)
    elif isinstance(v, list):
        for x in v:
            if isinstance(x, (dict, list)):
                _discard_nulls(x)


def _remove_directives(v: Any) -> tuple[Any, bool]:
    """``removeDirectives``: drop maps carrying ``$patch`` (and the key holding them)."""
    if isinstance(v, dict):
        if _DIRECTIVE in v:
            return None, False
        for k in list(v):
            x = v[k]
            if not isinstance(x, (dict, list)):
                continue  # a scalar is kept as it is (no call)
            nv, keep = _remove_directives(x)
            if keep:
                v[k] = nv
            else:
                del v[k]
        return v, True
    if isinstance(v, list):
        out = []
        for x in v:
            if not isinstance(x, (dict, list)):
                out.append(x)
                continue
            nx, keep = _remove_directives(x)
            if keep:
                out.append(nx)
        return out, True
    return v, True


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    if _RETAIN_KEYS not in patch:
        return
    retain = patch.pop(_RETAIN_KEYS)
    if not isinstance(retain, list):
        raise PatchFormatError(_BAD_RETAIN_KEYS)
    keep = {x for x in retain if isinstance(x, str)}
    for k, v in patch.items():
        if v is None or k.startswith(_DELETE_PREFIX) or k.startswith(_ORDER_PREFIX):
            continue
        if k not in keep:
            raise PatchFormatError(_BAD_RETAIN_KEYS)
    for k in [k for k in original if k not in keep]:
        del original[k]


def _merge_patch_into_original(original: dict[str, Any], patch: dict[str, Any], schema: Schema | None) -> None:
    """Process ``$setElementOrder/<field>`` together with the patch list of that field."""
    for key in [k for k in patch if k.startswith(_ORDER_PREFIX)]:
        order = patch.pop(key)
        if not isinstance(order, list):
            raise _bad_arg_type("[]interface {}", order)
        original_key = _extract_key(key, _ORDER_PREFIX)
        found_original = original_key in original
        found_patch = original_key in patch
        original_list: list[Any] = []
        patch_list: list[Any] = []
        if found_original:
            if not isinstance(original[original_key], list):
                raise _bad_arg_type("[]interface {}", original[original_key])
            original_list = original[original_key]
        if found_patch:
            if not isinstance(patch[original_key], list):
                raise _bad_arg_type("[]interface {}", patch[original_key])
            patch_list = patch[original_key]
        _, strategy, merge_key, items = _field_facts(schema, original_key)
        _validate_patch_with_order(patch_list, order, merge_key)
        if found_original and not found_patch:
            merged = original_list
        elif not found_original and found_patch:
            merged = _remove_directives(patch_list)[0]
        elif found_original and found_patch:
            merged = _merge_slice_handler(original_list, patch_list, items, strategy, merge_key, False)
        else:
            continue
        if not merge_key:
            patch_items, server_only = _partition_primitives(merged, order)
        else:
            patch_items, server_only = _partition_maps(merged, order, merge_key)
        kind = _slice_element_type(original_list, patch_list)
        original[original_key] = _normalize_element_order(
            patch_items, server_only, order, original_list, merge_key, kind
        )
        patch.pop(original_key, None)


def _validate_patch_with_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    if not order or not patch_list:
        return
    if merge_key:
        non_delete, _ = _extract_to_delete_items(patch_list)
    else:
        non_delete = patch_list
    pi = oi = 0
    while pi < len(non_delete) and oi < len(order):
        if isinstance(non_delete[pi], dict) and _DIRECTIVE in non_delete[pi]:
            pi += 1
            continue
        if _merge_key_value_equal(non_delete[pi], order[oi], merge_key):
            pi += 1
        oi += 1
    if pi < len(non_delete) and oi >= len(order):
        raise PatchInternalError(
            f"the order in patch list:\n{_fmt_v(patch_list)}\n doesn't match {_ORDER_PREFIX} list:\n{_fmt_v(order)}"
        )


def _merge_key_value_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return _go_eq(left, right)
    if not isinstance(left, dict):
        raise _bad_arg_type("map[string]interface {}", left)
    if not isinstance(right, dict):
        raise _bad_arg_type("map[string]interface {}", right)
    if merge_key not in left:
        raise _no_merge_key(left, merge_key)
    if merge_key not in right:
        raise _no_merge_key(right, merge_key)
    return _go_eq(left[merge_key], right[merge_key])


def _merge_slice_handler(
    original: Any, patch: Any, elem_schema: Schema | None, strategy: str, merge_key: str, is_delete_list: bool,
    merge: MergeMap = _merge_map,
) -> list[Any]:
    if not isinstance(original, list):
        raise _bad_arg_type("[]interface {}", original)
    if not isinstance(patch, list):
        raise _bad_arg_type("[]interface {}", patch)
    if strategy == _MERGE or is_delete_list:
        return _merge_slice(original, patch, elem_schema, merge_key, is_delete_list, merge)
    return patch


def _slice_element_type(*slices: list[Any]) -> str:
    """``sliceElementType``: the common Go type of the elements, or an error."""
    prev: str | None = None
    for s in slices:
        for v in s:
            t = _go_type(v)
            if prev is None:
                prev = t
                if t == "slice":
                    raise PatchApplyError(_NO_LIST_OF_LISTS)
            elif prev != t:
                raise PatchInternalError(
                    "list element types are not identical: [" + " ".join(_fmt_v(x) for x in slices) + "]"
                )
    if prev is None:
        raise PatchInternalError("no elements in any of the given slices")
    return prev


def _merge_slice(
    original: list[Any], patch: list[Any], elem_schema: Schema | None, merge_key: str, is_delete_list: bool,
    merge: MergeMap = _merge_map,
) -> list[Any]:
    if not original and not patch:
        return original
    if merge_key and not is_delete_list:
        fast = _merge_keyed_maps(original, patch, elem_schema, merge_key, merge)
        if fast is not None:
            return fast
    kind = _slice_element_type(original, patch)
    if kind != "map":
        if is_delete_list:
            return [v for v in original if not any(_go_eq(v, d) for d in patch)]
        merged = _dedup_scalars(original + patch)
    else:
        if not merge_key:
            raise PatchInternalError("cannot merge lists without merge key for struct")
        original, patch = _merge_slice_with_special_elements(original, patch, merge_key)
        merged = _merge_slice_without_special_elements(original, patch, merge_key, elem_schema, merge)
    if not merge_key:
        patch_items, server_only = _partition_primitives(merged, patch)
    else:
        patch_items, server_only = _partition_maps(merged, patch, merge_key)
    return _normalize_element_order(patch_items, server_only, patch, original, merge_key, kind)


def _merge_keyed_maps(
    original: list[Any], patch: list[Any], elem_schema: Schema | None, merge_key: str, merge: MergeMap = _merge_map
) -> list[Any] | None:
    """:func:`_merge_slice` of two lists of maps keyed by distinct string merge-key values (a pod's
    conditions by ``type``), in one pass: None when the general path is needed (issue 22).

    What the general path works out, step by step, for such lists: no patch item carries ``$patch``
    or another ``$`` key (so no merge changes an item's key, and no merged item is a deletion), each
    patch item merges into the original item with its key or is appended; the items the patch names
    come in the patch's order, the others in the original's; ``mergeSortedSlice`` interleaves them,
    an original item first when the patch item is new or comes later in the original. Every check
    the general path makes (element types, merge keys present) holds for such lists, so it raises
    nothing but what the merges raise, in the same order.
    """
    where: dict[str, int] = {}
    for i, o in enumerate(original):
        if type(o) is not dict or _DIRECTIVE in o:
            return None
        x = o.get(merge_key)
        if type(x) is not str or x in where:
            return None
        where[x] = i
    keys: dict[str, int] = {}
    for v in patch:
        if type(v) is not dict:
            return None
        x = v.get(merge_key)
        if type(x) is not str or x in keys:
            return None
        for k in v:
            if k.startswith("$"):  # ($patch, $retainKeys, $setElementOrder/..., $deleteFromPrimitiveList/...)
                return None
        keys[x] = where.get(x, -1)
    at = list(keys.values())  # (each patch item's index in the original, -1: new; in the patch's order)
    right = [v if i < 0 else merge(dict(original[i]), v, elem_schema) for v, i in zip(patch, at)]
    left = [o for o in original if o[merge_key] not in keys]
    if not left:
        return right
    # (_merge_sorted_slice with the positions known: a server-only item goes first when it comes before
    # the patch item in the original, which a new patch item does not)
    out: list[Any] = []
    nl, nr = len(left), len(right)
    i = j = 0
    li = where[left[0][merge_key]]
    while i < nl and j < nr:
        ri = at[j]
        if ri >= 0 and li < ri:
            out.append(left[i])
            i += 1
            if i < nl:
                li = where[left[i][merge_key]]
        else:
            out.append(right[j])
            j += 1
    if i < nl:
        out.extend(left[i:])
    elif j < nr:
        out.extend(right[j:])
    return out


def _dedup_scalars(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if not any(_go_eq(v, o) for o in out):
            out.append(v)
    return out


def _merge_slice_with_special_elements(
    original: list[Any], patch: list[Any], merge_key: str
) -> tuple[list[Any], list[Any]]:
    plain: list[Any] = []
    replace = False
    for v in patch:
        if _DIRECTIVE not in v:
            plain.append(v)
            continue
        directive = v[_DIRECTIVE]
        if directive == _DELETE:
            if merge_key not in v:
                raise _no_merge_key(v, merge_key)
            original = [o for o in original if not _matches_key(o, merge_key, v[merge_key])]
        elif directive == _REPLACE:
            replace = True
        elif directive == _MERGE:
            raise PatchInternalError("merging lists cannot yet be specified in the patch")
        else:
            raise PatchInternalError(f"unknown patch type: {_fmt_s(directive)} in map: {_fmt_v(v)}")
    if replace:
        return plain, []
    return original, plain


def _matches_key(item: Any, key: str, value: Any) -> bool:
    if not isinstance(item, dict):
        raise PatchInternalError("value for key is not a map")
    return key in item and _go_eq(item[key], value)


def _merge_slice_without_special_elements(
    original: list[Any], patch: list[Any], merge_key: str, elem_schema: Schema | None, merge: MergeMap = _merge_map
) -> list[Any]:
    out = list(original)
    # where each merge-key value first occurs (None: a value that needs the scan below)
    where = _key_positions(out, merge_key) if all(type(o) is dict for o in out) else None
    for v in patch:
        if merge_key not in v:
            raise _no_merge_key(v, merge_key)
        value = v[merge_key]
        hk = _hkey(value) if where is not None else None
        if hk is not None:
            assert where is not None
            i = where.get(hk, -1)
            if i >= 0:
                merged = out[i] = merge(dict(out[i]), v, elem_schema)
                if type(merged) is not dict or merge_key not in merged or _hkey(merged[merge_key]) != hk:
                    # the patch changed the key itself (a null drops it): find first occurrences again
                    where = _key_positions(out, merge_key) if all(type(o) is dict for o in out) else None
            else:
                where[hk] = len(out)
                out.append(v)
            continue
        for i, o in enumerate(out):
            if _matches_key(o, merge_key, value):
                out[i] = merge(dict(o), v, elem_schema)
                break
        else:
            out.append(v)
    return out


def _hkey(x: Any) -> tuple[str, Any] | None:
    """A dict key that two values share exactly when :func:`_go_eq` holds (None: not a hashable scalar)."""
    if type(x) is str:  # the commonest merge key
        return ("string", x)
    t = _go_type(x)
    if t == "slice" or t == "map" or x != x:  # containers; NaN equals nothing
        return None
    try:
        hash(x)
    except TypeError:
        return None
    return (t, x)


def _key_positions(items: list[dict[str, Any]], merge_key: str) -> dict[tuple[str, Any], int] | None:
    """First index of each merge-key value among dict items that have it (None if a value is not a scalar)."""
    out: dict[tuple[str, Any], int] = {}
    for i, o in enumerate(items):
        if merge_key in o:
            x = o[merge_key]
            hk = ("string", x) if type(x) is str else _hkey(x)  # (_hkey's commonest case, inline)
            if hk is None:
                return None
            out.setdefault(hk, i)
    return out


def _order_positions(items: list[Any], merge_key: str, kind: str) -> dict[tuple[str, Any], int] | None:
    """:func:`_index` of every value at once: first index by (merge-key) value, None if one is not a scalar."""
    out: dict[tuple[str, Any], int] = {}
    for i, v in enumerate(items):
        x = (v.get(merge_key) if isinstance(v, dict) else None) if kind == "map" else v
        hk = ("string", x) if type(x) is str else _hkey(x)  # (_hkey's commonest case, inline)
        if hk is None:
            return None
        out.setdefault(hk, i)
    return out


def _find(positions: dict[tuple[str, Any], int] | None, items: list[Any], value: Any, merge_key: str,
          kind: str) -> int:
    """:func:`_index` through positions made by :func:`_order_positions` (a scan when there are none)."""
    if positions is None:
        return _index(items, value, merge_key, kind)
    x = (value.get(merge_key) if isinstance(value, dict) else None) if kind == "map" else value
    hk = ("string", x) if type(x) is str else _hkey(x)  # (_hkey's commonest case, inline)
    if hk is None:
        return _index(items, value, merge_key, kind)
    return positions.get(hk, -1)


def _partition_primitives(merged: list[Any], by: list[Any]) -> tuple[list[Any], list[Any]]:
    inside: list[Any] = []
    server_only: list[Any] = []
    for v in merged:
        (inside if any(_go_eq(v, b) for b in by) else server_only).append(v)
    return inside, server_only


def _partition_maps(merged: list[Any], by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    inside: list[Any] = []
    server_only: list[Any] = []
    keys = _key_positions(by, merge_key) if by and all(type(b) is dict for b in by) else None
    for v in merged:
        if not isinstance(v, dict):
            raise _bad_arg_type("map[string]interface {}", v)
        if merge_key not in v:
            raise _no_merge_key(v, merge_key)
        x = v[merge_key]
        hk = (("string", x) if type(x) is str else _hkey(x)) if keys is not None else None
        if hk is not None:
            assert keys is not None
            found = hk in keys
        else:
            found = any(_matches_key(b, merge_key, v[merge_key]) for b in by)
        (inside if found else server_only).append(v)
    return inside, server_only


def _index(items: list[Any], value: Any, merge_key: str, kind: str) -> int:
    if kind == "map":
        want = value.get(merge_key) if isinstance(value, dict) else None
        for i, v in enumerate(items):
            have = v.get(merge_key) if isinstance(v, dict) else None
            if _go_eq(want, have):
                return i
        return -1
    for i, v in enumerate(items):
        if _go_eq(value, v):
            return i
    return -1


def _extract_to_delete_items(items: list[Any]) -> tuple[list[Any], list[Any]]:
    keep: list[Any] = []
    delete: list[Any] = []
    for v in items:
        if not isinstance(v, dict):
            raise _bad_arg_type("map[string]interface {}", v)
        (delete if v.get(_DIRECTIVE) == _DELETE else keep).append(v)
    return keep, delete


def _normalize_slice_order(to_sort: list[Any], order: list[Any], merge_key: str, kind: str) -> list[Any]:
    to_delete: list[Any] = []
    if kind == "map":
        for lst in (to_sort, order):
            for item in lst:
                if not isinstance(item, dict):
                    raise _bad_arg_type("map[string]interface {}", item)
                if merge_key not in item:
                    raise _no_merge_key(item, merge_key)
        to_sort, to_delete = _extract_to_delete_items(to_sort)
    n = len(order)
    positions = _order_positions(order, merge_key, kind)

    def position(item: Any) -> int:
        if positions is not None and kind == "map" and type(item) is dict:
            x = item.get(merge_key)
            if type(x) is str:  # the commonest merge key, looked up without _find
                return positions.get(("string", x), n)
        i = _find(positions, order, item, merge_key, kind)
        return i if i >= 0 else n

    return sorted(to_sort, key=position) + to_delete


def _merge_sorted_slice(
    left: list[Any], right: list[Any], server_order: list[Any], merge_key: str, kind: str
) -> list[Any]:
    """``mergeSortedSlice``: interleave server-only items (left) with patch items (right)."""
    out: list[Any] = []
    positions = _order_positions(server_order, merge_key, kind)
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li = _find(positions, server_order, left[i], merge_key, kind)
            ri = _find(positions, server_order, right[j], merge_key, kind)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


def _normalize_element_order(
    patch_items: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    merge_key: str,
    kind: str,
) -> list[Any]:
    patch_items = _normalize_slice_order(patch_items, patch_order, merge_key, kind)
    server_only = _normalize_slice_order(server_only, server_order, merge_key, kind)
    return _merge_sorted_slice(server_only, patch_items, server_order, merge_key, kind)


# --- two-way strategic merge diff (what a Go client sends: CreateTwoWayMergePatch) ---------------


def create_strategic_merge_patch(original: dict[str, Any], modified: dict[str, Any],
                                 schema: Schema | None) -> dict[str, Any]:
    """The strategic merge patch that turns ``original`` into ``modified`` (``CreateTwoWayMergePatch``).

    What the kubelet's status manager sends: changed and new keys, null for removed ones;
    lists with the ``merge`` strategy by merge key send only their changed or new items,
    ``{<merge key>: <value>, "$patch": "delete"}`` for the removed ones and ``$setElementOrder/<field>``
    with the order of the new list (primitive merge lists: ``$deleteFromPrimitiveList/<field>``);
    other lists are sent whole when they changed. ``schema`` is the kind's root schema
    (``openapi.builtin_schema``). Equal documents give ``{}``.
    """
    return _diff_maps(original, modified, schema)


def _diff_maps(original: dict[str, Any], modified: dict[str, Any], schema: Schema | None) -> dict[str, Any]:
    patch: dict[str, Any] = {}
    for k in original:
        if k not in modified:
            patch[k] = None
    for k, mv in modified.items():
        ov = original.get(k, _ABSENT_KEY)
        if ov is _ABSENT_KEY:
            patch[k] = mv
            continue
        if ov is mv:
            continue
        to, tm = _go_type(ov), _go_type(mv)
        if to != tm:
            patch[k] = mv
        elif tm == "map":
            sub = _diff_maps(ov, mv, _child(schema, k))
            if sub:
                patch[k] = sub
        elif tm == "slice":
            _diff_lists(patch, k, ov, mv, _child(schema, k))
        elif ov != mv:
            patch[k] = mv
    return patch


_ABSENT_KEY: Any = object()

#: :func:`_child` answers by (schema node id, key), with the node kept (its id stays its own).
_CHILDREN: dict[tuple[int, str], tuple[Any, Schema | None]] = {}


def _child(schema: Schema | None, key: str) -> Schema | None:
    """``openapi.child``, worked out once per schema node and key (the kubelet's diffs: built-in schemas,
    which live as long as the process; issue 22)."""
    hit = _CHILDREN.get((id(schema), key))
    if hit is not None and hit[0] is schema:
        return hit[1]
    sub = openapi.child(schema, key)
    _CHILDREN[(id(schema), key)] = (schema, sub)
    return sub


def _diff_lists(patch: dict[str, Any], key: str, original: list[Any], modified: list[Any],
                schema: Schema | None) -> None:
    """Add to ``patch`` what turns list ``original`` into ``modified`` at ``key`` (nothing when equal)."""
    _, strategy = _strategy(schema)
    if original == modified and all(_go_type(a) == _go_type(b) for a, b in zip(original, modified)):
        return
    if strategy != _MERGE:
        patch[key] = modified
        return
    merge_key = openapi.patch_merge_key(schema)
    items = openapi.items(schema)
    if merge_key and all(type(v) is dict and merge_key in v and _hkey(v[merge_key]) is not None
                         for v in (*original, *modified)) and _unique_keys(original, merge_key) and _unique_keys(
                             modified, merge_key):
        by_key = {_hkey(v[merge_key]): v for v in original}
        changed: list[Any] = []
        for v in modified:
            old = by_key.get(_hkey(v[merge_key]))
            if old is None:
                changed.append(v)
                continue
            sub = _diff_maps(old, v, items)
            if sub:
                changed.append({merge_key: v[merge_key], **sub})
        kept = {_hkey(v[merge_key]) for v in modified}
        deleted = [{merge_key: v[merge_key], _DIRECTIVE: _DELETE} for v in original if _hkey(v[merge_key]) not in kept]
        patch[f"{_ORDER_PREFIX}/{key}"] = [{merge_key: v[merge_key]} for v in modified]
        if changed or deleted:
            patch[key] = changed + deleted
        return
    if not merge_key and all(_hkey(v) is not None for v in (*original, *modified)) and len(
            {_hkey(v) for v in original}) == len(original) and len({_hkey(v) for v in modified}) == len(modified):
        new = {_hkey(v) for v in modified}
        old = {_hkey(v) for v in original}
        added = [v for v in modified if _hkey(v) not in old]
        removed = [v for v in original if _hkey(v) not in new]
        patch[f"{_ORDER_PREFIX}/{key}"] = list(modified)
        if added:
            patch[key] = added
        if removed:
            patch[f"{_DELETE_PREFIX}/{key}"] = removed
        return
    patch[key] = [*modified, {_DIRECTIVE: _REPLACE}]  # items the diff cannot key: the whole list, replacing


def _unique_keys(items: list[dict[str, Any]], merge_key: str) -> bool:
    return len({_hkey(v[merge_key]) for v in items}) == len(items)
