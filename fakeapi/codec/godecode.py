"""What a Go controller holds after reading an object: ``json.Unmarshal`` into its typed struct.

Reading and writing are not symmetric in Go. ``json.Unmarshal`` turns ``[]``
into an empty, non-nil slice and ``{}`` into an empty, non-nil map; only
``json.Marshal`` drops them again (``omitempty``). A controller that compares
the template it read (``env: []``) with the object it wrote earlier (no
``env``) with a strict comparison sees a difference on every reconcile: the
drift bug of docs/ARC.md. :func:`go_decode` keeps exactly that difference
visible: it is :func:`~fakeapi.codec.gomodel.go_roundtrip` (unknown fields dropped,
zero values of non-omitempty fields filled in, times normalised) except that
empty slices and maps that were present stay present, and quantities keep the
text they were written with (``1000m`` and ``1`` are different Go values under
``reflect.DeepEqual``; :func:`~fakeapi.codec.semantic.semantic_equal` compares them
by value).
"""

from __future__ import annotations

from typing import Any

from fakeapi.codec.gomodel import OMIT, GoType, field_plan, go_roundtrip
from fakeapi.machinery.jsonutil import freeze_json, json_copy, thaw_json, without_managed


def go_decode(obj: Any, t: GoType | None) -> Any:
    """The typed value a Go client holds after decoding ``obj`` (a new object; ``obj`` is not mutated)."""
    out = go_roundtrip(obj, t)
    if t is not None:
        _restore(obj, out, t)
    return out


def _restore(src: Any, dst: Any, t: GoType) -> None:
    """Put back into ``dst`` the empty slices/maps and quantity texts of ``src`` that encoding changed."""
    kind = t.kind
    if kind == "struct":
        if type(src) is not dict or type(dst) is not dict:
            return
        fields = t.fields
        for key, value in src.items():
            f = fields.get(key)
            if f is None or value is None:
                continue
            ft = f.type
            if ft.kind in _RESTORED:
                inert = ft._inert  # (_skips, inline)
                if not ((_is_inert(ft) if inert is None else inert) and (value or ft.kind == "struct")):
                    _restore_member(dst, key, value, ft)
    elif kind == "slice":
        elem = t.elem
        if type(src) is list and type(dst) is list and elem is not None and not _is_inert(elem):
            for a, b in zip(src, dst):
                _restore(a, b, elem)
    elif kind == "map" and type(src) is dict and type(dst) is dict and t.elem is not None:
        elem = t.elem
        if elem.kind not in _RESTORED:
            return  # (_restore_member does nothing for such a value)
        for key, value in src.items():
            if value is not None and key in dst and not _skips(elem, value):
                _restore_member(dst, key, value, elem)


def _is_inert(t: GoType) -> bool:
    """Can :func:`_restore` of a value of type ``t`` change nothing, whatever the value? (Remembered on the type.)

    A struct none of whose fields is a slice, map or quantity, or a struct that is not inert; a slice of
    inert elements; a map whose values are neither slices, maps, quantities nor structs that are not
    inert; any scalar but a quantity (taken as not inert: :func:`_restore_member` restores its text).
    A recursive type is taken as not inert while it is worked out (so, at worst, walked for nothing).
    """
    r = t._inert
    if r is None:
        t._inert = False  # (while being worked out)
        k = t.kind
        if k == "struct":
            r = all(f.type.kind not in _RESTORED or (f.type.kind == "struct" and _is_inert(f.type))
                    for f in t.fields.values())
        elif k == "slice":
            r = t.elem is None or _is_inert(t.elem)
        elif k == "map":
            e = t.elem
            r = e is None or e.kind not in _RESTORED or (e.kind == "struct" and _is_inert(e))
        else:
            r = k != "quantity"
        t._inert = r
    return r


def _skips(ft: GoType, value: Any) -> bool:
    """Would :func:`_restore_member` of ``value`` (a field or map value of type ``ft``, a kind in
    ``_RESTORED``) change nothing? Yes for an inert struct, or a non-empty slice or map of an inert type
    (an empty one is put back as it was)."""
    inert = ft._inert
    if inert is None:
        inert = _is_inert(ft)
    return inert and (ft.kind == "struct" or bool(value))


def _restore_member(dst: dict[str, Any], key: str, value: Any, ft: GoType) -> None:
    fk = ft.kind
    if fk == "slice" and type(value) is list:
        if not value:
            dst[key] = []
        elif key in dst:
            _restore(value, dst[key], ft)
    elif fk == "map" and type(value) is dict:
        if not value:
            dst[key] = {}
        elif key in dst:
            _restore(value, dst[key], ft)
    elif fk == "struct":
        if key in dst:
            _restore(value, dst[key], ft)
    elif fk == "quantity" and key in dst and type(value) in (str, int, float):
        dst[key] = value


class DecodeCache:
    """The decoded form of stored snapshots, one per object, shared by everything that reads through the codec.

    A snapshot the server stored is never mutated, so once a client has decoded the object
    it wrote (or an informer the object it cached), every later read of the same snapshot
    only needs a copy of that result, or no copy at all for a reader that promises not to
    mutate what it gets (``copy=False``: controller-runtime's ``UnsafeDisableDeepCopy``).
    Entries are keyed by object and hold the snapshot they were made from: a newer snapshot
    (or the same object read at another version) replaces it.

    With ``check`` (``FAKEAPI_CHECK_SNAPSHOTS=1``) every decoded form is serialised when it is
    made and compared again whenever it is read, replaced or dropped: a caller that mutated a
    form it was handed without a copy is caught (:class:`~fakeapi.codec.snapshots.SnapshotMutated`).

    The entry of a deleted object is kept a little longer (the last :data:`_GONE_MAX` deleted
    objects), apart: the last state of an object its last finalizer's removal deleted (the
    answer to that write) is decoded against it, not from scratch, and kept there, not as a
    live object's entry.
    """

    def __init__(self, *, check: bool = False) -> None:
        #: (snapshot, decoded, kind, decoded serialised for copies, or None until first needed) by object
        self._memo: dict[tuple[str, str, str, str], tuple[Any, Any, Any, bytes | None]] = {}
        #: The entries of recently deleted objects, oldest first (see the class docstring).
        self._gone: dict[tuple[str, str, str, str], tuple[Any, Any, Any, bytes | None]] = {}
        #: (Go type, decoded value) by (id of the Go type, serialised value): see :meth:`_decode_new`
        self._by_content: dict[tuple[int, bytes], tuple[GoType, Any]] = {}
        self.check = check

    def decode(self, kind: Any, snapshot: dict[str, Any], *, copy: bool = True) -> dict[str, Any]:
        """What a Go client holds after reading ``snapshot`` of ``kind`` (TypeMeta filled in).

        A fresh object, or with ``copy=False`` the shared decoded form itself (read-only).
        """
        meta = snapshot.get("metadata") or {}
        key = (kind.group, kind.plural, meta.get("namespace") or "", meta.get("name") or "")
        memo = self._memo
        hit = memo.get(key)
        if hit is None and self._gone and meta.get("deletionTimestamp"):  # the last state of a deleted object
            hit = self._gone.get(key)
            if hit is not None:
                memo = self._gone
        if hit is not None and self.check:
            _verify(key, hit)
        if hit is not None and hit[2] is kind and hit[0] is snapshot:
            out = hit[1]
        else:
            if kind.builtin or kind.go_type is None:  # stored as Go encodes it (a typed built-in), or untyped
                if snapshot.get("apiVersion") == kind.api_version and snapshot.get("kind") == kind.kind:
                    out = snapshot  # the snapshot is its own decoded form (and never mutated)
                else:
                    out = json_copy(snapshot)
                    out["apiVersion"], out["kind"] = kind.api_version, kind.kind
            else:
                if hit is not None and hit[2] is kind:
                    out = _decode_reusing(snapshot, kind.go_type, hit[0], hit[1])
                else:  # go_decode, in one walk of the structs (not an encoding, then a restoring walk)
                    out = self._decode_new(snapshot, kind.go_type)
                out["apiVersion"], out["kind"] = kind.api_version, kind.kind
            hit = memo[key] = (snapshot, out, kind, freeze_json(out) if self.check else None)
        if not copy:
            return out
        frozen = hit[3]
        managed = (out.get("metadata") or {}).get("managedFields")
        if frozen is None:  # made once, for every copy (in check mode: made with the decoded form, in full)
            frozen = freeze_json(without_managed(out) if managed else out)
            memo[key] = (snapshot, out, kind, frozen)
        copied: dict[str, Any] = thaw_json(frozen, out)
        if managed and frozen is not None:
            # (shared, read-only: the Go codec never copies managedFields either; see gomodel.RAW_MANAGED)
            copied["metadata"]["managedFields"] = managed
        return copied

    def _decode_new(self, snapshot: dict[str, Any], t: GoType) -> Any:
        """The decoded form of an object seen for the first time (or again after its deletion).

        Objects of a kind are often made from one template: the runners of a set share their
        ``spec``. So a top-level struct field other than ``metadata`` whose content (its
        serialised form) was decoded before, with the same Go type, takes that decoded value
        (shared: decoded values are never mutated); the others are decoded, and remembered.
        """
        fields = t.fields
        prev: dict[str, Any] | None = None
        prev_out: dict[str, Any] | None = None
        todo: list[tuple[str, GoType, bytes]] | None = None
        shared = self._by_content
        for k, v in snapshot.items():
            if k == "metadata" or type(v) is not dict or not v:
                continue
            f = fields.get(k)
            if f is None or f.type.kind != "struct":
                continue
            raw = freeze_json(v)
            if raw is None or b"null" in raw:  # (NaN and infinities serialise as null: never keyed)
                continue
            ft = f.type
            found = shared.get((id(ft), raw))
            if found is not None and found[0] is ft:
                if prev is None or prev_out is None:
                    prev, prev_out = {}, {}
                prev[k], prev_out[k] = v, found[1]  # reused by _decode_reusing: the value *is* prev's
            else:
                if todo is None:
                    todo = []
                todo.append((k, ft, raw))
        out = _decode_reusing(snapshot, t, prev if prev is not None else _NO_PREV,
                              prev_out if prev_out is not None else _NO_PREV)
        if todo is not None:
            if len(shared) + len(todo) > _BY_CONTENT_MAX:
                shared.clear()
            for k, ft, raw in todo:
                if k in out:
                    shared[(id(ft), raw)] = (ft, out[k])
        return out

    def forget(self, group: str, plural: str, namespace: str, name: str) -> None:
        """Set aside the entry of a deleted object (kept among the last deleted, see the class docstring)."""
        key = (group, plural, namespace, name)
        hit = self._memo.pop(key, None)
        if hit is None:
            return
        if self.check:
            _verify(key, hit)
        gone = self._gone
        gone.pop(key, None)
        gone[key] = hit
        if len(gone) > _GONE_MAX:
            old_key = next(iter(gone))
            old = gone.pop(old_key)
            if self.check:
                _verify(old_key, old)

    def check_all(self) -> None:
        """With ``check``: verify that no decoded form handed out was mutated."""
        if self.check:
            for memo in (self._memo, self._gone):
                for key, hit in memo.items():
                    _verify(key, hit)

    def __len__(self) -> int:
        return len(self._memo)



def _verify(key: tuple[str, str, str, str], hit: tuple[Any, Any, Any, bytes | None]) -> None:
    """Raise SnapshotMutated when a decoded form no longer serialises as it did when it was made."""
    frozen = hit[3]
    if frozen is None:
        return  # not made in check mode, or not something orjson carries
    now = freeze_json(hit[1])
    if now != frozen:
        from fakeapi.codec.snapshoterrors import SnapshotMutated

        group, plural, namespace, name = key
        what = f"{plural}.{group}" if group else plural
        raise SnapshotMutated(
            f"the decoded form of {what} {namespace + '/' if namespace else ''}{name}, handed out without a copy "
            f"(unsafe_disable_deep_copy), was mutated:\n  was: {frozen.decode(errors='replace')}\n"
            f"  now: {(now or b'').decode(errors='replace')}")


_NONE: Any = object()
#: How many deleted objects' entries :class:`DecodeCache` keeps.
_GONE_MAX = 64
#: How many decoded values :meth:`DecodeCache._decode_new` keeps by content (then it starts again).
_BY_CONTENT_MAX = 256
#: The previous snapshot and decoded form of an object decoded for the first time: nothing to reuse.
_NO_PREV: dict[str, Any] = {}
#: The kinds :func:`_restore_member` does something for.
_RESTORED = frozenset({"slice", "map", "struct", "quantity"})


def _decode_reusing(obj: dict[str, Any], t: GoType | None, prev: dict[str, Any], prev_out: dict[str, Any]) -> Any:
    """:func:`go_decode` of ``obj``, a newer snapshot of ``prev`` (decoded as ``prev_out``).

    A write shares the parts it leaves unchanged with the snapshot it replaces, so a value
    that *is* ``prev``'s at the same field decodes as it did then: ``prev_out``'s value is
    reused (decoded values are only ever handed out as copies). A struct value that changed
    is decoded the same way, field by field, against its previous value; the other fields
    are decoded as :func:`go_decode` does, and keys come out in the order it gives them:
    fields as in ``obj``, then the zero values of absent fields, then the empty slices and
    maps that encoding omits and decoding keeps.
    """
    if t is None:
        return json_copy(obj)
    if t.kind != "struct" or type(obj) is not dict:
        return go_decode(obj, t)
    plan, absent = t._plan, t._absent
    if plan is None or absent is None:
        plan, absent = field_plan(t)
    if prev is not _NO_PREV and type(prev_out) is dict and len(obj) == len(prev) and list(obj) == list(prev):
        done = _decode_changes(obj, t, prev, prev_out)
        if done is not None:
            return done
    scalars = t._scalars
    fields = t.fields
    out: dict[str, Any] = {}
    kept: list[tuple[str, Any, GoType]] | None = None
    for k, v in obj.items():
        tv = type(v)
        sc = scalars.get(k)
        if sc is not None and tv is sc[0]:  # a string, int or bool as Go encodes it: nothing to restore
            if v or not sc[1]:
                out[k] = v
            continue
        f = fields.get(k)
        if f is None:
            continue  # not a field of the Go type: dropped
        if tv is not dict and tv is not list:
            if prev.get(k, _NONE) is v:  # an unchanged scalar (a time, a quantity...): decoded as it was
                po = prev_out.get(k, _NONE)
                if po is not _NONE:
                    out[k] = po
                continue  # (not in prev_out: omitted then, omitted now; a scalar is never kept last)
        elif v:  # (an empty container may be omitted, then kept last: decoded below)
            po = prev_out.get(k, _NONE)
            if po is not _NONE:
                pv = prev.get(k, _NONE)
                if pv is v:
                    out[k] = po
                    continue
                if tv is dict and type(pv) is dict and type(po) is dict and f.type.kind == "struct":
                    out[k] = _decode_reusing(v, f.type, pv, po)  # a changed struct: reuse what it shares
                    continue
            if tv is dict and f.type.kind == "struct":
                out[k] = _decode_reusing(v, f.type, _NO_PREV, _NO_PREV)  # a new struct: decoded in one walk
                continue
        r = plan[k](v)
        if r is not OMIT:
            out[k] = r
            ft = f.type
            if v is not None and ft.kind in _RESTORED:
                inert = ft._inert  # (_skips, inline)
                if not ((_is_inert(ft) if inert is None else inert) and (v or ft.kind == "struct")):
                    _restore_member(out, k, v, ft)
        elif v is not None:
            if kept is None:
                kept = []
            kept.append((k, v, f.type))
    for name, zf in absent:
        if name not in obj:
            out[name] = zf()
    if kept is not None:
        for k, v, ft in kept:
            _restore_member(out, k, v, ft)
    return out


def _decode_changes(obj: dict[str, Any], t: GoType, prev: dict[str, Any], prev_out: dict[str, Any]) -> Any:
    """:func:`_decode_reusing` of a struct whose keys are ``prev``'s, in the same order: ``prev_out``
    with the changed fields decoded again, or None when a change would move keys (a field omitted
    before and present now, or an empty slice or map kept last), which the full walk handles.

    The full walk gives fields as in ``obj``, then the zero values of absent fields, then the kept
    empties; with the same keys in the same order the absent and kept fields are ``prev_out``'s,
    and a field decoded in place before and after keeps its place.
    """
    plan = t._plan
    assert plan is not None
    scalars = t._scalars
    fields = t.fields
    out = prev_out.copy()
    for k, v in obj.items():
        pv = prev[k]
        if pv is v:
            continue
        tv = type(v)
        sc = scalars.get(k)
        if sc is not None and tv is sc[0] and type(pv) is tv:  # a scalar as Go encodes it
            if v or not sc[1]:
                if k not in out:
                    return None  # omitted before: it would move
                out[k] = v
            else:
                out.pop(k, None)  # omitted now (a scalar is never kept last)
            continue
        f = fields.get(k)
        if f is None:
            continue  # not a field of the Go type: dropped, as before
        po = out.get(k, _NONE)
        if po is _NONE or not v or not pv or type(pv) is not tv:  # (an empty value before may have been kept last)
            return None
        ft = f.type
        if tv is dict and ft.kind == "struct":
            out[k] = _decode_reusing(v, ft, pv, po) if type(po) is dict else _decode_reusing(v, ft, _NO_PREV, _NO_PREV)
            continue
        r = plan[k](v)
        if r is OMIT:
            return None
        out[k] = r
        if ft.kind in _RESTORED:
            inert = ft._inert  # (_skips, inline)
            if not ((_is_inert(ft) if inert is None else inert) and (v or ft.kind == "struct")):
                _restore_member(out, k, v, ft)
    return out
