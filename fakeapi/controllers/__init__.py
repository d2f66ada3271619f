"""The controllers of kube-controller-manager that every cluster runs: garbage collection, namespaces.

- :mod:`~fakeapi.controllers.gc`: :class:`GarbageCollector`, told about every write, noting work
  (:mod:`~fakeapi.controllers.gcwork`);
- :mod:`~fakeapi.controllers.gccollect`: doing it (owner references, foreground and orphan
  deletion, namespace termination, pvc-protection), through the server's public verbs;
- :mod:`~fakeapi.controllers.nsconditions`: the conditions of a terminating namespace.

Importing this package registers the collector with :mod:`fakeapi.server.hooks`, so that
``APIServer(garbage_collector=True)`` (the default) runs it.

May import: :mod:`fakeapi.machinery`, :mod:`fakeapi.codec`, :mod:`fakeapi.schema`,
:mod:`fakeapi.registry`, :mod:`fakeapi.server` (not :mod:`fakeapi.host` or :mod:`fakeapi.http`,
its siblings).
"""

from __future__ import annotations

from fakeapi.controllers.gc import GarbageCollector
from fakeapi.server import hooks

__all__ = ["GarbageCollector"]

hooks.register_garbage_collector(GarbageCollector)
