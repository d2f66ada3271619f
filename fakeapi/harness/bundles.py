"""Bundles: named sets of controllers, simulators, operations and invariants.

A fixture's ``bundles: [arc]`` hosts every bundle it names. A bundle is found
by name in the ``fakeapi.bundles`` entry-point group (so any installed
project can ship one) or registered with :func:`register_bundle`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fakeapi.host import Host


@dataclass
class OpContext:
    """What a bundle operation gets: the host, its bundle's state, and target resolution."""

    host: Host
    state: Any
    #: Resolve a fixture target (``{kind, namespace, name|selector, where, pick}``) to objects.
    resolve: Callable[[dict[str, Any]], list[dict[str, Any]]]


#: An operation: ``fn(ctx, args)``; raise ``ValueError`` for bad arguments.
Operation = Callable[[OpContext, Any], None]
#: An invariant: ``fn(host, state) -> list of violation messages`` (empty = holds).
Invariant = Callable[["Host", Any], list[str]]


@dataclass
class Bundle:
    """A named set of controllers and simulators the harness can host."""

    name: str
    #: ``install(host, settings) -> state``: register kinds, controllers and actors.
    #: ``settings`` is the case's ``services.<name>`` mapping (may be empty).
    install: Callable[[Host, dict[str, Any]], Any]
    #: Operations by full name, e.g. ``"arc.queue_jobs"``.
    operations: dict[str, Operation] = field(default_factory=dict)
    #: Invariants by full name, e.g. ``"arc.applied-never-ahead"``.
    invariants: dict[str, Invariant] = field(default_factory=dict)
    #: JSON Schema of ``services.<name>`` (None = any mapping).
    settings_schema: dict[str, Any] | None = None
    #: JSON Schema of each operation's argument, by operation name (for the loader).
    operation_schemas: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Names of the controllers the bundle hosts (for ``crash:`` and ``as:``).
    controllers: tuple[str, ...] = ()
    #: Kinds the bundle serves (its CRDs' kinds), so the loader can check targets without installing it.
    kinds: tuple[str, ...] = ()
    description: str = ""
    #: The simulated services a fault rule may name (``on: {service, call}``): service -> its call names.
    #: Empty: the bundle declares none, and rules naming a service are not checked.
    services: dict[str, tuple[str, ...]] = field(default_factory=dict)


_REGISTRY: dict[str, Bundle] = {}


def register_bundle(bundle: Bundle) -> Bundle:
    """Make a bundle available by name (overrides an entry point of the same name)."""
    _REGISTRY[bundle.name] = bundle
    return bundle


def get_bundle(name: str) -> Bundle | None:
    """Find a bundle by name: registered ones first, then the ``fakeapi.bundles`` entry points."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    for ep in entry_points(group="fakeapi.bundles"):
        if ep.name == name:
            obj = ep.load()
            bundle = obj() if callable(obj) and not isinstance(obj, Bundle) else obj
            if isinstance(bundle, Bundle):
                _REGISTRY[name] = bundle
                return bundle
    return None


def available_bundles() -> list[str]:
    """Names of every bundle that can be hosted."""
    names = set(_REGISTRY)
    names.update(ep.name for ep in entry_points(group="fakeapi.bundles"))
    return sorted(names)
