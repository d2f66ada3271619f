"""The registry of kinds a server serves: built-in ones and CRD-defined ones.

A :class:`Kind` holds what the server must know about a resource type:
group/version/kind, plural, scope, whether it has the status subresource,
its schema (and the compiled form used for pruning, defaulting and
validation), its Go type model, and the fields a field selector may use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from fakeapi.machinery import errors
from fakeapi.registry.strategy import CUSTOM_RESOURCE, Strategy


class _Lazy:
    """A Kind attribute (``schema``, ``compiled``, ``go_type``) that its ``loader`` may compute on first read.

    A non-data descriptor: the value lives in the instance's ``__dict__`` like any attribute
    (reads and writes cost nothing extra). The constructor leaves it out while it is pending,
    so the first read comes here and fills it. A value written before that read (or given to
    the constructor) is kept, never overwritten by the loader.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return None  # the dataclass default
        obj._load()
        return obj.__dict__[self.name]


_LAZY_FIELDS = ("schema", "compiled", "go_type")


@dataclass
class Kind:
    """One served resource type (one group/version/kind)."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True
    status_subresource: bool = False
    singular: str = ""
    list_kind: str = ""
    short_names: tuple[str, ...] = ()
    builtin: bool = False
    #: The OpenAPI v3 schema of the whole object (structural for CRDs).
    schema: dict[str, Any] | None = _Lazy()  # type: ignore[assignment]
    #: Compiled schema helper (fakeapi.schema.compiled.CompiledSchema); set by the registrar.
    compiled: Any = _Lazy()
    #: Go type model of the object (fakeapi.codec.gomodel.GoType); None = unstructured.
    go_type: Any = _Lazy()
    #: Field paths usable in field selectors, besides metadata.name/namespace.
    selectable_fields: tuple[str, ...] = ()
    #: generation on create: CRs 1; built-ins per their strategy (0 = not set).
    initial_generation: int = 1
    #: DELETE answers with the deleted object (Pods, ServiceAccounts) instead of a Status.
    return_deleted_object: bool = False
    #: Name rule: "subdomain" (most kinds) or "label" (Namespace).
    name_rule: str = "subdomain"
    #: The CRD this kind came from (its name), if any.
    crd_name: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    #: What the server asks about this kind's objects (a built-in's own; custom resources share one).
    strategy: Strategy = field(default=CUSTOM_RESOURCE, repr=False, compare=False)
    #: Computes ``(schema, compiled, go_type)`` on first read of any of them, for those not
    #: given to the constructor (built-in kinds: their schemas are compiled when first used).
    loader: Callable[[], tuple[Any, Any, Any]] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.singular:
            self.singular = self.kind.lower()
        if not self.list_kind:
            self.list_kind = self.kind + "List"
        if self.loader is not None:
            for name in _LAZY_FIELDS:
                if self.__dict__.get(name) is None:
                    del self.__dict__[name]  # pending: the first read goes to the loader

    def _load(self) -> None:
        """Fill the lazy attributes still pending from the loader (None without one)."""
        values = self.loader() if self.loader is not None else (None, None, None)
        for name, value in zip(_LAZY_FIELDS, values, strict=True):
            self.__dict__.setdefault(name, value)

    @cached_property
    def stored_go_encoded(self) -> bool:
        """Are stored objects of this kind in the form Go re-encodes them (built-ins with a Go type)?

        Such an object decodes to itself: a Go client reading it holds exactly what is stored.
        Computed once (a built-in's Go type comes from its loader and never changes).
        """
        return self.builtin and self.go_type is not None

    @cached_property
    def api_version(self) -> str:
        """``group/version`` or ``v1`` for the core group (computed once: group and version never change)."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified_resource(self) -> str:
        """``widgets.example.com`` / ``configmaps``: used in most error messages."""
        return errors.qualified(self.plural, self.group)

    @property
    def qualified_kind(self) -> str:
        """``Widget.example.com`` / ``ConfigMap``: used by Invalid and delete-precondition errors."""
        return errors.qualified(self.kind, self.group)

    def __repr__(self) -> str:
        return f"Kind({self.api_version}/{self.kind})"


class KindRegistry:
    """Kinds by apiVersion+kind, by kind alone, and by plural resource name."""

    def __init__(self) -> None:
        self._by_gvk: dict[tuple[str, str], Kind] = {}
        #: :meth:`find` answers by its arguments (every request resolves its kind): cleared on any change.
        self._found: dict[tuple[str, str | None], Kind | None] = {}
        #: :meth:`by_group_plural` answers by (group, plural) (the garbage collector's lookups): cleared on any change.
        self._by_resource: dict[tuple[str, str], Kind | None] = {}
        #: Called before any change (the server's request atomicity keeps the kinds then).
        self.on_change: Callable[[], None] | None = None

    def register(self, kind: Kind) -> Kind:
        """Add or replace a kind."""
        if self.on_change is not None:
            self.on_change()
        self._by_gvk[(kind.api_version, kind.kind)] = kind
        self._found.clear()
        self._by_resource.clear()
        return kind

    def unregister(self, api_version: str, kind: str) -> Kind | None:
        """Remove a kind; returns it (or None when it was not served)."""
        if self.on_change is not None:
            self.on_change()
        self._found.clear()
        self._by_resource.clear()
        return self._by_gvk.pop((api_version, kind), None)

    def all(self) -> list[Kind]:
        """Every served kind, in registration order."""
        return list(self._by_gvk.values())

    def find(self, kind: str, api_version: str | None = None) -> Kind | None:
        """Look a kind up by ``kind`` (+ optional apiVersion), plural or singular name, or short name.

        ``kind`` may also be ``group/version/Kind`` or ``version/Kind``. With no apiVersion, a kind
        served in several groups resolves to the built-in one, else to the first registered.
        """
        key = (kind, api_version)
        try:
            return self._found[key]
        except KeyError:
            found = self._found[key] = self._find(kind, api_version)
            return found

    def _find(self, kind: str, api_version: str | None) -> Kind | None:
        if api_version is None and "/" in kind:
            api_version, _, kind = kind.rpartition("/")
        if api_version is not None:
            k = self._by_gvk.get((api_version, kind))
            if k is not None:
                return k
            group = api_version.rpartition("/")[0] if "/" in api_version else ""
            version = api_version.rpartition("/")[2]
            for k in self._by_gvk.values():
                if k.group == group and k.version == version and kind in (k.plural, k.singular, *k.short_names):
                    return k
            return None
        candidates = [k for k in self._by_gvk.values() if k.kind == kind]
        if not candidates:
            low = kind.lower()
            candidates = [
                k for k in self._by_gvk.values()
                if low in (k.plural, k.singular, *k.short_names) or k.kind.lower() == low
            ]
        if not candidates:
            return None
        builtin = [k for k in candidates if k.builtin]
        return (builtin or candidates)[0]

    def by_group_plural(self, group: str, plural: str) -> Kind | None:
        """The first registered kind of a resource (group + plural), whatever its version."""
        key = (group, plural)
        try:
            return self._by_resource[key]
        except KeyError:
            found = self._by_resource[key] = next(
                (k for k in self._by_gvk.values() if k.group == group and k.plural == plural), None)
            return found

    def by_resource(self, group: str, version: str, plural: str) -> Kind | None:
        """Look a kind up by REST coordinates (``/apis/{group}/{version}/{plural}``)."""
        for k in self._by_gvk.values():
            if k.group == group and k.version == version and k.plural == plural:
                return k
        return None

    def require(self, kind: str, api_version: str | None = None) -> Kind:
        """Like :meth:`find`, but a 404 ``the server could not find the requested resource``."""
        k = self._found.get((kind, api_version))  # find's memo, read here: every request resolves its kind
        if k is None:
            k = self.find(kind, api_version)
            if k is None:
                raise errors.resource_not_found()
        return k
