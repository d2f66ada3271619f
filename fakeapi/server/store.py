"""The object store: one entry per object, with the indexes lists need.

Each entry keeps the stored bytes (canonical JSON, compared to detect no-op
writes as etcd's ``GuaranteedUpdate`` does) and a parsed snapshot that is
never mutated after it is stored: readers get copies, watchers share it.
Objects of one resource (group + plural) share a table whatever version
they are read at. Keys are ``<namespace>/<name>`` (or ``<name>``), and lists
come out in byte order of those keys, as etcd returns them.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sortedcontainers import SortedList

from fakeapi.machinery.jsonutil import canonical
from fakeapi.registry.core.serviceindex import AllocationIndex


def object_key(namespace: str, name: str) -> str:
    """The storage key of an object: ``ns/name`` or ``name`` (cluster-scoped)."""
    return f"{namespace}/{name}" if namespace else name


@dataclass(slots=True)
class Entry:
    """One stored object.

    ``data`` and ``meta_data`` are the stored bytes (canonical JSON of the body and
    of the metadata without resourceVersion), computed on first use: most writes
    are told apart from the stored object by a plain comparison, and only an equal
    comparison needs the bytes to confirm (``1`` and ``true`` compare equal in Python).
    """

    key: str
    namespace: str
    name: str
    obj: dict[str, Any]
    rv: int
    uid: str
    labels: dict[str, str]
    owner_uids: tuple[str, ...]
    _data: str | None = None
    _meta_data: str | None = None
    #: False once ``obj`` is served in another form than the stored bytes (a CRD schema changed).
    obj_is_stored: bool = True
    #: The decoded entries of ``obj``'s managedFields (fakeapi.machinery.fieldmanager.Managed), once known.
    managed: Any = None

    @property
    def data(self) -> str:
        """Canonical JSON of everything but metadata (generation and no-op checks)."""
        if self._data is None:
            self._data = body_bytes(self.obj)
        return self._data

    @property
    def meta_data(self) -> str:
        """Canonical JSON of metadata without resourceVersion (no-op checks)."""
        if self._meta_data is None:
            self._meta_data = meta_bytes(self.obj)
        return self._meta_data

    def reserve(self, obj: dict[str, Any]) -> None:
        """Serve ``obj`` from now on while keeping the stored bytes as they are."""
        _ = self.data, self.meta_data
        self.obj = obj
        self.obj_is_stored = False


def body_bytes(obj: dict[str, Any]) -> str:
    """The stored bytes of an object without its metadata."""
    return canonical({k: v for k, v in obj.items() if k != "metadata"})


def meta_bytes(obj: dict[str, Any]) -> str:
    """The stored bytes of an object's metadata, resourceVersion left out."""
    meta = obj.get("metadata") or {}
    if "resourceVersion" in meta:
        meta = {k: v for k, v in meta.items() if k != "resourceVersion"}
    return canonical(meta)


def body_differs(new: dict[str, Any], e: Entry, *, typed: bool = False) -> bool:
    """Would ``new`` be stored with other bytes than ``e`` outside metadata?

    ``typed``: both objects passed a schema that fixes the JSON type of every field,
    so Python's ``==`` (which takes ``1`` for ``true``) is exact and no bytes are needed.
    """
    if e.obj_is_stored:
        old = e.obj
        if len(new) != len(old):
            return True
        for k, v in new.items():
            if k != "metadata" and old.get(k, _MISSING) != v:
                return True
        if typed:
            return False
    return body_bytes(new) != e.data


_MISSING: Any = object()


def meta_differs(new: dict[str, Any], e: Entry) -> bool:
    """Would ``new``'s metadata (resourceVersion aside) be stored with other bytes than ``e``'s?"""
    if e.obj_is_stored:
        return not same_meta(new.get("metadata") or {}, e.obj.get("metadata") or {})
    return meta_bytes(new) != e.meta_data


def same_meta(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Are two ObjectMeta maps equal but for resourceVersion? (ObjectMeta is typed: ``==`` is exact.)"""
    if len(a) - ("resourceVersion" in a) != len(b) - ("resourceVersion" in b):
        return False  # not the same keys
    for k, v in a.items():  # noqa: SIM110 (a loop, not all(): no generator on the write path)
        if k != "resourceVersion" and b.get(k, _MISSING) != v:
            return False  # a key of a's that b lacks, or another value
    return True


#: Index terms of field selectors, beside the label terms (``(key, allowed values)``) of
#: :meth:`Table.candidates` and :meth:`Table.select`: an exact ``metadata.name`` or
#: ``metadata.namespace``. (A label key never starts with NUL: these never name a label.)
FIELD_NAME = "\0metadata.name"
FIELD_NAMESPACE = "\0metadata.namespace"


@dataclass
class Table:
    """The objects of one resource (group + plural).

    ``keys`` is every storage key in byte order (a sorted list, O(log n) to insert or remove):
    a namespace's keys are one run of it (``ns/`` is their common prefix), so a page of a list
    starts at a bisection and costs what it returns. The label and name indexes narrow a
    selective list to its candidates without a scan.
    """

    group: str
    plural: str
    entries: dict[str, Entry] = field(default_factory=dict)
    keys: Any = field(default_factory=SortedList)
    by_label: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    #: name -> keys of the objects of that name (one per namespace)
    by_name: dict[str, set[str]] = field(default_factory=dict)
    #: The Service table's allocations (cluster IPs, node ports), kept with its entries; else None.
    allocations: AllocationIndex | None = None

    def get(self, namespace: str, name: str) -> Entry | None:
        """The entry at that key, if any."""
        return self.entries.get(f"{namespace}/{name}" if namespace else name)  # (object_key, inline)

    def put(self, entry: Entry) -> Entry | None:
        """Insert or replace an entry, keeping indexes; returns the previous entry."""
        old = self.entries.get(entry.key)
        if self.allocations is not None:
            self.allocations.add(entry.key, entry.obj)
        if old is not None:
            self.entries[entry.key] = entry
            if old.labels == entry.labels:
                return old  # same key, same labels: the indexes stay as they are
            self._unindex(old)
        else:
            key = entry.key
            if not key.isascii():
                key.encode()  # (raises for what cannot be stored: byte order needs UTF-8)
            self.keys.add(key)
            self.by_name.setdefault(entry.name, set()).add(key)
            self.entries[key] = entry
        for kv in entry.labels.items():
            self.by_label.setdefault(kv, set()).add(entry.key)
        return old

    def remove(self, key: str) -> Entry | None:
        """Remove an entry by key; returns it."""
        old = self.entries.pop(key, None)
        if old is None:
            return None
        if self.allocations is not None:
            self.allocations.remove(key)
        self._unindex(old)
        self.keys.discard(key)
        names = self.by_name.get(old.name)
        if names is not None:
            names.discard(key)
            if not names:
                del self.by_name[old.name]
        return old

    def _unindex(self, entry: Entry) -> None:
        for kv in entry.labels.items():
            s = self.by_label.get(kv)
            if s is not None:
                s.discard(entry.key)
                if not s:
                    del self.by_label[kv]

    def _key_range(self, namespace: str | None) -> tuple[int, int]:
        """The positions in ``keys`` of a namespace's run (every key for None)."""
        if not namespace:
            return 0, len(self.keys)
        # ("0" follows "/" in byte order: the run of "ns/..." ends before "ns0")
        return self.keys.bisect_left(namespace + "/"), self.keys.bisect_left(namespace + "0")

    def _narrowed(self, namespace: str | None,
                  terms: Iterable[tuple[str, frozenset[str]]]) -> tuple[str | None, list[str] | None]:
        """(the namespace every match is in, the sorted keys every match is among); None for the keys
        when no index term narrows them (every key of the namespace's run is a candidate).

        The terms' index sets are sized first, the smallest is read, and the others are checked
        on its keys: a term that matches most of the table costs nothing.
        """
        sized: list[tuple[int, list[set[str]]]] = []
        for key, values in terms:
            if key == FIELD_NAMESPACE:
                if (namespace and namespace not in values) or len(values) != 1:
                    return namespace, []  # (an exact value is one value: two are never both met)
                namespace = next(iter(values))
                continue
            parts: list[set[str]] = []
            for v in values:
                part = self.by_name.get(v) if key == FIELD_NAME else self.by_label.get((key, v))
                if part:
                    parts.append(part)
            size = sum(len(p) for p in parts)
            if not size:
                return namespace, []
            sized.append((size, parts))
        if not sized:
            return namespace, None
        sized.sort(key=lambda t: t[0])
        first = sized[0][1]
        found = first[0] if len(first) == 1 else set().union(*first)
        rest = [parts for _, parts in sized[1:]]
        prefix = namespace + "/" if namespace else ""
        out: list[str] = []
        for k in found:
            if prefix and not k.startswith(prefix):
                continue
            ok = True
            for parts in rest:
                if not any(k in p for p in parts):
                    ok = False
                    break
            if ok:
                out.append(k)
        out.sort()  # (code point order is UTF-8 byte order)
        return namespace, out

    def candidates(self, namespace: str | None, label_terms: Iterable[tuple[str, frozenset[str]]] = ()) -> Iterator[Entry]:
        """Entries in storage-key order, narrowed by namespace and index terms (a snapshot: the
        table may change while the caller goes through them).

        ``label_terms`` are (key, allowed values) pairs every match must satisfy (label keys, or
        :data:`FIELD_NAME` / :data:`FIELD_NAMESPACE`); candidates must still be matched.
        """
        namespace, keys = self._narrowed(namespace, label_terms)
        if keys is None:
            lo, hi = self._key_range(namespace)
            keys = list(self.keys.islice(lo, hi))
        entries = self.entries
        return (entries[k] for k in keys)

    def select(self, namespace: str | None, terms: Iterable[tuple[str, frozenset[str]]] = (),
               after: str = "") -> Iterator[Entry]:
        """:meth:`candidates` with keys after ``after`` only, read lazily: a page of ``n`` costs
        O(n log n) whatever the size of the table. Go through it before the table changes."""
        namespace, keys = self._narrowed(namespace, terms)
        entries = self.entries
        if keys is None:
            lo, hi = self._key_range(namespace)
            if after:
                lo = max(lo, self.keys.bisect_right(after))
            return (entries[k] for k in self.keys.islice(lo, hi))
        if after:
            keys = keys[bisect.bisect_right(keys, after):]
        return (entries[k] for k in keys)

    def count_after(self, namespace: str | None, after: str) -> int:
        """How many keys of the namespace (every key for None) come after ``after`` (O(log n))."""
        lo, hi = self._key_range(namespace)
        return max(0, hi - max(lo, self.keys.bisect_right(after)))

    def __len__(self) -> int:
        return len(self.entries)


class Store:
    """All tables, plus the owner index used by the garbage collector."""

    def __init__(self) -> None:
        self.tables: dict[tuple[str, str], Table] = {}
        #: owner uid -> {(group, plural, key)}
        self.dependents: dict[str, set[tuple[str, str, str]]] = {}
        #: uid -> (group, plural, key)
        self.by_uid: dict[str, tuple[str, str, str]] = {}
        #: Called before the set of tables changes (the server's request atomicity keeps it then).
        self.on_change: Callable[[], None] | None = None

    def table(self, group: str, plural: str) -> Table:
        """The table of a resource, created on first use."""
        t = self.tables.get((group, plural))
        if t is None:
            if self.on_change is not None:
                self.on_change()
            t = self.tables[(group, plural)] = Table(group, plural)
            if (group, plural) == ("", "services"):
                t.allocations = AllocationIndex()
        return t

    def put(self, table: Table, entry: Entry) -> Entry | None:
        """Store an entry, keeping the owner and uid indexes."""
        old = table.put(entry)
        if old is not None and old.owner_uids is entry.owner_uids and old.uid == entry.uid:
            return old  # (the same owners and uid: the indexes stay as they are; see the commit in pipeline.py)
        ref = (table.group, table.plural, entry.key)
        if old is not None:
            for u in old.owner_uids:
                s = self.dependents.get(u)
                if s is not None:
                    s.discard(ref)
                    if not s:
                        del self.dependents[u]
            if old.uid != entry.uid:
                self.by_uid.pop(old.uid, None)
        for u in entry.owner_uids:
            self.dependents.setdefault(u, set()).add(ref)
        self.by_uid[entry.uid] = ref
        return old

    def remove(self, table: Table, key: str) -> Entry | None:
        """Remove an entry, keeping the owner and uid indexes."""
        old = table.remove(key)
        if old is None:
            return None
        ref = (table.group, table.plural, key)
        for u in old.owner_uids:
            s = self.dependents.get(u)
            if s is not None:
                s.discard(ref)
                if not s:
                    del self.dependents[u]
        if self.by_uid.get(old.uid) == ref:
            del self.by_uid[old.uid]
        return old

    def dependents_of(self, uid: str) -> list[tuple[str, str, str]]:
        """(group, plural, key) of every object with an owner reference to ``uid``, sorted."""
        return sorted(self.dependents.get(uid, ()))

    def lookup_uid(self, uid: str) -> Entry | None:
        """The entry with this uid, if stored."""
        ref = self.by_uid.get(uid)
        if ref is None:
            return None
        t = self.tables.get((ref[0], ref[1]))
        return t.entries.get(ref[2]) if t else None

    def drop_table(self, group: str, plural: str) -> list[Entry]:
        """Remove a whole table (its CRD is gone); returns its entries in key order."""
        t = self.tables.get((group, plural))
        if t is None:
            return []
        if self.on_change is not None:
            self.on_change()
        out = [t.entries[k] for k in list(t.keys)]
        for e in out:
            self.remove(t, e.key)
        del self.tables[(group, plural)]
        return out
