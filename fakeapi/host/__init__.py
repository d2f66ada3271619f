"""The controller host: run controllers against the fake API server, deterministically.

See docs/HOST.md ("Use fakeapi to test your own controller") for a worked example.
"""

from __future__ import annotations

from . import predicates
from .builder import ControllerBuilder, Request, Result
from .host import Actor, Context, Controller, GarbageCollectorActor, Host, RunStats
from .hotloop import HotLoopError
from .informer import CacheReader, Informer
from .kubelet import Kubelet
from .predicates import Predicate
from .ratelimit import ExponentialBackoff
from .workqueue import WorkQueue

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
