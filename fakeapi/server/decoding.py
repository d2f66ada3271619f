"""The server's decode checks: what a Go decoder would refuse in a request body (400 or 422).

A built-in kind is decoded into its Go struct before anything else happens to a request: a
body, or a patched object, that does not fit is refused with the decoder's own message, and
metadata a Go decoder could not unmarshal into ObjectMeta is refused for every kind
(:func:`check_meta_types`). Used by the pipeline's decode step (:mod:`fakeapi.server.pipeline`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakeapi.codec.gomodel import GoType
from fakeapi.codec.gounmarshal import unmarshal_error
from fakeapi.codec.snapshoterrors import NotGoEncoded
from fakeapi.machinery import bodycheck, errors
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.jsonutil import freeze_json, json_copy
from fakeapi.machinery.jsonutil import go_json_type as _json_type
from fakeapi.machinery.lazymodule import lazy_module
from fakeapi.machinery.metavalidation import go_json, invalid
from fakeapi.registry.kinds import Kind

if TYPE_CHECKING:
    from fakeapi.codec import fromunstructured
else:  # (imported on a server's first strategic merge patch; issue 22)
    fromunstructured = lazy_module(__name__, "fakeapi.codec.fromunstructured")

_META_STRING_MAPS = ("labels", "annotations")
_META_STRINGS = ("name", "generateName", "namespace", "uid", "resourceVersion", "creationTimestamp",
                 "deletionTimestamp")
_NO_BASE: dict[str, Any] = {}


def check_meta_types(kind: Kind, meta: dict[str, Any], base: dict[str, Any] | None = None,
                     keys: list[str] | None = None) -> None:
    """Reject metadata a Go decoder could not unmarshal into ObjectMeta (400); drop its nulls and empties.

    ``base``: stored metadata whose maps and lists ``meta`` may share (checked when stored).
    One pass over the keys settles the common case (every value of its Go type); anything
    else goes through :func:`_check_meta_types_in_order`, which raises the first error in
    the order the Go decoder reports them. ``keys``: the only keys whose values may need it
    (the others hold ``base``'s own values, neither null nor empty: checked when stored).
    """
    b = base if base is not None else _NO_BASE
    nulls = empties = False
    for k, v in meta.items() if keys is None else ((k, meta[k]) for k in keys):
        if v is None:
            nulls = True
            continue
        want = _META_WANT.get(k)
        if want is None:
            continue  # (a field the decoder does not check here)
        tv = type(v)
        if want is str:
            if tv is not str:
                break
        elif want is dict:  # labels, annotations: map[string]string
            if v is b.get(k):
                if not v:
                    empties = True
                continue
            if tv is not dict:
                break
            if not v:
                empties = True
            elif not _ONLY_STR.issuperset(map(type, v.values())):
                break
        elif want is list:  # finalizers: []string
            if v is b.get(k):
                if not v:
                    empties = True
                continue
            if tv is not list or not _ONLY_STR.issuperset(map(type, v)):
                break
            if not v:
                empties = True
        elif want is int:  # generation, deletionGracePeriodSeconds: int64
            if tv is not int:
                break
        else:  # ownerReferences
            if v is b.get(k):
                if not v:
                    empties = True
                continue
            if tv is not list or not all(type(r) is dict and _owner_ref_typed(r) for r in v):
                break
            if not v:
                empties = True
    else:
        if nulls:
            for f in [f for f, v in meta.items() if v is None]:
                del meta[f]
        if empties:
            for f in _META_DROPPED_EMPTY:
                if f in meta and not meta[f]:
                    del meta[f]
        return
    _check_meta_types_in_order(meta, base)


def check_go_decodes(kind: Kind, body: dict[str, Any], base: dict[str, Any] | None = None) -> None:
    """A create or update body of a built-in kind must decode into its Go struct: else 400.

    The handler decodes before anything else (``transformDecodeError``), so this error wins
    over every validation error. Custom resources decode as unstructured JSON: not checked.
    ``base``: a stored object whose values ``body`` shares (an apply's merge): those are not walked.
    """
    if not kind.stored_go_encoded:
        return
    bad = unmarshal_error(body, kind.go_type, base=base)
    if bad is not None:
        raise errors.bad_request(f'{kind.kind} in version "{kind.version}" cannot be handled as a {kind.kind}: {bad}')


def check_patched_go_decodes(kind: Kind, ptype: str, patch: Any, result: dict[str, Any],
                             base: dict[str, Any] | None = None) -> None:
    """A patched built-in must decode into its Go struct: else 422 ``patch: Invalid value`` (patch.go).

    JSON and merge patches decode the patched JSON (a Go map marshalled: keys sorted); a
    strategic merge patch's result goes through the unstructured converter. The stored object
    decodes, so only values the patch brings can fail: the patch is checked first (small), and
    the result only when the patch has a value of the wrong type (a JSON Patch: its values at their
    paths, :func:`_json_patch_values_decode`).
    """
    t = kind.go_type
    if ptype == "strategic":
        bad = (fromunstructured.from_unstructured_error(result, t)
               if fromunstructured.from_unstructured_error(patch, t) is not None else None)
    elif (ptype == "merge" and unmarshal_error(patch, t) is None) or (
            ptype == "json" and _json_patch_values_decode(patch, t)):
        bad = None
    else:
        bad = unmarshal_error(result, t, sorted_keys=True, base=base)  # (``base``: the stored object patched)
    if bad is not None:
        raise patch_invalid(ptype, patch, result, bad)


def _json_patch_values_decode(ops: Any, t: GoType) -> bool:
    """Does every value a JSON Patch puts in the object decode as the Go type at its path (issue 22)?

    True settles that the patched object decodes (its other values are the stored object's, which does):
    every operation is a ``test``, a ``remove``, or an ``add`` / ``replace`` whose path leads through
    known fields to a type its value decodes as. False (a ``move`` or ``copy``, a path this cannot follow,
    a value of the wrong type) settles nothing: the patched object is decoded, for the decoder's message.
    """
    if type(ops) is not list:
        return False
    for op in ops:
        if type(op) is not dict:
            return False
        verb = op.get("op")
        if verb == "test" or verb == "remove":
            continue
        if verb != "add" and verb != "replace":
            return False
        at = _go_type_at(t, op.get("path"))
        if at is None or unmarshal_error(op.get("value"), at) is not None:
            return False
    return True


def _go_type_at(t: GoType, path: Any) -> GoType | None:
    """The Go type at a JSON Pointer into a value of type ``t`` (None: not one this follows)."""
    if type(path) is not str or (path and path[0] != "/"):
        return None
    if not path:
        return t
    for token in path[1:].split("/"):
        kind = t.kind
        if kind == "struct":
            f = t.fields.get(token.replace("~1", "/").replace("~0", "~"))
            if f is None:
                return None
            t = f.type
        elif kind == "map" or (kind == "slice" and (token == "-" or (token.isascii() and token.isdigit()))):
            if t.elem is None:
                return None
            t = t.elem
        elif kind == "any" or kind == "union":
            return t  # (nothing below is checked by the decoder)
        else:
            return None
    return t


def patch_invalid(ptype: str, patch: Any, result: dict[str, Any], message: str) -> ApiError:
    """patch.go's 422 for a patched object that does not decode: ``"" is invalid: patch: Invalid value: …``.

    The value shown is the patched object's JSON (JSON and merge patches) or the patch map as
    Go's ``%+v`` prints it (strategic merge patches). The real object's JSON also holds its
    managedFields, which this server does not keep.
    """
    value = fromunstructured.go_sprint(patch) if ptype == "strategic" else go_json(result, sort_keys=True)
    return errors.invalid("", "", "", [invalid("patch", value, message)])


def check_go_json(what: str, body: Any) -> None:
    """Raise NotGoEncoded when a ``go_encoded`` body (or patch) holds anything but JSON values: what the body
    check trusts of it (``json_only``: a Go client sends JSON; checked with ``FAKEAPI_CHECK_SNAPSHOTS=1``).
    A body orjson cannot write takes the body check's walk, trusted or not: it is not looked at here."""
    if bodycheck.is_json_only(body) is False:
        raise NotGoEncoded(f"a go_encoded {what} holds a value that is not JSON: {body!r}"[:2000])


def check_go_meta(kind: Kind, meta: dict[str, Any]) -> None:
    """Raise NotGoEncoded unless ``meta`` is as a Go client marshals ObjectMeta: what
    :meth:`APIServer._decode` trusts of a ``go_encoded`` body (checked with ``FAKEAPI_CHECK_SNAPSHOTS=1``)."""
    from fakeapi.schema.structural import metadata_could_prune

    probe = json_copy(meta)
    try:
        check_meta_types(kind, probe)
    except ApiError as e:
        raise NotGoEncoded(f"go_encoded metadata of a {kind.kind} has a value of the wrong type: {e}") from e
    if probe != meta or metadata_could_prune(meta, None):
        raise NotGoEncoded(f"go_encoded metadata of a {kind.kind} is not as Go encodes it: {meta!r}")


def check_go_body(kind: Kind, obj: dict[str, Any], meta: dict[str, Any], base: dict[str, Any] | None,
                  copied: dict[str, Any]) -> None:
    """Raise NotGoEncoded unless the decode walk makes of ``obj`` (``meta`` its metadata, ``base`` as for
    the walk) what :meth:`APIServer._decode` made of a ``go_body`` with a plain copy, ``copied``, without
    a warning (checked with ``FAKEAPI_CHECK_SNAPSHOTS=1``)."""
    assert kind.compiled is not None
    walked, warnings = kind.compiled.prepare_copy(obj, meta, base=base, prune_metadata=False)
    a, b = freeze_json(walked), freeze_json(copied)
    if warnings or (a != b if a is not None and b is not None else walked != copied):
        raise NotGoEncoded(f"a go_encoded body of a {kind.kind} is not as Go encodes it: the decoder "
                           f"would change it ({', '.join(warnings) or 'its values'})")


#: The maps and lists of ObjectMeta a Go decoder leaves nil when empty (omitempty drops them).
_META_DROPPED_EMPTY = (*_META_STRING_MAPS, "finalizers", "ownerReferences")
#: The Go type :func:`check_meta_types` expects of each ObjectMeta field it checks (``tuple``:
#: ownerReferences, a list of OwnerReference structs).
_META_WANT: dict[str, Any] = {
    **dict.fromkeys(_META_STRINGS, str), **dict.fromkeys(_META_STRING_MAPS, dict),
    "finalizers": list, "ownerReferences": tuple, "generation": int, "deletionGracePeriodSeconds": int,
}
#: (``_ONLY_STR.issuperset(map(type, values))``: are all the values strings? checked in C)
_ONLY_STR = frozenset({str})
_OWNER_REF_STRINGS = ("apiVersion", "kind", "name", "uid")
_OWNER_REF_BOOLS = ("controller", "blockOwnerDeletion")
_OWNER_REF_TYPES = tuple((f, str) for f in _OWNER_REF_STRINGS) + tuple((f, bool) for f in _OWNER_REF_BOOLS)


def _owner_ref_typed(ref: dict[str, Any]) -> bool:
    """Does every typed field of an ownerReference hold its Go type (or null)?"""
    for f, t in _OWNER_REF_TYPES:
        v = ref.get(f)
        if v is not None and type(v) is not t:
            return False
    return True


def _check_meta_types_in_order(meta: dict[str, Any], base: dict[str, Any] | None) -> None:
    """:func:`check_meta_types`, field by field in the Go decoder's order (the first error is raised)."""
    def fail(field_name: str, v: Any, go_type: str) -> None:
        raise errors.bad_request(
            f"json: cannot unmarshal {_json_type(v)} into Go struct field ObjectMeta.metadata.{field_name} "
            f"of type {go_type}")

    b = base if base is not None else _NO_BASE
    for f in _META_STRINGS:
        v = meta.get(f)
        if v is not None and not isinstance(v, str):
            fail(f, v, "string")
    for f in _META_STRING_MAPS:
        v = meta.get(f)
        if v is None or v is b.get(f):
            continue
        if not isinstance(v, dict):
            fail(f, v, "map[string]string")
        for val in v.values():
            if val is not None and not isinstance(val, str):
                fail(f, val, "string")
    fins = meta.get("finalizers")
    if fins is not None and fins is not b.get("finalizers") and (
            not isinstance(fins, list) or not all(isinstance(x, str) for x in fins)):
        fail("finalizers", fins, "[]string")
    refs = meta.get("ownerReferences")
    if refs is not None and refs is not b.get("ownerReferences"):
        if not isinstance(refs, list) or not all(isinstance(x, dict) for x in refs):
            fail("ownerReferences", refs, "[]v1.OwnerReference")
        for ref in refs:
            for f in _OWNER_REF_STRINGS:
                if ref.get(f) is not None and not isinstance(ref[f], str):
                    fail(f"ownerReferences.{f}", ref[f], "string")
            for f in _OWNER_REF_BOOLS:
                if ref.get(f) is not None and not isinstance(ref[f], bool):
                    fail(f"ownerReferences.{f}", ref[f], "bool")
    grace = meta.get("deletionGracePeriodSeconds")
    if grace is not None and (isinstance(grace, bool) or not isinstance(grace, int)):
        fail("deletionGracePeriodSeconds", grace, "int64")
    gen = meta.get("generation")
    if gen is not None and (isinstance(gen, bool) or not isinstance(gen, int)):
        fail("generation", gen, "int64")
    # drop explicit nulls the Go decoder would leave at zero
    for f in [f for f, v in meta.items() if v is None]:
        del meta[f]
    for f in _META_DROPPED_EMPTY:
        if f in meta and not meta[f]:
            del meta[f]
