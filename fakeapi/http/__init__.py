"""fakeapi over HTTP: the Kubernetes REST API of an in-process server, for any client.

``serve(api)`` is a context manager giving an :class:`Endpoint` (URL and a
kubeconfig path); point the official ``kubernetes`` client, lightkube, kr8s,
kubectl or client-go at it. :class:`RestAPI` is the socket-free translation of
REST requests into :class:`~fakeapi.server.apiserver.APIServer` calls.
"""

from __future__ import annotations

from fakeapi.http.rest import Request, Response, RestAPI, WatchResponse
from fakeapi.http.server import Endpoint, FakeAPIHTTPServer, kubeconfig_document, serve, write_kubeconfig

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
