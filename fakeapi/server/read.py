"""GET, LIST and WATCH: reads, at the current revision or an older one.

A list reads the store (or rolls it back through the watch log to an older revision, as etcd
serves one), filters by selectors, pages with continue tokens; a watch is a cursor into the
resource's event log (:mod:`fakeapi.server.watch`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from typing import Any

from fakeapi.machinery import errors
from fakeapi.machinery.errors import Cause
from fakeapi.machinery.metavalidation import forbidden, not_supported
from fakeapi.registry.kinds import Kind
from fakeapi.server.pipeline import KeyedObjects, Outcome, Pipeline
from fakeapi.server.store import object_key
from fakeapi.server.watch import ADDED, BOOKMARK, INITIAL_EVENTS_END, Watch, WatchEvent

CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list.")


class ReadVerbs(Pipeline):
    """``get``, ``list`` and ``watch``."""

    def get(self, kind: str, name: str, namespace: str | None = None, *, api_version: str | None = None,
            resource_version: str | None = None, actor: str = "user", shared: bool = False) -> dict[str, Any]:
        """GET one object (404 when missing)."""
        k = self.resolve_kind(kind, api_version)
        ns = namespace or "" if k.namespaced else ""

        def run() -> Outcome:
            if k.namespaced and not ns:
                raise errors.resource_not_found()
            self._check_rv_not_too_large(resource_version)
            e = self._table(k).get(ns, name)
            if e is None:
                raise errors.not_found(k.group, k.plural, name)
            return Outcome(e.obj, stored=True)

        return self._run("get", k, ns, name, "", actor, run, shared=shared)

    def _check_rv_not_too_large(self, rv: str | None) -> None:
        if rv:
            try:
                n = int(rv)
            except ValueError as e:
                raise errors.bad_request(f'invalid resource version "{rv}"') from e
            if n > self._rv:
                raise errors.too_large_resource_version(n, self._rv)

    def list(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        api_version: str | None = None,
        label_selector: str | dict[str, str] | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        send_initial_events: bool | None = None,
        actor: str = "user",
        shared: bool = False,
    ) -> dict[str, Any]:
        """LIST objects in storage-key order; ``metadata.resourceVersion`` is the store revision.

        ``shared``: the items are the stored snapshots themselves, not copies (read-only; a
        built-in item keeps its apiVersion and kind), for callers that decode each one into
        their own object, as fakeapi.host.client.Client does.
        """
        k = self.resolve_kind(kind, api_version)
        ns = namespace or "" if k.namespaced else ""

        def run() -> Outcome:
            self._check_list_options(resource_version, resource_version_match, continue_, send_initial_events,
                                     watch=False)
            match, terms = self._matcher(k, label_selector, field_selector)
            if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
                raise errors.bad_request(f"limit: invalid value {limit!r}")
            page = limit if limit and limit > 0 else 0
            start, at = "", self._rv
            if continue_:
                start, token_rv = _decode_continue(continue_)
                at = token_rv if token_rv > 0 else self._rv
            elif resource_version not in (None, "", "0") and (
                    resource_version_match == "Exact" or (page and not resource_version_match)):
                at = int(str(resource_version))
            table = self._table(k)
            current = at == self._rv
            if current:  # (a page starts at its key and stops once full: it costs what it returns)
                source: Iterable[tuple[str, dict[str, Any]]] = (
                    (e.key, e.obj) for e in table.select(ns or None, terms, start))
            else:
                source = self._objects_at(k, ns, at, start if continue_ else None)
            items: list[dict[str, Any]] = []
            last_key = ""
            remaining = 0
            for key, obj in source:
                if start and key.encode() <= start.encode():
                    continue
                if match is not None and not match(obj):
                    continue
                if page and len(items) >= page:
                    remaining += 1
                    if match is not None:
                        break
                    if current:  # (counted by the key index)
                        remaining = table.count_after(ns or None, last_key)
                        break
                    continue
                items.append(obj)
                last_key = key
            meta: dict[str, Any] = {"resourceVersion": str(at)}
            if remaining:
                meta["continue"] = _encode_continue(last_key, at)
                if match is None:
                    meta["remainingItemCount"] = remaining
            out_items = [self._view(k, o) for o in items] if shared else [self._list_item(k, o) for o in items]
            return Outcome({"apiVersion": k.api_version, "kind": k.list_kind, "metadata": meta, "items": out_items})

        return self._run("list", k, ns, "", "", actor, run)

    def _list_item(self, kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
        item = self._read(kind, obj)
        if kind.builtin:
            item.pop("apiVersion", None)
            item.pop("kind", None)
        return item

    def _objects_at(self, kind: Kind, ns: str, rv: int, continue_key: str | None) -> KeyedObjects:
        """The objects of a kind as they were at revision ``rv``, in key order (410 when history is gone).

        The current state is rolled back through the event log, as etcd serves an older revision.
        """
        log = self._log(kind)
        if rv < log.trimmed_rv:
            if continue_key is None:
                raise errors.expired("The resourceVersion for the provided list is too old.")
            err = errors.expired(CONTINUE_EXPIRED)
            err.status["metadata"] = {"continue": _encode_continue(continue_key, -1)}
            raise err
        state = {e.key: e.obj for e in self._table(kind).candidates(ns or None)}
        for ev in reversed(log.events[log.position_after(rv) - log.offset:]):
            if ns and ev.namespace != ns:
                continue
            key = object_key(ev.namespace, ev.obj["metadata"]["name"])
            if ev.old is None:
                state.pop(key, None)
            else:
                state[key] = ev.old
        return [(key, state[key]) for key in sorted(state, key=str.encode)]

    def _check_list_options(self, rv: str | None, match: str | None, cont: str | None,
                            send_initial_events: bool | None, *, watch: bool) -> None:
        """ListOptions validation (``internalversion/validation.ValidateListOptions``): 422 on failure."""
        causes = (_watch_option_causes(match, cont, send_initial_events) if watch
                  else _list_option_causes(rv, match, cont, send_initial_events))
        if causes:
            raise errors.options_invalid("ListOptions", causes)
        if cont and rv and rv != "0":
            raise errors.bad_request("specifying resource version is not allowed when using continue")
        if rv and rv != "0" and not watch:
            self._check_rv_not_too_large(rv)

    def watch(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        api_version: str | None = None,
        resource_version: str | None = None,
        label_selector: str | dict[str, str] | None = None,
        field_selector: str | None = None,
        allow_bookmarks: bool = False,
        send_initial_events: bool | None = None,
        resource_version_match: str | None = None,
        actor: str = "user",
    ) -> Watch:
        """WATCH: a stream of changes (see :class:`~fakeapi.server.watch.Watch`).

        No resourceVersion (or ``"0"``): ADDED for every current object first. A
        resourceVersion N: only changes after N, or an ERROR 410 when N is older than
        the retained history. ``send_initial_events``: the watch-list protocol, ending the
        initial events with a bookmark annotated ``k8s.io/initial-events-end``.
        """
        k = self.resolve_kind(kind, api_version)
        ns = namespace or "" if k.namespaced else ""
        holder: dict[str, Watch] = {}

        def run() -> Outcome:
            self._check_list_options(resource_version, resource_version_match, None, send_initial_events, watch=True)
            match, _terms = self._matcher(k, label_selector, field_selector)
            log = self._log(k)
            bookmark = (lambda: {"apiVersion": k.api_version, "kind": k.kind,
                                 "metadata": {"resourceVersion": str(self._rv)}}) if allow_bookmarks else None
            rv_text = resource_version or ""
            initial = rv_text in ("", "0") if send_initial_events is None else send_initial_events
            if rv_text not in ("", "0"):
                try:
                    rv = int(rv_text)
                except ValueError as err:
                    raise errors.bad_request(f'invalid resource version "{rv_text}"') from err
            else:
                rv = self._rv
            if rv < log.trimmed_rv and not initial:
                status = errors.expired(f"too old resource version: {rv} ({log.trimmed_rv + 1})").status
                holder["w"] = Watch(log, pos=log.end, namespace=ns, matcher=match, error=status,
                                    condition=self._cond, bookmark=bookmark)
                return Outcome({})
            events: list[WatchEvent] = []
            pos = log.position_after(rv) if rv_text not in ("", "0") else log.end
            if initial:
                for e in self._table(k).candidates(ns or None, _terms):
                    if match is None or match(e.obj):
                        events.append(WatchEvent(ADDED, e.obj))
                pos = log.end
                if send_initial_events:
                    events.append(WatchEvent(BOOKMARK, {
                        "apiVersion": k.api_version, "kind": k.kind,
                        "metadata": {"resourceVersion": str(self._rv),
                                     "annotations": {INITIAL_EVENTS_END: "true"}}}))
            holder["w"] = Watch(log, pos=pos, namespace=ns, matcher=match, initial=events, condition=self._cond,
                                bookmark=bookmark, after_rv=rv if rv > self._rv else 0)
            return Outcome({})

        self._run("watch", k, ns, "", "", actor, run)
        return holder["w"]


def _list_option_causes(rv: str | None, match: str | None, cont: str | None,
                        send_initial_events: bool | None) -> list[Cause]:
    """The field errors of a LIST's options, in kube-apiserver's order."""
    causes: list[Cause] = []
    if match:
        if not rv:
            causes.append(forbidden("resourceVersionMatch",
                                     "resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if cont:
            causes.append(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
        if match not in ("Exact", "NotOlderThan"):
            causes.append(not_supported("resourceVersionMatch", match, ["Exact", "NotOlderThan", ""]))
        if match == "Exact" and rv == "0":
            causes.append(forbidden("resourceVersionMatch",
                                     'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if send_initial_events is not None:
        causes.append(forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    return causes


def _watch_option_causes(match: str | None, cont: str | None, send_initial_events: bool | None) -> list[Cause]:
    """The field errors of a WATCH's options (the WatchList feature is enabled)."""
    causes: list[Cause] = []
    if send_initial_events is not None and match != "NotOlderThan":
        causes.append(forbidden("resourceVersionMatch",
                                 "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
    if match:
        if send_initial_events is None:
            causes.append(forbidden("resourceVersionMatch",
                                     "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
        if match != "NotOlderThan":
            causes.append(not_supported("resourceVersionMatch", match, ["NotOlderThan"]))
        if cont:
            causes.append(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
    return causes


def _encode_continue(key: str, rv: int) -> str:
    """A continue token as etcd3's store makes it: the list revision and the last key served."""
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": key}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[str, int]:
    """The (last key, revision) of a continue token; 400 when it is not one."""
    try:
        pad = "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(token + pad))
        if not isinstance(data, dict) or data.get("v") != "meta.k8s.io/v1":
            raise ValueError("unknown continue token version")
        return str(data["start"]), int(data["rv"])
    except (ValueError, KeyError, TypeError) as e:
        raise errors.bad_request(f"continue key is not valid: {e}") from e
