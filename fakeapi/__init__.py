"""fakeapi: a faithful in-memory Kubernetes API server and a deterministic controller host.

The public API: :class:`APIServer` (the verbs), :class:`Client` (what a Go
controller holds: actor name and Go codec), :class:`Clock` (virtual time),
:class:`Watch` / :class:`WatchEvent`, :class:`ApiError` with the client-go style
predicates, :class:`FaultRule` / :class:`ControllerCrash`, :class:`Kind`, and
:func:`semantic_equal` (``apiequality.Semantic.DeepEqual``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from fakeapi.buildinfo import warn_if_stale
from fakeapi.machinery.lazymodule import lazy_exports
from fakeapi.server import hooks as _hooks

__all__ = [
    "ADDED",
    "BOOKMARK",
    "DELETED",
    "ERROR",
    "MODIFIED",
    "APIServer",
    "ApiError",
    "Cause",
    "Client",
    "Clock",
    "ControllerCrash",
    "FaultRule",
    "GoType",
    "Kind",
    "Watch",
    "WatchEvent",
    "go_roundtrip",
    "go_type_from_structural",
    "is_already_exists",
    "is_bad_request",
    "is_conflict",
    "is_expired",
    "is_forbidden",
    "is_invalid",
    "is_not_found",
    "is_too_many_requests",
    "parse_duration",
    "semantic_equal",
]

if TYPE_CHECKING:
    from fakeapi.codec.gomodel import GoType, go_roundtrip, go_type_from_structural
    from fakeapi.codec.semantic import semantic_equal
    from fakeapi.host.client import Client
    from fakeapi.machinery.errors import (
        ApiError,
        Cause,
        is_already_exists,
        is_bad_request,
        is_conflict,
        is_expired,
        is_forbidden,
        is_invalid,
        is_not_found,
        is_too_many_requests,
    )
    from fakeapi.registry.kinds import Kind
    from fakeapi.server.apiserver import APIServer
    from fakeapi.server.clock import Clock, parse_duration
    from fakeapi.server.faults import ControllerCrash, FaultRule
    from fakeapi.server.watch import ADDED, BOOKMARK, DELETED, ERROR, MODIFIED, Watch, WatchEvent

#: Where each public name lives (imported on first use; :func:`__getattr__`).
_HOMES = {
    **dict.fromkeys(["GoType", "go_roundtrip", "go_type_from_structural"], "fakeapi.codec.gomodel"),
    **dict.fromkeys(["ApiError", "Cause", "is_already_exists", "is_bad_request", "is_conflict", "is_expired",
                     "is_forbidden", "is_invalid", "is_not_found", "is_too_many_requests"], "fakeapi.machinery.errors"),
    "Kind": "fakeapi.registry.kinds",
    "APIServer": "fakeapi.server.apiserver",
    **dict.fromkeys(["Clock", "parse_duration"], "fakeapi.server.clock"),
    **dict.fromkeys(["ControllerCrash", "FaultRule"], "fakeapi.server.faults"),
    **dict.fromkeys(["ADDED", "BOOKMARK", "DELETED", "ERROR", "MODIFIED", "Watch", "WatchEvent"], "fakeapi.server.watch"),
    "Client": "fakeapi.host.client",
    "semantic_equal": "fakeapi.codec.semantic",
}


# (issue 22: a process that needs one corner of the package, such as the pytest plugin's options in a
# pytest-xdist controller, which runs no case, does not load the rest)
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)


def _garbage_collector(api: Any) -> Any:
    """The collector of ``APIServer(garbage_collector=True)`` until :mod:`fakeapi.controllers` is imported:
    import it (it registers :class:`~fakeapi.controllers.gc.GarbageCollector` with the hooks) and make one."""
    from fakeapi.controllers.gc import GarbageCollector

    return GarbageCollector(api)


def _serve_over_http(*args: Any, **options: Any) -> Any:
    """``APIServer.serve`` until :mod:`fakeapi.http` is imported: import it (it registers its own
    ``serve`` with the hooks) and serve with it."""
    from fakeapi.http import serve

    return serve(*args, **options)


def _served_cluster(*args: Any, **options: Any) -> Any:
    """The controllers and node of ``serve(..., cluster=True)`` (:class:`fakeapi.host.cluster.ServedCluster`),
    registered here because :mod:`fakeapi.http` may not import :mod:`fakeapi.host`; imported on first use."""
    from fakeapi.host.cluster import ServedCluster

    return ServedCluster(*args, **options)


if "fakeapi.http" not in sys.modules:
    _hooks.register_http(_serve_over_http)
if "fakeapi.controllers" not in sys.modules:
    _hooks.register_garbage_collector(_garbage_collector)
_hooks.register_cluster(_served_cluster)

warn_if_stale()  # (an edited source whose compiled extension still runs: see setup.py)
