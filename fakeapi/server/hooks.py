"""What the layers above the server plug into it: the HTTP front end and the garbage collector.

:class:`~fakeapi.server.apiserver.APIServer` sits below :mod:`fakeapi.http` and
:mod:`fakeapi.controllers`, yet ``api.serve()`` runs the HTTP server and
``APIServer(garbage_collector=True)`` runs the collector. So each of those packages registers
its implementation here when it is imported (as Kubernetes' ``install`` packages register their
types into a scheme), and the server asks this module. ``import fakeapi`` imports neither
package (a cold start pays for neither): it registers stand-ins that import the package on
first use and hand over to it (``fakeapi/__init__.py``), and Python runs ``fakeapi/__init__.py``
before any ``fakeapi.*`` module a program imports: whatever a program imports, the server finds
an implementation registered.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol


class Served(Protocol):
    """Where a served server listens (:class:`fakeapi.http.Endpoint`)."""

    @property
    def url(self) -> str:
        """``http://HOST:PORT``."""

    @property
    def host(self) -> str:
        """The address listened on."""

    @property
    def port(self) -> int:
        """The port listened on."""

    @property
    def kubeconfig_path(self) -> str:
        """A kubeconfig file that points at the server."""

    def kubeconfig(self) -> dict[str, Any]:
        """The kubeconfig document."""


class Collector(Protocol):
    """The garbage collector the server tells about every write (:class:`fakeapi.controllers.gc.GarbageCollector`)."""

    name: str

    def on_event(self, etype: str, kind: Any, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        """Note the work a write creates."""

    def pending(self) -> bool:
        """True when there is work to do."""

    def run(self) -> bool:
        """Do the work noted; True if anything was done."""


#: ``serve(api, host, port, **options)``: a context manager serving ``api`` over HTTP.
ServeFn = Callable[..., AbstractContextManager[Served]]
#: ``factory(api)``: the collector of one server.
CollectorFactory = Callable[[Any], Collector]

_serve: ServeFn | None = None
_collector: CollectorFactory | None = None
#: ``factory(api, wall_clock=..., ca_pem=...)``: the controllers and node of ``serve(..., cluster=True)``.
_cluster: Callable[..., Any] | None = None


def register_http(serve: ServeFn) -> None:
    """Install the HTTP front end behind ``APIServer.serve`` (called by :mod:`fakeapi.http`)."""
    global _serve
    _serve = serve


def register_garbage_collector(factory: CollectorFactory) -> None:
    """Install the collector ``APIServer(garbage_collector=True)`` runs (called by :mod:`fakeapi.controllers`)."""
    global _collector
    _collector = factory


def http_serve() -> ServeFn:
    """The registered HTTP front end."""
    if _serve is None:
        raise RuntimeError("no HTTP front end is registered: import fakeapi.http (import fakeapi does)")
    return _serve


def garbage_collector(api: Any) -> Collector:
    """A new collector for ``api``, from the registered factory."""
    if _collector is None:
        raise RuntimeError("no garbage collector is registered: import fakeapi.controllers (import fakeapi does)")
    return _collector(api)


def register_cluster(factory: Callable[..., Any]) -> None:
    """Install what ``serve(..., cluster=True)`` runs beside the server (called by ``fakeapi/__init__.py``:
    :mod:`fakeapi.http` may not import :mod:`fakeapi.host`, which holds it)."""
    global _cluster
    _cluster = factory


def cluster_factory() -> Callable[..., Any]:
    """The registered served-cluster factory."""
    if _cluster is None:
        raise RuntimeError("serve(cluster=True): no cluster is registered (import fakeapi does)")
    return _cluster
