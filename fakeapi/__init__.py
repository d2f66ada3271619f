"""fakeapi: a faithful in-memory Kubernetes API server and a deterministic controller host.

The public API: :class:`APIServer` (the verbs), :class:`Client` (what a Go
controller holds: actor name and Go codec), :class:`Clock` (virtual time),
:class:`Watch` / :class:`WatchEvent`, :class:`ApiError` with the client-go style
predicates, :class:`FaultRule` / :class:`ControllerCrash`, :class:`Kind`, and
:func:`semantic_equal` (``apiequality.Semantic.DeepEqual``).
"""

from __future__ import annotations

# (importing fakeapi.controllers and fakeapi.http registers the garbage collector and the HTTP
# front end with the server: see fakeapi.server.hooks)
import fakeapi.controllers
import fakeapi.http
from fakeapi.buildinfo import warn_if_stale
from fakeapi.codec.gomodel import GoType, go_roundtrip, go_type_from_structural
from fakeapi.codec.semantic import semantic_equal
from fakeapi.host.client import Client
from fakeapi.host.cluster import ServedCluster as _ServedCluster
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

fakeapi.http.server.register_cluster(_ServedCluster)  # (serve(cluster=True): http may not import host)

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

warn_if_stale()  # (an edited source whose compiled extension still runs: see setup.py)
