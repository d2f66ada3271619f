"""fakeapi over HTTP: the Kubernetes REST API of an in-process server, for any client.

``serve(api)`` is a context manager giving an :class:`Endpoint` (URL and a
kubeconfig path); point the official ``kubernetes`` client, lightkube, kr8s,
kubectl or client-go at it. :class:`RestAPI` is the socket-free translation of
REST requests into :class:`~fakeapi.server.apiserver.APIServer` calls.

Importing this package registers :func:`serve` with :mod:`fakeapi.server.hooks`, behind
``APIServer.serve()``.

May import: :mod:`fakeapi.machinery`, :mod:`fakeapi.codec`, :mod:`fakeapi.schema`,
:mod:`fakeapi.registry`, :mod:`fakeapi.server` (not its siblings :mod:`fakeapi.host` and
:mod:`fakeapi.controllers`).
"""

from __future__ import annotations

from fakeapi.http.rest import Request, Response, RestAPI, WatchResponse
from fakeapi.http.server import Endpoint, FakeAPIHTTPServer, kubeconfig_document, serve, write_kubeconfig
from fakeapi.server import hooks

__all__ = [
    "Endpoint",
    "FakeAPIHTTPServer",
    "Request",
    "Response",
    "RestAPI",
    "WatchResponse",
    "kubeconfig_document",
    "serve",
    "write_kubeconfig",
]

hooks.register_http(serve)
