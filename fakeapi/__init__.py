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

# (importing fakeapi.controllers registers the garbage collector with the server, and
# fakeapi.http the HTTP front end: see fakeapi.server.hooks. The HTTP front end is imported
# when a server first serves, not here: a server that never serves never loads it; issue 22)
import fakeapi.controllers  # noqa: F401  (registers the garbage collector)
from fakeapi.buildinfo import warn_if_stale
from fakeapi.codec.gomodel import GoType, go_roundtrip, go_type_from_structural
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
from fakeapi.server import hooks as _hooks
from fakeapi.server.apiserver import APIServer
from fakeapi.server.clock import Clock, parse_duration
from fakeapi.server.faults import ControllerCrash, FaultRule
from fakeapi.server.watch import ADDED, BOOKMARK, DELETED, ERROR, MODIFIED, Watch, WatchEvent

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
    from fakeapi.codec.semantic import semantic_equal
    from fakeapi.host.client import Client


def __getattr__(name: str) -> Any:
    """``fakeapi.Client`` and ``fakeapi.semantic_equal``, imported on first use: a program that only
    serves (or only runs an ``APIServer``) never loads the controller host, nor Go's semantic
    equality (cold start, issue 22)."""
    if name == "Client":
        from fakeapi.host.client import Client

        return Client
    if name == "semantic_equal":
        from fakeapi.codec.semantic import semantic_equal

        return semantic_equal
    raise AttributeError(f"module 'fakeapi' has no attribute {name!r}")


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
_hooks.register_cluster(_served_cluster)

warn_if_stale()  # (an edited source whose compiled extension still runs: see setup.py)
