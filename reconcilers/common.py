"""Helpers shared by the three controllers: the context they get, finalizers, errors, owned runners."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any, Protocol

from fakeapi.host.client import Client
from fakeapi.machinery.errors import ApiError, is_not_found
from fakeapi.machinery.jsonutil import json_copy
from fakeapi.machinery.patches import create_merge_patch
from fakeapi.server.clock import parse_time

from . import constants as c
from .resourcebuilder import EMPTY, meta

Obj = dict[str, Any]

#: The controllers read shared objects, not copies (``with_options(unsafe_disable_deep_copy=...)``).
#: ARC's Go controllers get deep copies; this port never mutates an object it read or was
#: answered (:func:`mutate` and the resource builders copy before they change anything), so
#: what it does is the same, without a copy per read. The project's tests run with
#: ``FAKEAPI_CHECK_SNAPSHOTS=1``, which fails on any mutation of a shared object.
SHARED_READS = True

#: The kinds ARC's manager reads from the server, never from its cache: upstream main.go builds the
#: manager's client with ``client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{
#: &corev1.Secret{}, &corev1.ConfigMap{}}}}`` (``with_options(disable_cache_for=...)``). A JIT secret
#: read right after it was created is then never missed by a cache that is behind.
UNCACHED_KINDS = ("Secret", "ConfigMap")


class ClientLike(Protocol):
    """The part of :class:`fakeapi.host.client.Client` the controllers use."""

    def get(self, kind: str, name: str, namespace: str | None = None, *, api_version: str | None = None) -> Obj:
        """Get one object."""

    def list(self, kind: str, namespace: str | None = None, *, api_version: str | None = None,
             labels: str | dict[str, str] | None = None, fields: str | dict[str, str] | None = None) -> list[Obj]:
        """List objects."""

    def create(self, obj: Obj) -> Obj:
        """Create an object."""

    def patch(self, kind: str, name: str, patch: Any, *, namespace: str | None = None,
              api_version: str | None = None, patch_type: str = "merge", subresource: str | None = None,
              read_answer: bool = True) -> Obj:
        """Send a raw patch (``read_answer=False``: the caller drops the answer, which is not decoded)."""

    def patch_from(self, original: Obj, modified: Obj, *, optimistic_lock: bool = False,
                   subresource: str | None = None) -> Obj:
        """Send the merge-patch diff of two objects."""

    def delete(self, kind: str, name: str, namespace: str | None = None, *, api_version: str | None = None,
               propagation_policy: str | None = None, preconditions: dict[str, Any] | None = None) -> None:
        """Delete an object."""


class ReaderLike(Protocol):
    """An uncached reader (``mgr.GetAPIReader()``)."""

    def get(self, kind: str, name: str, namespace: str | None = None, *, api_version: str | None = None) -> Obj:
        """Get one object."""

    def list(self, kind: str, namespace: str | None = None, *, api_version: str | None = None,
             labels: str | dict[str, str] | None = None, fields: str | dict[str, str] | None = None) -> list[Obj]:
        """List objects."""


class Ctx(Protocol):
    """What a reconcile gets from the host (fakeapi.host.Context)."""

    @property
    def client(self) -> Any:
        """The cached client (Go codec, actor = controller name)."""

    @property
    def api_reader(self) -> Any:
        """The uncached reader."""

    def now(self) -> datetime:
        """The virtual clock's time."""


def get_or_none(client: ClientLike | ReaderLike, kind: str, name: str, namespace: str) -> Obj | None:
    """``Get`` that answers None on NotFound (``client.IgnoreNotFound``)."""
    if type(client) is Client:  # (a cache read answers None without making and catching the error)
        return client.find(kind, name, namespace)
    try:
        return client.get(kind, name, namespace)
    except ApiError as e:
        if is_not_found(e):
            return None
        raise


def delete_ignore_not_found(client: ClientLike, kind: str, name: str, namespace: str) -> bool:
    """Delete; NotFound is success. Returns False when the object was already gone."""
    try:
        client.delete(kind, name, namespace)
    except ApiError as e:
        if is_not_found(e):
            return False
        raise
    return True


def delete_if_present(client: ClientLike, kind: str, name: str, namespace: str) -> bool:
    """Delete an object the (cached) client still sees and that is not already being deleted
    (ARC ``cleanupResources``: Get, then Delete). Returns True when a delete was sent."""
    obj = get_or_none(client, kind, name, namespace)
    if obj is None or meta(obj).get("deletionTimestamp"):
        return False
    return delete_ignore_not_found(client, kind, name, namespace)


def has_finalizer(obj: Obj, finalizer: str) -> bool:
    """``controllerutil.ContainsFinalizer``."""
    return finalizer in ((obj.get("metadata") or EMPTY).get("finalizers") or ())


def patch_finalizers(client: ClientLike, obj: Obj, *, add: Iterable[str] = (), remove: Iterable[str] = (),
                     read_answer: bool = True) -> Obj:
    """Add/remove finalizers with a merge patch (ARC: controllerutil + ``client.MergeFrom``).

    The body is the MergeFrom diff: the whole new finalizer list (``null``
    when it is empty, as ``omitempty`` drops it), nothing else. ``read_answer=False``: the
    caller drops the answer (see :meth:`fakeapi.host.client.Client.patch`).
    """
    before = list(meta(obj).get("finalizers") or [])
    after = list(before)
    for f in add:
        if f not in after:
            after.append(f)
    drop = set(remove)
    after = [f for f in after if f not in drop]
    m = meta(obj)
    body = {"metadata": {"finalizers": after or None}}
    out: Obj = (client.patch(str(obj.get("kind", "")), m["name"], body, namespace=m.get("namespace"),
                             api_version=obj.get("apiVersion")) if read_answer else
                client.patch(str(obj.get("kind", "")), m["name"], body, namespace=m.get("namespace"),
                             api_version=obj.get("apiVersion"), read_answer=False))
    return out


def patch_status(client: ClientLike, obj: Obj, values: dict[str, Any], status_type: Any = None, *,
                 optimistic_lock: bool = False, read_answer: bool = True) -> Obj:
    """Merge-patch ``status`` with ``values`` set (``client.Status().Patch`` with ``client.MergeFrom``).

    The body is the MergeFrom diff of the status before and after, both
    encoded as a Go client would (``status_type``, the Go type of the kind's
    status; zero values of omitempty fields become ``null``). Sends nothing and
    returns ``obj`` when nothing changes. ``read_answer=False``: the caller drops the
    answer (see :meth:`fakeapi.host.client.Client.patch`).
    """
    before = obj.get("status") or EMPTY
    if all(_same_value(before.get(k, _ABSENT), v) for k, v in values.items()):
        return obj  # every value is already there as it is: the diff is empty, nothing is sent
    diff = status_diff(before, values, status_type) if status_type is not None else \
        create_merge_patch(before, {**before, **values})
    if not diff:
        return obj
    m = meta(obj)
    body: Obj = {"status": diff}
    if optimistic_lock:
        body["metadata"] = {"resourceVersion": m.get("resourceVersion")}
    out: Obj = (client.patch(str(obj.get("kind", "")), m["name"], body, namespace=m.get("namespace"),
                             api_version=obj.get("apiVersion"), subresource="status") if read_answer else
                client.patch(str(obj.get("kind", "")), m["name"], body, namespace=m.get("namespace"),
                             api_version=obj.get("apiVersion"), subresource="status", read_answer=False))
    return out


_ABSENT: Any = object()


def status_diff(before: Mapping[str, Any], values: Mapping[str, Any], status_type: Any) -> Any:
    """The MergeFrom diff of a status ``before`` and with ``values`` set, both encoded as Go encodes
    ``status_type`` (a struct): ``create_merge_patch(go_roundtrip(before), go_roundtrip({**before, **values}))``.

    Go encodes each field of a struct on its own, so a field ``values`` leaves alone encodes alike
    on both sides and is never in the diff: only the fields ``values`` sets are encoded (the diff
    lists the same keys in the same order).
    """
    fast = _scalar_status_diff(before, values, status_type)
    if fast is not None:
        return fast
    return _encoded_status_diff(before, values, status_type)


def _encoded_status_diff(before: Mapping[str, Any], values: Mapping[str, Any], status_type: Any) -> Any:
    """:func:`status_diff` by encoding both sides and diffing them (every case)."""
    from fakeapi.codec.gomodel import go_roundtrip
    from fakeapi.machinery.patches import create_merge_patch

    old = {k: v for k, v in before.items() if k in values}
    return create_merge_patch(go_roundtrip(old, status_type), go_roundtrip({**old, **values}, status_type))


def _scalar_status_diff(before: Mapping[str, Any], values: Mapping[str, Any], t: Any) -> dict[str, Any] | None:
    """:func:`_encoded_status_diff` where every value set, and every value it replaces, is a string,
    int or bool of its field's exact type (a plain, non-pointer field): None in every other case.

    Such a value encodes as itself, or not at all when the field is omitempty and the value its
    zero; an absent non-omitempty field encodes as its zero. So the diff is, in the order of
    ``{**old, **values}`` (``old``: ``before``'s keys among ``values``'), each value that encodes
    and differs from what the old side encodes (or that the old side does not encode), then
    ``None`` for each key whose old value encoded and whose new one does not, in ``before``'s order
    (issue 22: no encoding of either side, no generic diff; the phase, ready and id writes).
    """
    scalars = t._scalars  # (empty until the type's encoders are made: the general path makes them)
    for k, v in values.items():
        sc = scalars.get(k)
        if sc is None or type(v) is not sc[0]:
            return None
    into: dict[str, Any] = {}
    nulls: list[str] | None = None
    for k, av in before.items():  # the old side's keys, in before's order
        if k not in values:
            continue
        typ, omit = scalars[k]
        if type(av) is not typ:
            return None
        bv = values[k]
        if omit and not bv:  # not encoded on the new side
            if av:
                if nulls is None:
                    nulls = []
                nulls.append(k)  # encoded on the old side: null, after the values set
            continue
        if av != bv:  # (an old value the old side omits is a zero, bv is not: they differ, as bv from nothing)
            into[k] = bv
    for k, bv in values.items():  # then the keys the old side does not have, in values' order
        if k in before:
            continue
        if scalars[k][1]:  # omitempty: absent encodes as nothing
            if bv:
                into[k] = bv
            continue
        zero = _absent_zero(t, k)
        if zero is _ABSENT:
            return None
        if zero != bv:
            into[k] = bv
    if nulls is not None:
        for k in nulls:
            into[k] = None
    return into


def _absent_zero(t: Any, name: str) -> Any:
    """What an absent field of ``t`` encodes as (``_ABSENT``: not a plain zero of its exact type)."""
    for n, zf in t._absent or ():
        if n == name:
            z = zf()
            return z if type(z) is t._scalars[name][0] else _ABSENT
    return _ABSENT


def _same_value(a: Any, b: Any) -> bool:
    """``a`` and ``b`` are the same JSON value, types included (``True`` is not ``1``)."""
    return a is b or (type(a) is type(b) and a == b)


def mutate(obj: Obj, fn: Callable[[Obj], None]) -> Obj:
    """A deep copy of ``obj`` changed by ``fn`` (the ``modified`` side of a MergeFrom patch).

    The copy is :func:`~fakeapi.machinery.jsonutil.json_copy` (one orjson round trip, falling back
    to :func:`~fakeapi.machinery.jsonutil.fast_copy` for what orjson cannot carry): ``obj`` is an
    object read through the Go codec, a JSON document (dicts, lists, strings, numbers, booleans,
    None), of which it makes the same document as a deep copy does, as the codec's own copies are
    made (issue 22: the copy of a whole set or ARS before every MergeFrom patch).
    """
    out = json_copy(obj)
    out.setdefault("metadata", {})
    fn(out)
    return out


def mutate_top(obj: Obj, fn: Callable[[Obj], None]) -> Obj:
    """:func:`mutate` for an ``fn`` that only sets, replaces or removes keys of the object's
    ``metadata`` and ``spec`` maps (and top-level keys), never changing a value it finds in place.

    Only those two maps (and the object itself) are copied; every value under them is the
    original's, shared, read-only. The MergeFrom patch made of the two is the same as with a deep
    copy: encoding and diffing only read their inputs (issue 22: a whole set or ARS was copied
    before each of their MergeFrom patches).
    """
    out = dict(obj)
    for key in ("metadata", "spec"):
        part = obj.get(key)
        if type(part) is dict:
            out[key] = dict(part)
    out.setdefault("metadata", {})
    fn(out)
    return out


def creation_time(obj: Obj) -> datetime | None:
    """``metadata.creationTimestamp`` as a datetime (None when unset)."""
    ts = meta(obj).get("creationTimestamp")
    if not ts:
        return None
    try:
        return parse_time(str(ts))
    except ValueError:
        return None


def age(obj: Obj, now: datetime) -> timedelta:
    """How long ago the object was created (zero when unknown)."""
    created = creation_time(obj)
    return now - created if created is not None else timedelta(0)


def oldest_first(objs: list[Obj]) -> list[Obj]:
    """A new list sorted by creationTimestamp (stable: ties keep list order)."""
    return sorted(objs, key=lambda o: meta(o).get("creationTimestamp") or "")


def list_runners(client: ClientLike | ReaderLike, namespace: str, ers_name: str) -> list[Obj]:
    """The EphemeralRunners of a set: those in its namespace whose controller owner reference names it.

    This is ARC's owner index (``.metadata.controller`` field index over the
    controller owner reference), not a label selector: labels may be edited
    or filtered, the controller reference cannot be confused.
    """
    out: list[Obj] = []
    for r in client.list(c.KIND_ER, namespace):
        # (is_controlled_by, inline: every runner of every list the set's reconcile makes, issue 22)
        for ref in (r.get("metadata") or EMPTY).get("ownerReferences") or ():
            if isinstance(ref, dict) and ref.get("controller"):
                if ref.get("kind") == c.KIND_ERS and ref.get("name") == ers_name:
                    out.append(r)
                break
    return out


def first_error(errs: list[BaseException]) -> None:
    """Raise the first collected error (``multierr.Combine`` then return), if any."""
    if errs:
        raise errs[0]
