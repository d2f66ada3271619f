"""``fakeapi serve``: serve a fakeapi over HTTP, preloaded from YAML manifests.

::

    fakeapi serve [--host H] [--port N] [--token T] [--kubeconfig PATH] [--tls] [--no-controllers] [FILES_OR_DIRS...]

Loads every document of the given YAML (or JSON) files, and of the ``*.yaml``,
``*.yml`` and ``*.json`` files of given directories: CustomResourceDefinitions
first, then Namespaces, then everything else in file order (``kind: List``
documents are expanded; a namespace an object names that does not exist yet
is created). Then prints the URL, writes a kubeconfig (to ``--kubeconfig``,
else into a temporary directory) and serves until interrupted (Ctrl-C or
SIGTERM). The server's clock follows wall time (``--virtual-clock`` keeps the
fixed virtual clock of an in-process server).

The served process is a cluster: the garbage collector, the namespace
controller, a kubelet with its Node and the namespace bootstrap run beside the
API (``--no-controllers`` serves the bare API server). ``--tls`` serves HTTPS.

Access: it listens on loopback by default. Like a real cluster it always
authenticates: every request must carry ``Authorization: Bearer TOKEN`` (else
401), the token of ``--token`` or, without one, a random token made at start;
the kubeconfig written carries it. ``--no-token`` accepts any request, with
a token or without (the in-process ``serve()`` does so unless given a token). Any other ``--host`` prints a warning and needs ``--token`` (or
``--insecure-allow-any-host``, to serve the cluster's content to whoever can
reach the port). ``--allow-host NAME`` adds a name the Host header may give
(loopback names and the bound address are always accepted: a browser page
whose domain resolves to 127.0.0.1 is refused).

Also runnable alone: ``python -m fakeapi.serve_cmd ...``.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from fakeapi.machinery.errors import ApiError

if TYPE_CHECKING:
    from fakeapi.server.apiserver import APIServer

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
#: The one-line help of the subcommand.
SERVE_HELP = "serve a fakeapi over HTTP: the Kubernetes REST API, a kubeconfig, objects loaded from YAML"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``serve`` options to ``parser``."""
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="YAML/JSON manifests (or directories of them) to load: CRDs first, then objects")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: 0, a free port)")
    # --- issue 24: access ---
    parser.add_argument("--token", default=None,
                        help="require this bearer token on every request (the kubeconfig written carries it)")
    parser.add_argument("--no-token", action="store_true",
                        help="accept every request, whatever token it carries (default: a token made at start)")
    parser.add_argument("--insecure-allow-any-host", action="store_true",
                        help="allow a non-loopback --host without --token (anyone reaching the port reads and writes)")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="another name the Host header may give (repeatable)")
    parser.add_argument("--kubeconfig", metavar="PATH", default=None,
                        help="where to write the kubeconfig (default: a temporary file, removed on exit)")
    parser.add_argument("--virtual-clock", action="store_true",
                        help="keep the server's virtual clock (fixed at its start) instead of following wall time")
    parser.add_argument("--verbose", action="store_true", help="log every request to stderr")
    parser.add_argument("--tls", action="store_true",
                        help="serve HTTPS with a CA made at start (the kubeconfig trusts it and has a client certificate)")
    parser.add_argument("--no-controllers", action="store_true",
                        help="serve a bare API server: no garbage collector, namespace controller or kubelet")


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``serve`` on an ``argparse`` subparsers object; the parser's ``func`` default is :func:`run`."""
    parser: argparse.ArgumentParser = subparsers.add_parser("serve", help=SERVE_HELP, description=SERVE_HELP)
    add_arguments(parser)
    parser.set_defaults(func=run)
    return parser


def manifest_files(paths: Iterable[str | Path]) -> list[Path]:
    """The files named, with directories expanded to their manifests (sorted, not recursive)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.iterdir() if f.is_file() and f.suffix in MANIFEST_SUFFIXES))
        else:
            out.append(p)
    return out


def read_manifests(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """Every object of the files, in order (``List`` documents expanded, empty documents skipped)."""
    from fakeapi.machinery.boundedyaml import (
        load_all,  # (issue 24: nesting and aliases bounded, YAML read as JSON)
    )

    objects: list[dict[str, Any]] = []
    for f in manifest_files(paths):
        with open(f, encoding="utf-8") as fh:
            for doc in load_all(fh.read()):
                if doc is None:
                    continue
                if not isinstance(doc, dict):
                    raise ValueError(f"{f}: a document is not an object")
                if str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list):
                    objects.extend(item for item in doc["items"] if isinstance(item, dict))
                else:
                    objects.append(doc)
    return objects


def _is_crd(obj: dict[str, Any]) -> bool:
    return obj.get("kind") == "CustomResourceDefinition" and str(obj.get("apiVersion", "")).startswith(
        "apiextensions.k8s.io/")


def _is_namespace(obj: dict[str, Any]) -> bool:
    return obj.get("kind") == "Namespace" and obj.get("apiVersion") == "v1"


def load(api: APIServer, objects: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """Create ``objects`` in ``api``: CRDs, then Namespaces, then the rest. Returns (CRDs, other objects).

    A Namespace that already exists is left as it is; a namespace named by an
    object but missing is created first. Any other failure raises the
    :class:`~fakeapi.machinery.errors.ApiError`.
    """
    crds = [o for o in objects if _is_crd(o)]
    namespaces = [o for o in objects if _is_namespace(o)]
    rest = [o for o in objects if not _is_crd(o) and not _is_namespace(o)]
    for crd in crds:
        api.register_crd(crd, actor="fakeapi-serve")
    existing = {n["metadata"]["name"] for n in api.list("Namespace", actor="fakeapi-serve")["items"]}
    for namespace in namespaces:
        name = str((namespace.get("metadata") or {}).get("name") or "")
        if name in existing:
            continue
        api.create(namespace, actor="fakeapi-serve")
        existing.add(name)
    for obj in rest:
        ns: str | None = (obj.get("metadata") or {}).get("namespace")
        kind = api.kinds.find(str(obj.get("kind", "")), obj.get("apiVersion"))
        if kind is not None and kind.namespaced:
            ns = ns or "default"
            if ns not in existing:
                api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, actor="fakeapi-serve")
                existing.add(ns)
        api.create(obj, namespace=ns, actor="fakeapi-serve")
    return len(crds), len(namespaces) + len(rest)


def follow_wall_clock(api: APIServer, stop: threading.Event, interval: float = 0.5) -> threading.Thread:
    """Keep ``api.clock`` at wall time (under the server lock) until ``stop`` is set."""

    def tick() -> None:
        while True:
            with api.lock:
                now = datetime.now(UTC)
                if now > api.clock.now():
                    api.clock.set(now)
            if stop.wait(interval):
                return

    t = threading.Thread(target=tick, name="fakeapi-wall-clock", daemon=True)
    t.start()
    return t


#: API calls (and reconciles) a served process keeps in its trace: it serves for as long as it runs.
TRACE_KEEP = 10_000


def trim_trace(api: APIServer, keep: int = TRACE_KEEP) -> None:
    """Drop all but the last ``keep`` records of ``api``'s trace once it holds twice as many (under the lock).

    The trace records every call for test reports; a server left running would grow it without bound.
    """
    with api.lock:
        trace = api.trace
        for name in ("entries", "calls", "reconciles"):
            records = getattr(trace, name)
            if len(records) > 2 * keep:
                del records[: len(records) - keep]


def housekeeping(api: APIServer, stop: threading.Event, interval: float = 5.0,
                 keep: int = TRACE_KEEP) -> threading.Thread:
    """Trim ``api``'s trace every ``interval`` seconds until ``stop`` is set (a daemon thread)."""

    def loop() -> None:
        while not stop.wait(interval):
            trim_trace(api, keep)

    t = threading.Thread(target=loop, name="fakeapi-housekeeping", daemon=True)
    t.start()
    return t


def is_loopback_host(host: str) -> bool:
    """Is ``host`` (an address or name to listen on) this machine only?"""
    import ipaddress

    if host.lower() in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def access_problem(args: argparse.Namespace) -> str | None:
    """Warn of a non-loopback ``--host`` (stderr); why it cannot be served as asked, or None."""
    host = str(getattr(args, "host", "127.0.0.1"))
    token = getattr(args, "token", None)
    if token is not None and not token.strip():
        return "--token must not be empty"
    if is_loopback_host(host):
        return None
    print(f"fakeapi serve: warning: --host {host} serves beyond this machine: whoever reaches the port can "
          "read and write every object, Secrets included", file=sys.stderr)
    if token is None and not getattr(args, "insecure_allow_any_host", False):
        return (f"--host {host} needs --token (requests must then carry it), or --insecure-allow-any-host "
                "to serve without one")
    return None


def served_token(args: argparse.Namespace) -> str | None:
    """The bearer token requests must carry: ``--token``, else a random one (None with ``--no-token``)."""
    import secrets

    token = getattr(args, "token", None)
    if token is None and not getattr(args, "no_token", False):
        token = secrets.token_urlsafe(32)
    return token


def run(args: argparse.Namespace) -> int:
    """Load the manifests, serve, print the URL and kubeconfig path, block until interrupted."""
    from fakeapi.http import serve
    from fakeapi.server.apiserver import APIServer
    from fakeapi.server.clock import Clock

    problem = access_problem(args)
    if problem is not None:
        print(f"fakeapi serve: {problem}", file=sys.stderr)
        return 2
    virtual = getattr(args, "virtual_clock", False)
    api = APIServer() if virtual else APIServer(clock=Clock(datetime.now(UTC)))
    try:
        n_crds, n_objects = load(api, read_manifests(args.files))
    except (OSError, ValueError, yaml.YAMLError) as e:
        print(f"fakeapi serve: {e}", file=sys.stderr)
        return 2
    except ApiError as e:
        print(f"fakeapi serve: loading failed: {e.code} {e.reason}: {e.message}", file=sys.stderr)
        return 1
    stop = threading.Event()
    bare = getattr(args, "no_controllers", False)
    if not virtual and bare:
        follow_wall_clock(api, stop)  # (a served cluster's loop follows wall time itself)
    housekeeping(api, stop)  # (issue 24: bounded memory, however long it serves)

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with serve(api, args.host, args.port, kubeconfig_path=args.kubeconfig, verbose=args.verbose,
                   token=served_token(args), allowed_hosts=tuple(getattr(args, "allow_host", ())),
                   tls=getattr(args, "tls", False), cluster=not bare, wall_clock=not virtual) as ep:
            print(f"fakeapi: serving {ep.url}", flush=True)
            print(f"fakeapi: kubeconfig {ep.kubeconfig_path}  (export KUBECONFIG={ep.kubeconfig_path})", flush=True)
            print(f"fakeapi: loaded {n_crds} CRD(s) and {n_objects} object(s); Ctrl-C to stop", flush=True)
            while not stop.wait(0.5):
                pass
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
    print("fakeapi: stopped", flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m fakeapi.serve_cmd``: the ``serve`` subcommand on its own."""
    parser = argparse.ArgumentParser(prog="fakeapi serve", description=SERVE_HELP)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
