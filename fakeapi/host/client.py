"""The client a controller holds: controller-runtime's ``client.Client`` in Python.

Every call carries the controller's name as the actor (so the trace and fault
rules can tell controllers apart). With ``go_codec=True`` (the default) the
client behaves like a Go client with typed structs: each object it writes is
first passed through the kind's Go type model (``omitempty`` drops empty
slices, maps, strings, zeros, false and nil pointers), and each object it
reads is decoded the same way, so a controller sees exactly what a Go
controller would. Reads may be served by an informer cache (``reader``), but for the
kinds named ``uncached`` (``client.CacheOptions.DisableFor``), read from the server.

Every object the client returns is the caller's own copy, unless it was made with
``unsafe_disable_deep_copy=True`` (controller-runtime's ``UnsafeDisableDeepCopy``, here
for write answers and uncached reads too): then it is the decoded form shared with
every other reader of the same snapshot, which the caller must never mutate
(``FAKEAPI_CHECK_SNAPSHOTS=1`` catches one that does).
"""

from __future__ import annotations

from typing import Any, Protocol

from fakeapi.codec.godecode import go_decode
from fakeapi.codec.gomodel import go_roundtrip
from fakeapi.machinery.errors import ApiError, is_not_found
from fakeapi.machinery.jsonutil import fast_copy
from fakeapi.registry.kinds import Kind
from fakeapi.server.apiserver import APIServer
from fakeapi.server.pipeline import patches_module


class Reader(Protocol):
    """What serves a client's reads: the server itself or an informer cache."""

    def get(self, kind: str, name: str, namespace: str | None = None, *,
            api_version: str | None = None) -> dict[str, Any]: ...

    def get_for(self, k: Kind, name: str, namespace: str | None = None) -> dict[str, Any]: ...

    def list(self, kind: str, namespace: str | None = None, *, api_version: str | None = None,
             labels: str | dict[str, str] | None = None, fields: str | dict[str, str] | None = None,
             ) -> list[dict[str, Any]]: ...


def _selector_text(sel: str | dict[str, str] | None) -> str | None:
    if sel is None or isinstance(sel, str):
        return sel
    return ",".join(f"{k}={v}" for k, v in sorted(sel.items()))


class Client:
    """Reads and writes objects on an :class:`~fakeapi.server.apiserver.APIServer` as a named actor."""

    def __init__(self, api: APIServer, actor: str = "user", *, go_codec: bool = True,
                 reader: Reader | None = None, unsafe_disable_deep_copy: bool = False,
                 uncached: frozenset[tuple[str, str]] = frozenset()) -> None:
        self.api = api
        self.actor = actor
        self.go_codec = go_codec
        self.reader = reader
        #: Return shared, read-only decoded objects instead of copies (Go codec only).
        self.unsafe_disable_deep_copy = unsafe_disable_deep_copy
        #: (group, kind) pairs read from the server even with a ``reader`` (``CacheOptions.DisableFor``).
        self.uncached = uncached

    # ------------------------------------------------------------ codec

    def _kind(self, kind: str, api_version: str | None = None) -> Kind:
        # The registry's memo of found kinds, read first (every call resolves its kind): it holds only
        # names and apiVersions that are strings (or None), so a hit is what resolve_kind answers, its
        # type checks included; anything else (a miss, an unhashable argument) goes through resolve_kind.
        try:
            k: Kind | None = self.api.kinds._found.get((kind, api_version))
        except TypeError:
            k = None
        return k if k is not None else self.api.resolve_kind(kind, api_version)

    def encode(self, obj: dict[str, Any], kind: Kind | None = None) -> dict[str, Any]:
        """What a Go client would send for ``obj`` (unchanged for untyped kinds)."""
        if not self.go_codec:
            return obj
        k = kind or self.api.kinds.find(str(obj.get("kind", "")), obj.get("apiVersion"))
        if k is None or k.go_type is None:
            return obj
        out: dict[str, Any] = go_roundtrip(obj, k.go_type)
        out["apiVersion"], out["kind"] = k.api_version, k.kind
        return out

    def decode(self, obj: dict[str, Any], kind: Kind) -> dict[str, Any]:
        """What a Go client holds after reading ``obj`` (TypeMeta filled in, as a typed object knows it)."""
        if self.go_codec and kind.go_type is not None:
            obj = go_decode(obj, kind.go_type)
        obj["apiVersion"], obj["kind"] = kind.api_version, kind.kind
        return obj

    def _reader_for(self, k: Kind) -> Reader | None:
        """The cache that serves reads of ``k``: none without a ``reader``, or for a kind in ``uncached``."""
        reader = self.reader
        if reader is not None and self.uncached and (k.group, k.kind) in self.uncached:
            return None
        return reader

    def _own(self, snapshot: dict[str, Any], kind: Kind) -> dict[str, Any]:
        """:meth:`decode` of a stored snapshot the server shared (``shared=True``), through its decode cache."""
        if self.go_codec:
            return self.api.decoded.decode(kind, snapshot, copy=not self.unsafe_disable_deep_copy)
        return self.decode(fast_copy(snapshot), kind)

    # ------------------------------------------------------------ reads

    def get(self, kind: str, name: str, namespace: str | None = None, *,
            api_version: str | None = None) -> dict[str, Any]:
        """Get one object (raises ApiError 404 when missing)."""
        k = self._kind(kind, api_version)
        reader = self._reader_for(k)
        if reader is not None:
            return reader.get_for(k, name, namespace)
        return self._own(self.api.get(k.kind, name, namespace, api_version=k.api_version, actor=self.actor,
                                      shared=True), k)

    def find(self, kind: str, name: str, namespace: str | None = None, *,
             api_version: str | None = None) -> dict[str, Any] | None:
        """:meth:`get`, answering None where it raises NotFound (``client.IgnoreNotFound(c.Get(...))``):
        the same request (an uncached client's 404 is in the trace); a cache reader that can answer
        None at once (:meth:`~fakeapi.host.informer.CacheReader.find_for`) does."""
        try:
            k = self._kind(kind, api_version)
            reader = self._reader_for(k)
            if reader is None:
                return self._own(self.api.get(k.kind, name, namespace, api_version=k.api_version, actor=self.actor,
                                              shared=True), k)
            find_for = getattr(reader, "find_for", None)
            if find_for is None:
                return reader.get_for(k, name, namespace)
            found: dict[str, Any] | None = find_for(k, name, namespace)
            return found
        except ApiError as e:
            if is_not_found(e):
                return None
            raise

    def list(self, kind: str, namespace: str | None = None, *, api_version: str | None = None,
             labels: str | dict[str, str] | None = None,
             fields: str | dict[str, str] | None = None) -> list[dict[str, Any]]:
        """List objects (items only, each with apiVersion and kind)."""
        k = self._kind(kind, api_version)
        reader = self._reader_for(k)
        if reader is not None:
            return reader.list(k.kind, namespace, api_version=k.api_version, labels=labels, fields=fields)
        out = self.api.list(k.kind, namespace, api_version=k.api_version, label_selector=_selector_text(labels),
                            field_selector=_selector_text(fields), actor=self.actor, shared=True)
        return [self._own(item, k) for item in out["items"]]

    # ----------------------------------------------------------- writes

    def create(self, obj: dict[str, Any], *, encoded: bool = False) -> dict[str, Any]:
        """Create an object; returns it as stored.

        ``encoded``: ``obj`` is already what :meth:`encode` makes of it, and the caller's own (a
        caller sending one body several times encodes it once and sends a copy each time).
        """
        k = self._kind(str(obj.get("kind", "")), obj.get("apiVersion"))
        return self._own(self.api.create(obj if encoded else self.encode(obj, k), actor=self.actor, shared=True,
                                         go_encoded=self.go_codec and k.go_type is not None), k)

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Replace an object (PUT); its metadata.resourceVersion is the optimistic lock."""
        k = self._kind(str(obj.get("kind", "")), obj.get("apiVersion"))
        return self._own(self.api.update(self.encode(obj, k), actor=self.actor, shared=True), k)

    def update_status(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Replace an object's status (PUT on the status subresource)."""
        k = self._kind(str(obj.get("kind", "")), obj.get("apiVersion"))
        return self._own(self.api.update(self.encode(obj, k), subresource="status", actor=self.actor, shared=True), k)

    def patch(self, kind: str, name: str, patch: Any, *, namespace: str | None = None,
              api_version: str | None = None, patch_type: str = "merge",
              subresource: str | None = None, read_answer: bool = True) -> dict[str, Any]:
        """Send a patch as is (the body is not re-encoded: a Go client sends raw patch bytes).

        ``read_answer=False`` is for a caller that drops the answer (Go code that never looks at
        the object the client decoded the answer into): the same request, but the answer is not
        decoded; what comes back is the server's stored snapshot, shared and read-only.
        """
        k = self._kind(kind, api_version)
        out = self.api.patch(k.kind, name, patch, namespace=namespace, api_version=k.api_version,
                             patch_type=patch_type, subresource=subresource, actor=self.actor, shared=True)
        if not read_answer:
            return out
        return self._own(out, k)

    def apply(self, obj: dict[str, Any], *, field_owner: str | None = None, force: bool = False,
              subresource: str | None = None) -> dict[str, Any]:
        """Server-side apply of ``obj`` as ``field_owner`` (default: this client's actor), as
        ``client.Patch(ctx, obj, client.Apply, client.FieldOwner(…))`` does; ``force`` is
        ``client.ForceOwnership``. The configuration is sent as given (an apply configuration:
        only the fields this manager means to own), not re-encoded from a Go struct."""
        k = self._kind(str(obj.get("kind", "")), obj.get("apiVersion"))
        meta = obj.get("metadata") or {}
        owner = field_owner or self.actor
        out = self.api.patch(k.kind, str(meta.get("name", "")), obj, namespace=meta.get("namespace"),
                             api_version=k.api_version, patch_type="apply", subresource=subresource,
                             field_manager=owner, force=force, actor=self.actor, shared=True)
        return self._own(out, k)

    def patch_from(self, original: dict[str, Any], modified: dict[str, Any], *, optimistic_lock: bool = False,
                   subresource: str | None = None) -> dict[str, Any]:
        """``client.Patch(ctx, modified, client.MergeFrom(original))``: send the merge-patch diff.

        Both objects are encoded as a Go client would before diffing. With
        ``optimistic_lock`` the patch carries the original's resourceVersion, so the
        server answers 409 if the object changed since it was read.
        """
        k = self._kind(str(original.get("kind", "")), original.get("apiVersion"))
        a, b = self.encode(original, k), self.encode(modified, k)
        body = patches_module().create_merge_patch(a, b)
        if optimistic_lock:
            rv = (original.get("metadata") or {}).get("resourceVersion")
            if not rv:
                raise ValueError("cannot use optimistic locking: the original object has no resourceVersion")
            body = dict(body) if isinstance(body, dict) else {}
            body.setdefault("metadata", {})
            body["metadata"] = {**body["metadata"], "resourceVersion": rv}
        meta = original.get("metadata") or {}
        return self.patch(k.kind, meta.get("name", ""), body, namespace=meta.get("namespace"),
                          api_version=k.api_version, patch_type="merge", subresource=subresource)

    def delete(self, kind: str, name: str, namespace: str | None = None, *, api_version: str | None = None,
               propagation_policy: str | None = None, preconditions: dict[str, Any] | None = None,
               grace_period_seconds: int | None = None) -> None:
        """Delete an object (raises ApiError 404 when missing; callers ignore it as Go code does)."""
        k = self._kind(kind, api_version)
        self.api.delete(k.kind, name, namespace, api_version=k.api_version, propagation_policy=propagation_policy,
                        preconditions=preconditions, grace_period_seconds=grace_period_seconds, actor=self.actor,
                        shared=True)  # the answer is not used: no copy

    def delete_all_of(self, kind: str, namespace: str | None = None, *, api_version: str | None = None,
                      labels: str | dict[str, str] | None = None, fields: str | dict[str, str] | None = None,
                      propagation_policy: str | None = None) -> None:
        """DeleteAllOf: a deletecollection with selectors."""
        k = self._kind(kind, api_version)
        self.api.delete_collection(k.kind, namespace, api_version=k.api_version,
                                   label_selector=_selector_text(labels), field_selector=_selector_text(fields),
                                   propagation_policy=propagation_policy, actor=self.actor)
