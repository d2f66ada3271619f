"""apiextensions.k8s.io/v1: CustomResourceDefinitions and their strategy.

A CRD is validated by :func:`fakeapi.registry.apiextensions.crd.validate_crd` (on every write,
status writes too), gets the status the apiextensions controllers give it (names accepted,
established, stored versions), and serves its kinds from the moment it is stored until it is gone;
its objects go with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

from fakeapi.machinery.errors import Cause
from fakeapi.machinery.lazymodule import lazy_module
from fakeapi.registry.kinds import Kind, KindRegistry
from fakeapi.registry.strategy import BuiltinSpec, BuiltinStrategy, Obj, StrategyContext

if TYPE_CHECKING:
    from fakeapi.registry.apiextensions import crd as crds
else:  # (imported on first use: a server that never writes a CRD never compiles it; issue 22)
    crds = lazy_module(__name__, "fakeapi.registry.apiextensions.crd", "crds")

GROUP = "apiextensions.k8s.io"


class ServingContext(StrategyContext, Protocol):
    """What a CRD's strategy asks of the server besides the common :class:`StrategyContext`
    (:class:`fakeapi.server.apiserver.APIServer` is both)."""

    @property
    def kinds(self) -> KindRegistry:
        """The kinds the server serves."""

    def redecode_stored(self, kind: Kind) -> None:
        """Serve the stored objects of ``kind`` pruned and defaulted by its (new) schema."""

    def purge(self, kind: Kind | None, group: str, plural: str) -> None:
        """Delete every stored object of a resource (a DELETED event each) and drop its table."""


class CustomResourceDefinitionStrategy(BuiltinStrategy):
    """CustomResourceDefinitions: serving the kinds they define."""

    spec = BuiltinSpec(GROUP, "v1", "CustomResourceDefinition", "customresourcedefinitions",
                       "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
                       namespaced=False, status=True, initial_generation=1, short_names=("crd", "crds"),
                       categories=("api-extensions",))
    #: AllowUnconditionalUpdate in upstream apiextensions-apiserver
    #: pkg/registry/customresourcedefinition/strategy.go: false (status too)
    allow_unconditional_update = False

    def prepare_for_create(self, obj: Obj) -> None:
        """The status is the controllers' (set when stored)."""
        obj.pop("status", None)

    def admit(self, causes: list[Cause], obj: Obj, old: Obj | None, subresource: str, body_shared: bool) -> list[Cause]:
        """``validate_crd`` on every write (the ported Go validation of the other built-ins does not apply)."""
        return causes + crds.validate_crd(obj, old)

    def before_commit_create(self, ctx: StrategyContext, obj: Obj) -> None:
        """Record the status and serve the kinds."""
        _serve(cast(ServingContext, ctx), obj, None)

    def before_commit_update(self, ctx: StrategyContext, new: Obj, old: Obj, *, dry_run: bool) -> None:
        """Record the status (for the no-op check: ``dry_run``), then serve the kinds again."""
        _serve(cast(ServingContext, ctx), new, old, dry_run=dry_run)

    def after_delete(self, ctx: StrategyContext, obj: Obj) -> None:
        """The CRD is gone: so are its kinds and their objects."""
        _withdraw(cast(ServingContext, ctx), obj)


def _serve(ctx: ServingContext, crd: Obj, old: Obj | None, *, dry_run: bool = False) -> None:
    """Record a CRD's status and (unless ``dry_run``) serve, or re-serve, its kinds.

    A CRD being deleted (finalizers pending) keeps serving its kinds until it is gone.
    """
    _set_status(ctx, crd, old)
    if dry_run:
        return
    if old is not None:
        spec = old.get("spec") or {}
        for v in spec.get("versions") or []:
            ctx.kinds.unregister(f"{spec.get('group')}/{v.get('name')}", (spec.get("names") or {}).get("kind", ""))
    kinds = crds.kinds_from_crd(crd)
    for kd in kinds:
        ctx.kinds.register(kd)
    if old is not None and kinds:
        ctx.redecode_stored(kinds[0])


def _set_status(ctx: StrategyContext, crd: Obj, old: Obj | None) -> None:
    """The status the apiextensions controllers give a CRD: names accepted, established, stored versions."""
    spec = crd["spec"]
    old_status = (old or {}).get("status") or {}
    stored = list(old_status.get("storedVersions") or [])
    if crds.storage_version(spec) not in stored:
        stored.append(crds.storage_version(spec))
    now = ctx.timestamp()
    crd["status"] = {
        "acceptedNames": dict(spec["names"]),
        "conditions": old_status.get("conditions") or [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
             "message": "no conflicts found", "lastTransitionTime": now},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted", "lastTransitionTime": now},
        ],
        "storedVersions": stored,
    }


def _withdraw(ctx: ServingContext, crd: Obj) -> None:
    """A CRD is gone: stop serving its kinds and drop their objects (each with a DELETED event)."""
    spec = crd.get("spec") or {}
    group, plural = spec.get("group", ""), (spec.get("names") or {}).get("plural", "")
    kind = ctx.kinds.find((spec.get("names") or {}).get("kind", ""), f"{group}/{crds.storage_version(spec)}")
    ctx.purge(kind, group, plural)
    for v in spec.get("versions") or []:
        ctx.kinds.unregister(f"{group}/{v.get('name')}", (spec.get("names") or {}).get("kind", ""))


#: The group's kinds, in the order they are registered.
STRATEGIES: tuple[BuiltinStrategy, ...] = (CustomResourceDefinitionStrategy(),)
