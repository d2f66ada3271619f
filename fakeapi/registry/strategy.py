"""A kind's strategy: what the generic server asks about the objects of one kind.

The shape of Kubernetes' ``pkg/registry/<group>/<resource>/strategy.go`` (``RESTCreateStrategy``,
``RESTUpdateStrategy``, ``RESTDeleteStrategy``, the status strategy's ``ResetFields``) and of the
REST storage hooks next to it (``BeginCreate``/``BeginUpdate``, ``AfterDelete``), in Python terms:
one object per kind, whose methods the server calls at fixed steps of each verb.

:class:`Strategy` itself is the behaviour of a custom resource (no defaults, prepare or rules
beyond the schema, every change outside metadata and status bumping the generation). Built-in
kinds subclass :class:`BuiltinStrategy`, which also carries the settings the kind is registered
with (:class:`BuiltinSpec`); each API group's package under :mod:`fakeapi.registry` holds its
kinds' strategies in its ``strategy`` module.

Where in a verb each hook runs (``fakeapi.server``):

- create: decode (:meth:`~Strategy.default`) -> :meth:`~Strategy.prepare_for_create` -> the
  server's metadata (name, uid, generation) -> :meth:`~Strategy.begin_create` -> validation
  (:meth:`~Strategy.admit`, :meth:`~Strategy.warnings`) -> encode -> :meth:`~Strategy.before_commit_create` -> commit;
- update: decode (:meth:`~Strategy.default`) -> the server's BeforeUpdate -> :meth:`~Strategy.prepare_for_update`
  -> generation (:attr:`~Strategy.generation_from_body`, :meth:`~Strategy.spec_changed`) ->
  :meth:`~Strategy.begin_update` -> validation -> encode -> :meth:`~Strategy.before_commit_update` -> commit;
- delete: :meth:`~Strategy.check_delete` -> finalizers (:attr:`~Strategy.orphans_by_default`,
  :meth:`~Strategy.delete_warnings`) -> :meth:`~Strategy.graceful_delete_seconds` ->
  :meth:`~Strategy.prepare_for_delete` -> commit -> :meth:`~Strategy.after_delete` once the object is gone.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

from fakeapi.machinery.errors import Cause
from fakeapi.registry.core.serviceindex import AllocationIndex

Obj = dict[str, Any]


class StrategyContext(Protocol):
    """What a strategy may ask of the server it runs in (:class:`fakeapi.server.apiserver.APIServer`).

    The few hooks that need more than the objects at hand (a Service's allocations read the
    other Services) get the server through this interface; a CRD's, which serve and withdraw
    kinds, through a wider one (:class:`fakeapi.registry.apiextensions.strategy.ServingContext`).
    """

    @property
    def rng(self) -> random.Random:
        """The server's seeded random source (generated names, allocated IPs and ports)."""

    def timestamp(self) -> str:
        """The virtual clock's now, as a metav1.Time string."""

    def stored(self, group: str, plural: str) -> Iterable[Obj]:
        """The stored objects of a resource (shared snapshots: never mutate them)."""

    def service_allocations(self, except_uid: str | None) -> tuple[AllocationIndex, str | None]:
        """The stored Services' allocation index, and the key of the Service with ``except_uid`` (None: none)."""


@dataclass(frozen=True)
class BuiltinSpec:
    """How a built-in kind is registered: its coordinates and the settings its strategy declares."""

    group: str
    version: str
    kind: str
    plural: str
    #: The OpenAPI definition of the kind (its schema and Go type model come from it).
    definition: str
    namespaced: bool = True
    status: bool = False
    #: generation on create (0 = the kind does not track it).
    initial_generation: int = 0
    return_deleted_object: bool = False
    name_rule: str = "subdomain"
    #: Field paths usable in field selectors, besides metadata.name/namespace.
    fields: tuple[str, ...] = ()
    short_names: tuple[str, ...] = ()
    #: The discovery categories (``Categories()`` of the kind's REST storage: ``all`` for workloads).
    categories: tuple[str, ...] = ()


@dataclass(frozen=True)
class SubresourceWrite:
    """What a strategy's own subresource verb makes of the stored object (:meth:`Strategy.write_subresource`)."""

    #: The new object (a fresh snapshot: it may share what it leaves unchanged with the stored one).
    obj: Obj
    #: The write ends the object: it is deleted rather than stored (the last finalizer gone).
    delete: bool = False
    #: What the verb answers instead of the object as stored (a pod binding's Status).
    response: Obj | None = None
    code: int = 200


class Strategy:
    """The behaviour of one kind's objects: a custom resource's, unless a subclass says otherwise."""

    #: On update, the generation goes up when anything outside metadata and status changed
    #: (custom resources); otherwise when :meth:`spec_changed` says so (built-ins that track it).
    generation_from_body = True
    #: PrepareForCreate drops the status of a kind with the status subresource (Pods keep theirs).
    reset_status_on_create = True
    #: A delete without a propagation policy orphans the dependents (batch/v1 Jobs:
    #: ``DefaultGarbageCollectionPolicy`` is ``OrphanDependents``, for backward compatibility).
    orphans_by_default = False
    #: ``AllowCreateOnUpdate``: a PUT of the main resource to a missing object creates it (201)
    #: instead of answering 404 (Leases, Events, Services, the rbac kinds; never custom resources).
    allow_create_on_update = False
    #: ``AllowUnconditionalUpdate``: a PUT (of the object or its status) without
    #: ``metadata.resourceVersion`` is applied to the stored version instead of answering 422
    #: "must be specified for an update". Custom resources: no. Every built-in kind's strategy
    #: states its own upstream answer (tests/test_unconditional_update.py holds the table).
    allow_unconditional_update = False
    #: The subresources whose writes the kind's storage handles itself, each with the verb it is
    #: recorded as (a namespace's ``finalize``: update; a pod's ``binding``: create). The server
    #: runs :meth:`write_subresource` for these and serves no other such subresource.
    subresource_verbs: Mapping[str, str] = MappingProxyType({})

    def default(self, obj: Obj, base: Obj | None) -> None:
        """Apply the kind's defaults in place (``SetDefaults_<Kind>``); ``base``: a stored object
        ``obj`` shares parts with (defaulted when stored)."""

    def prepare_for_create(self, obj: Obj) -> None:
        """PrepareForCreate: what the strategy sets or clears on a new object (status aside)."""

    def begin_create(self, ctx: StrategyContext, obj: Obj) -> None:
        """After the server set name and uid, before validation: the storage's BeginCreate
        (a Service's allocations) or what needs the uid (a Job's generated selector)."""

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        """PrepareForUpdate: what an update may not change, restored from ``old`` (status aside)."""

    def spec_changed(self, new: Obj, old: Obj) -> bool:
        """Does this update bump the generation (when :attr:`generation_from_body` is False)?"""
        return False

    def begin_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        """Before validation of an update of the main resource: the storage's BeginUpdate."""

    def validate(self, obj: Obj) -> list[Cause]:
        """``Validate``: the kind's rules beyond its schema, on create and update."""
        return []

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        """``ValidateUpdate``: the rules of an update beyond :meth:`validate` (immutable fields)."""
        return []

    def validate_status_update(self, obj: Obj, old: Obj) -> list[Cause]:
        """The status strategy's ``ValidateUpdate``."""
        return []

    def admit(self, causes: list[Cause], obj: Obj, old: Obj | None, subresource: str, body_shared: bool) -> list[Cause]:
        """All the causes of a write: the metadata's and schema's (``causes``) with the kind's own.

        The kind's rules run on a write of the main resource whose body is not the stored one
        (``body_shared``: checked when stored), and its status rules on a status update. Where
        both report a field, the kind's rule stands alone (:func:`prefer_ported`).
        """
        if subresource == "status":
            return causes + self.validate_status_update(obj, old) if old is not None else causes
        if body_shared:
            return causes
        ported = self.validate(obj)
        if old is not None:
            ported += self.validate_update(obj, old)
        return prefer_ported(causes, ported)

    def warnings(self, obj: Obj, old: Obj | None) -> list[str]:
        """``WarningsOnCreate``/``WarningsOnUpdate`` of a valid write of the main resource."""
        return []

    def before_commit_create(self, ctx: StrategyContext, obj: Obj) -> None:
        """A create that will be stored, just before it is (a CRD starts serving its kinds)."""

    def before_commit_update(self, ctx: StrategyContext, new: Obj, old: Obj, *, dry_run: bool) -> None:
        """An update of the main resource, before the no-op check (``dry_run``: only set what it
        would store) and again, not dry, just before it is stored."""

    def write_subresource(self, ctx: StrategyContext, subresource: str, stored: Obj, body: Obj) -> SubresourceWrite:
        """A write of one of :attr:`subresource_verbs` to the stored object ``stored`` (never mutated),
        with the request's ``body``: the new object, or raise (409 and the like)."""
        raise NotImplementedError(f"{type(self).__name__} declares no subresource {subresource!r}")

    def check_delete(self, name: str) -> None:
        """Raise when the object may not be deleted at all (admission: NamespaceLifecycle)."""

    def delete_warnings(self) -> list[str]:
        """The warnings of a delete without a propagation policy."""
        return []

    def graceful_delete_seconds(self, obj: Obj, grace: int | None) -> int:
        """``CheckGracefulDelete``: seconds the deletion waits (0: at once, when no finalizer
        holds it; -1: until a controller finishes it)."""
        return 0

    def prepare_for_delete(self, obj: Obj) -> None:
        """What the first step of a deletion sets besides the deletion timestamp."""

    def after_delete(self, ctx: StrategyContext, obj: Obj) -> None:
        """The object is gone from the store (a CRD's kinds and objects go with it)."""


class BuiltinStrategy(Strategy):
    """A built-in kind's strategy: registered with :attr:`spec`, generation by spec changes."""

    generation_from_body = False
    #: How the kind is registered (set by each subclass).
    spec: BuiltinSpec
    #: An update that changes the annotations bumps the generation too (Deployments: they are
    #: copied to the ReplicaSets).
    annotations_bump_generation = False

    def spec_changed(self, new: Obj, old: Obj) -> bool:
        """A spec change (typed: ``==`` is exact), or for :attr:`annotations_bump_generation` kinds
        an annotations change."""
        return new.get("spec") != old.get("spec") or (
            self.annotations_bump_generation
            and new["metadata"].get("annotations") != old["metadata"].get("annotations"))


class CustomResourceStrategy(Strategy):
    """The strategy of custom resources: :class:`Strategy`'s behaviour, with the step that would
    ask for a custom resource's own rules (it has none beyond its schema) skipped."""

    def admit(self, causes: list[Cause], obj: Obj, old: Obj | None, subresource: str, body_shared: bool) -> list[Cause]:
        """The metadata's and the schema's causes alone."""
        return causes


#: The strategy of every custom resource (stateless: one object for all).
CUSTOM_RESOURCE = CustomResourceStrategy()


def prefer_ported(causes: list[Cause], ported: list[Cause]) -> list[Cause]:
    """The causes of a built-in's write: its schema's and metadata's, then the ported Go validation's.

    kube-apiserver runs only the Go validation on built-ins; the schema stands in for what is not
    ported. Where both report the same field, Go's stands alone (a missing ``pathType``: not the
    schema's bare ``Required value`` but Go's ``Required value: pathType must be specified``; a
    Service port without a number: not ``Required`` but Go's zero value, out of range).
    """
    if not ported:
        return causes
    seen = {c.field for c in ported}
    return [c for c in causes if c.field not in seen] + ported


def spec_is_stored(obj: Obj, base: Obj | None) -> bool:
    """Is ``obj``'s spec the stored object's own (a patch or an update that left it as stored)?

    A stored spec was defaulted when it was stored, and defaults only fill in what is missing,
    so defaulting it again changes nothing: a kind's spec defaults skip it.
    """
    return base is not None and "spec" in obj and obj["spec"] is base.get("spec")
