"""Who may talk to a served fakeapi: the bearer token, the Host header, the body's media type.

A fakeapi served over HTTP holds whatever a test put in it, Secrets included,
and anything that can reach its port can read and write it. Three checks keep
that to the clients meant to use it, before a request reaches the REST layer:

* **token**: with a token set (``fakeapi serve --token``, ``serve(token=...)``),
  a request without ``Authorization: Bearer <token>``, or with another token,
  gets kube-apiserver's answer to a failed authentication: 401 with the
  ``metav1.Status`` of ``apierrors.NewUnauthorized("Unauthorized")`` (as with
  ``--anonymous-auth=false``: every path, ``/healthz`` included);
* **Host**: the Host header must name the server (a loopback name, the bound
  address, or a name given in ``allowed_hosts``), so a web page whose domain
  is made to resolve to 127.0.0.1 (DNS rebinding) cannot reach it from a
  browser: 403 otherwise. A server bound to every address (``0.0.0.0``,
  ``::``) also accepts any IP literal and the machine's host name;
* **media type**: a request carrying a body (create, update, patch, delete
  options) must say it is JSON, YAML or one of the patch types; a browser form
  (``application/x-www-form-urlencoded``, ``multipart/form-data``,
  ``text/plain``) is a 415 with the media types accepted, as kube-apiserver
  answers. A body with no Content-Type is read as JSON as kube-apiserver
  does, except from a browser (an ``Origin`` header): a page can send such a
  body cross-origin without a CORS preflight, so that is a 415 too.
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
from dataclasses import dataclass, field

from fakeapi.http.rest import BODY_MEDIA_TYPES, Request, Response, encode
from fakeapi.machinery import errors

#: Names that always mean this machine.
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
#: Paths served to anyone that can connect, token or not (none: kube with ``--anonymous-auth=false``).
PUBLIC_PATHS: frozenset[str] = frozenset()


def unauthorized() -> Response:
    """kube-apiserver's 401 for a request that failed authentication."""
    return Response(401, encode(errors.status_body(401, "Unauthorized", "Unauthorized")))


def media_type(req: Request) -> str:
    """The request's Content-Type without parameters, lower case ('' when absent)."""
    return req.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The host of a Host header, without the port (IPv6 brackets removed), lower case."""
    h = header.strip().lower()
    if h.startswith("["):
        end = h.find("]")
        return h[1:end] if end > 0 else h
    if h.count(":") == 1:
        h = h.rsplit(":", 1)[0]
    return h.rstrip(".")


@dataclass
class AccessPolicy:
    """The checks of one served fakeapi: its token (None: none needed) and the host names it answers to."""

    bound_host: str
    token: str | None = None
    allowed_hosts: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        names = {host_name(h) for h in self.allowed_hosts} | {host_name(self.bound_host)}
        self.allowed_hosts = frozenset(names)
        self.wildcard = self.bound_host in ("0.0.0.0", "::", "")
        if self.wildcard:
            self.allowed_hosts |= {socket.gethostname().lower()}

    def host_allowed(self, header: str | None) -> bool:
        """Does the Host header name this server?"""
        if header is None:
            return False
        host = host_name(header)
        if host in self.allowed_hosts or _is_loopback(host):
            return True
        return self.wildcard and _is_ip(host)

    def authenticated(self, req: Request) -> bool:
        """Does the request carry the token (always, when no token is set)?"""
        if self.token is None or req.path in PUBLIC_PATHS:
            return True
        auth = req.headers.get("authorization", "")
        scheme, _, given = auth.partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(given.strip().encode(), self.token.encode())

    def check(self, req: Request, *, authenticated: bool = False) -> Response | None:
        """The answer refusing ``req`` (403 Host, 401 token, 415 media type), or None to serve it;
        ``authenticated``: the request was authenticated otherwise (a client certificate, a signed
        ServiceAccount token), so the token is not needed."""
        if not self.host_allowed(req.headers.get("host")):
            host = req.headers.get("host")
            return Response(403, encode(errors.status_body(
                403, "Forbidden",
                f"the Host header {host!r} does not name this server" if host is not None
                else "the request has no Host header")))
        if not authenticated and not self.authenticated(req):
            return unauthorized()
        return body_media_type_problem(req)


def body_media_type_problem(req: Request) -> Response | None:
    """A 415 for a create, update or delete body not of a Kubernetes media type, else None.

    A body without Content-Type is read as JSON, as kube-apiserver does (the official Python client
    sends its creates so), unless the request comes from a browser (it has an ``Origin`` header): a
    page can send a body without Content-Type cross-origin, without a CORS preflight.

    A PATCH is left to the API server, which answers an unknown or missing patch type with a 415
    listing the patch types of the kind, as kube-apiserver does.
    """
    if req.method not in ("POST", "PUT", "DELETE") or not req.body:
        return None
    ctype = media_type(req)
    if ctype in BODY_MEDIA_TYPES:
        return None
    if ctype == "" and "origin" not in req.headers:
        return None  # (no Content-Type and not from a browser: JSON, as kube-apiserver reads it)
    return Response(415, encode(errors.unsupported_media_type(list(BODY_MEDIA_TYPES)).status))
