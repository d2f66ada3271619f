"""Helpers shared by the three controllers: the context they get, finalizers, errors, owned runners."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, Protocol

from fakeapi.clock import parse_time
from fakeapi.errors import ApiError, is_not_found
from fakeapi.jsonutil import fast_copy

from . import constants as c
from .resourcebuilder import is_controlled_by, meta

Obj = dict[str, Any]


class ClientLike(Protocol):
    """The part of :class:`fakeapi.client.Client` the controllers use."""

    def get(self, kind: str, name: str, namespace: str | None = None, *, api_version: str | None = None) -> Obj:
        """Get one object."""

    def list(self, kind: str, namespace: str | None = None, *, api_version: str | None = None,
             labels: str | dict[str, str] | None = None, fields: str | dict[str, str] | None = None) -> list[Obj]:
        """List objects."""

    def create(self, obj: Obj) -> Obj:
        """Create an object."""

    def patch(self, kind: str, name: str, patch: Any, *, namespace: str | None = None,
              api_version: str | None = None, patch_type: str = "merge", subresource: str | None = None) -> Obj:
        """Send a raw patch."""

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


def has_finalizer(obj: Obj, finalizer: str) -> bool:
    """``controllerutil.ContainsFinalizer``."""
    return finalizer in (meta(obj).get("finalizers") or ())


def patch_finalizers(client: ClientLike, obj: Obj, *, add: Iterable[str] = (), remove: Iterable[str] = ()) -> Obj:
    """Add/remove finalizers with a merge patch computed from ``obj`` (ARC ``patch`` + controllerutil)."""
    modified = mutate(obj, lambda o: _edit_finalizers(o, add, remove))
    return client.patch_from(obj, modified)


def _edit_finalizers(obj: Obj, add: Iterable[str], remove: Iterable[str]) -> None:
    fins = list(obj["metadata"].get("finalizers") or [])
    for f in add:
        if f not in fins:
            fins.append(f)
    drop = set(remove)
    fins = [f for f in fins if f not in drop]
    if fins:
        obj["metadata"]["finalizers"] = fins
    else:
        obj["metadata"].pop("finalizers", None)


def mutate(obj: Obj, fn: Callable[[Obj], None]) -> Obj:
    """A deep copy of ``obj`` changed by ``fn`` (the ``modified`` side of a MergeFrom patch)."""
    out = fast_copy(obj)
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
    return [r for r in client.list(c.KIND_ER, namespace) if is_controlled_by(r, c.KIND_ERS, ers_name)]


def first_error(errs: list[BaseException]) -> None:
    """Raise the first collected error (``multierr.Combine`` then return), if any."""
    if errs:
        raise errs[0]
