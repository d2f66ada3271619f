"""PATCH: JSON Patch, merge patch, strategic merge patch and server-side apply.

The patch is applied to the stored object as read at the request's version; the result is
decoded (the Go decoder's check first, for built-ins) and goes through the update pipeline
(:mod:`fakeapi.server.update`). An apply merges through the field manager, and creates a missing
object through the create pipeline (:mod:`fakeapi.server.create`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from fakeapi.codec.snapshoterrors import NotGoEncoded
from fakeapi.machinery import bodycheck, errors  # (bodycheck: issue 24)
from fakeapi.machinery.errors import ApiError, Cause
from fakeapi.machinery.jsonutil import normalize_numbers
from fakeapi.machinery.lazymodule import lazy_module
from fakeapi.machinery.typedfields import MAP, ApplyMemo, TypedError, root_type
from fakeapi.registry.kinds import Kind
from fakeapi.server.decoding import check_go_decodes, check_go_json, check_patched_go_decodes, patch_invalid
from fakeapi.server.pipeline import Outcome, mapping, patches_module
from fakeapi.server.store import Entry
from fakeapi.server.update import UpdateVerb

if TYPE_CHECKING:
    from fakeapi.machinery import serverapply, typedapply
else:  # (imported on a server's first apply: one that never applies never compiles them; issue 22)
    serverapply = lazy_module(__name__, "fakeapi.machinery.serverapply")
    typedapply = lazy_module(__name__, "fakeapi.machinery.typedapply")

PATCH_TYPES = {
    "json": "json",
    "application/json-patch+json": "json",
    "merge": "merge",
    "application/merge-patch+json": "merge",
    "strategic": "strategic",
    "application/strategic-merge-patch+json": "strategic",
    "apply": "apply",
    "application/apply-patch+yaml": "apply",
}
CR_PATCH_MEDIA = ["application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"]
BUILTIN_PATCH_MEDIA = [*CR_PATCH_MEDIA[:2], "application/strategic-merge-patch+json", CR_PATCH_MEDIA[2]]


class PatchVerb(UpdateVerb):
    """``patch``, server-side apply included."""

    #: Prune on every re-apply, as upstream does, even when it cannot remove anything (the reference
    #: computation of tests/test_managed_fields_corpus.py; the server skips that prune).
    _eager_prune: bool = False
    #: What applies compute from a configuration's top-level fields, by content (set by the server).
    _apply_memo: ApplyMemo | None = None

    def patch(
        self,
        kind: str,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        api_version: str | None = None,
        patch_type: str = "merge",
        subresource: str | None = None,
        actor: str = "user",
        field_validation: str = "Warn",
        dry_run: bool = False,
        field_manager: str | None = None,
        force: bool | None = None,
        shared: bool = False,
        go_encoded: bool = False,
    ) -> dict[str, Any]:
        """PATCH with a JSON Patch, a JSON merge patch, (built-in kinds) a strategic merge patch,
        or a server-side apply (``patch_type="apply"``, YAML or JSON, ``field_manager`` required).

        An apply of a missing object creates it (201). It merges the configuration into the
        object as ``field_manager``, drops what that manager applied before and no longer
        does, and answers 409 when it would change fields another manager owns, unless
        ``force`` (:mod:`fakeapi.machinery.serverapply`). Every write keeps ``metadata.managedFields``.
        ``go_encoded``: the patch was built from Go-typed values (fakeapi's own kubelet), so the
        patched object decodes and the check that it does is skipped (``FAKEAPI_CHECK_SNAPSHOTS=1``
        checks that trust: :class:`fakeapi.codec.snapshots.NotGoEncoded`).
        """
        k = self.resolve_kind(kind, api_version)
        ns = namespace or "" if k.namespaced else ""
        sub = subresource or ""
        ptype = PATCH_TYPES.get(patch_type, "")

        def run() -> Outcome:
            if k.namespaced and not ns:
                raise errors.resource_not_found()
            accepted = BUILTIN_PATCH_MEDIA if k.builtin else CR_PATCH_MEDIA
            if not ptype or (ptype == "strategic" and not k.builtin):
                raise errors.unsupported_media_type(accepted)
            if ptype == "apply":
                if not field_manager:
                    raise errors.options_invalid("PatchOptions", [Cause(
                        errors.FIELD_VALUE_REQUIRED, "Required value: is required for apply patch", "fieldManager")])
            elif force is not None:
                raise errors.options_invalid("PatchOptions", [Cause(
                    errors.FIELD_VALUE_FORBIDDEN, "Forbidden: may not be specified for non-apply patch", "force")])
            if sub and (sub != "status" or not k.status_subresource):
                raise errors.not_found(k.group, k.plural, name)
            e = self._table(k).get(ns, name)
            if ptype == "apply":
                return self._apply(k, e, ns, name, patch, sub, str(field_manager), bool(force), field_validation,
                                   dry_run)
            if e is None:
                raise errors.not_found(k.group, k.plural, name)
            patches = patches_module()  # (not an apply's)
            body = patch
            if isinstance(body, (bytes, str)):
                try:
                    body = bodycheck.loads(body)  # (Go's nesting bound, never a RecursionError)
                except ValueError as err:
                    raise errors.bad_request(f"error decoding patch: {err}") from err
            if go_encoded and self.snapshot_guard is not None:
                check_go_json(f"{ptype} patch", body)
            # (issue 24: the whole patch, before it is applied; a Go client's holds JSON values alone)
            patch_chars = bodycheck.check_body(body, json_only=go_encoded)
            # the patch functions do not change the document they are given (a merge patch's
            # result shares its untouched parts: the decoder copies it)
            current = e.obj if e.obj.get("apiVersion") == k.api_version else self._read(k, e.obj)
            try:
                if ptype == "json":
                    result = patches.apply_json_patch_shared(current, body)
                elif ptype == "merge":
                    result = patches.apply_merge_patch_shared(current, body)
                else:
                    if not isinstance(body, dict):
                        raise patches.PatchFormatError("unable to find api field in struct for the patch")
                    result = patches.apply_strategic_merge_patch(current, body, k.schema or {})
            except patches.PatchTooLargeError as err:
                raise ApiError(errors.status_body(413, "RequestEntityTooLarge", str(err))) from err
            except patches.PatchFormatError as err:
                raise errors.bad_request(str(err)) from err
            except patches.PatchApplyError as err:
                raise errors.generic_invalid() from err
            except patches.PatchInternalError as err:
                raise errors.internal(str(err)) from err
            if not isinstance(result, dict):
                raise errors.bad_request("the patch produced something that is not an object")
            if ptype == "merge":  # (issue 24: what the patch changed; a merge patch's values keep their paths)
                bodycheck.check_merge_patched(result, patch_chars)
            else:
                bodycheck.check_patched(result, current, patch_chars, json_only=go_encoded)
            rmeta = mapping(result.get("metadata"))
            if rmeta.get("name", name) != name:
                raise errors.bad_request(
                    f"the name of the object ({rmeta.get('name')}) does not match the name on the URL ({name})")
            if result.get("apiVersion") != k.api_version or result.get("kind") != k.kind:
                if ptype == "json":
                    raise errors.bad_request("the API version or kind of the object changed in the patch")
                result["apiVersion"], result["kind"] = k.api_version, k.kind
            if k.stored_go_encoded and (not go_encoded or self.snapshot_guard is not None):
                try:
                    check_patched_go_decodes(k, ptype, body, result, current)
                except ApiError as err:
                    if go_encoded:
                        raise NotGoEncoded(f"a go_encoded {ptype} patch of {k.kind} {name} does not decode: "
                                           f"{err.message}") from err
                    raise
            # every patch's result shares the untouched parts of the stored object (kept shared by the
            # decoder, which copies the rest: a JSON Patch's values are the caller's)
            decoded = self._decode(k, result, field_validation, shared=True, base=current, go_body=go_encoded,
                                   strict_error=lambda message: patch_invalid(ptype, body, result, message))
            dmeta = decoded["metadata"]
            dmeta["name"] = name
            if k.namespaced:
                dmeta["namespace"] = self._namespace_for(k, dmeta.get("namespace"), ns)
            return self._update_entry(k, e, decoded, sub, dry_run, patch=True, manager=actor,
                                      body_managed=rmeta.get("managedFields"))

        return self._run("patch", k, ns, name, sub, actor, run, patch_type=ptype or patch_type, shared=shared)

    def _apply(self, k: Kind, e: Entry | None, ns: str, name: str, patch: Any, sub: str, manager: str, force: bool,
               field_validation: str, dry_run: bool) -> Outcome:
        """Server-side apply (``applyPatcher``): merge, own, prune, conflicts; create when missing."""
        config = patch
        if isinstance(config, (bytes, str)):
            import yaml  # (here: most servers never see an apply, and yaml costs start-up time)

            from fakeapi.machinery import boundedyaml  # (issue 24: bounded, read as JSON)

            try:
                config = boundedyaml.load(config, max_depth=bodycheck.MAX_DEPTH)  # (go-yaml's bound)
            except yaml.YAMLError as err:
                raise errors.bad_request(f"error decoding YAML: {err}") from err
        if not isinstance(config, dict):
            raise errors.bad_request("error decoding YAML: the applied configuration is not an object")
        bodycheck.check_body(config)  # (issue 24: the whole configuration, before it is merged)
        config = normalize_numbers(config)
        got = config.get("apiVersion")
        if got != k.api_version:
            raise errors.bad_request("Incorrect version specified in apply patch. Specified patch version: "
                                     f"{got if isinstance(got, str) else ''}, expected: {k.api_version}")
        cmeta = mapping(config.get("metadata"))
        if cmeta.get("managedFields") is not None:
            raise errors.bad_request("metadata.managedFields must be nil")
        if cmeta.get("name", name) != name:
            raise errors.bad_request(
                f"the name of the object ({cmeta.get('name')}) does not match the name on the URL ({name})")
        if e is None and sub:
            raise errors.not_found(k.group, k.plural, name)
        live = self._zero_object(k) if e is None else (
            e.obj if e.obj.get("apiVersion") == k.api_version else self._read(k, e.obj))
        stored = self._stored_managed(e)
        try:
            if not k.builtin and config.get("metadata") is not None and type(config["metadata"]) is not dict:
                # (as ObjectMeta's type check answers a built-in's (closed: to_field_set checks it): a custom
                # resource's too, rather than a crash)
                from fakeapi.machinery.typedapply import shape_problem  # (apply's module: on first use)
                raise TypedError([(".metadata", shape_problem(MAP, config["metadata"]))])
            applied = serverapply.apply(stored, live, config, root_type(k.schema), manager=manager,
                                         api_version=k.api_version, subresource=sub,
                                         status_subresource=k.status_subresource, force=force,
                                         now=self.clock.timestamp(), closed=k.builtin,
                                         eager_prune=self._eager_prune, memo=self._apply_memo)
        except serverapply.ApplyConflict as err:
            raise serverapply.conflict_error(err) from err
        except TypedError as err:
            where = f"{ns}/{name}" if ns else f"/{name}"
            group = f"{k.group}/{k.version}" if k.group else f"/{k.version}"
            raise errors.internal(f"failed to create typed patch object ({where}; {group}, Kind={k.kind}): {err}") from err
        merged = applied.obj  # (shares what the configuration left as it was with ``live``: never changed in place)
        if e is not None and live is e.obj:
            # (every value of the merge is the stored object's, checked when stored, or the configuration's
            # at the same path, checked above, and nothing else: only the size is left to measure)
            if _too_large(merged):
                raise errors.internal(bodycheck.OBJECT_TOO_LARGE)
        else:
            bodycheck.check_object(merged)  # (issue 24: the merged object's size)
        if merged is live:
            merged = dict(live)
        mmeta = mapping(merged.get("metadata"))
        if mmeta.get("name") != name:
            merged["metadata"] = mmeta = {**mmeta, "name": name}
        if e is None:
            if k.namespaced:
                mmeta.setdefault("namespace", ns)
            return self._create(k, merged, ns or None, field_validation, dry_run, False, manager=manager,
                                applied=applied.managed)
        # (issue 24: as the create path: a 400, not a crash in validation; what the merge shares with the
        # stored object decodes: only the rest is walked)
        check_go_decodes(k, merged, base=live)
        decoded = self._decode(k, merged, field_validation, shared=True, base=live)
        if live is e.obj:
            share_decoded_as_stored(decoded, live, config)
        dmeta = decoded["metadata"]
        dmeta["name"] = name
        if k.namespaced:
            dmeta["namespace"] = self._namespace_for(k, dmeta.get("namespace"), ns)
        return self._update_entry(k, e, decoded, sub, dry_run, patch=True, manager=manager, applied=applied.managed)


def share_decoded_as_stored(decoded: dict[str, Any], stored: dict[str, Any], config: dict[str, Any]) -> None:
    """Make each top-level map or list (metadata aside) of an applied object that decoded to the very JSON
    the stored object holds there the stored value itself. Only the fields of the configuration are looked
    at: the merge leaves the others as stored (the very values, kept shared by the decoder).

    A configuration that leaves out what the server defaulted (a port's protocol) merges to a new value
    that its defaults make the stored one again: shared, the update pipeline sees at once what a merge
    patch that left the field alone shows it (the write keeps that value, checked when it was stored:
    not validated again), and stores the same object either way.
    """
    for key in config:
        value = decoded.get(key)
        if (type(value) is not dict and type(value) is not list) or key == "metadata":
            continue
        was = stored.get(key)
        if was is not value and type(was) is type(value) and was == value and typedapply.same_json(was, value):
            decoded[key] = was


def _too_large(obj: dict[str, Any]) -> bool:
    """:func:`bodycheck.too_large` of a merged object, answered first from its JSON as orjson writes it
    (C speed): that differs from Go's compact JSON only in how a float is written, at least 3 bytes
    against at most 24, so a JSON under an eighth of the limit proves the object is not too large."""
    try:
        size = len(orjson.dumps(obj))
    except (orjson.JSONEncodeError, TypeError):  # (what orjson cannot carry: an int past 64 bits)
        return bodycheck.too_large(obj)
    return size * 8 >= bodycheck.MAX_OBJECT_BYTES and bodycheck.too_large(obj)
