"""The controller host: run controllers against the fake API server, deterministically.

See docs/HOST.md ("Use fakeapi to test your own controller") for a worked example. Holds the
host and its controllers (:mod:`~fakeapi.host.host`, :mod:`~fakeapi.host.builder`), the client a
controller holds (:mod:`~fakeapi.host.client`), informer caches, work queues, predicates, rate
limits, hot-loop detection and the kubelet simulator.

May import: :mod:`fakeapi.machinery`, :mod:`fakeapi.codec`, :mod:`fakeapi.schema`,
:mod:`fakeapi.registry`, :mod:`fakeapi.server` (not its siblings :mod:`fakeapi.http` and
:mod:`fakeapi.controllers`: the server runs the garbage collector, the host only schedules it).
"""

from __future__ import annotations

from fakeapi.host import predicates
from fakeapi.host.builder import ControllerBuilder, Request, Result
from fakeapi.host.host import Actor, Context, Controller, GarbageCollectorActor, Host, RunStats
from fakeapi.host.hotloop import HotLoopError
from fakeapi.host.informer import CacheReader, Informer
from fakeapi.host.kubelet import Kubelet
from fakeapi.host.predicates import Predicate
from fakeapi.host.ratelimit import ExponentialBackoff
from fakeapi.host.workqueue import WorkQueue

__all__ = [
    "Actor",
    "CacheReader",
    "Context",
    "Controller",
    "ControllerBuilder",
    "ExponentialBackoff",
    "GarbageCollectorActor",
    "Host",
    "HotLoopError",
    "Informer",
    "Kubelet",
    "Predicate",
    "Request",
    "Result",
    "RunStats",
    "WorkQueue",
    "predicates",
]
