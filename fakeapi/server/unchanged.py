"""An update body's unchanged parts, told apart cheaply so the write path can skip them (issue 22).

A client's PUT usually sends back what it read with a small change (a label, a replica
count): the Pod update of a controller resends the whole spec as it was. The write path
shares what a write leaves as stored (:meth:`fakeapi.server.apiserver.APIServer._update_entry`
and the patch path): shared values were decoded, defaulted, validated and encoded when
they were stored, so the Go decode check, the decode pipeline, validation and encoding
skip them, as they skip what a patch leaves alone. :func:`share_unchanged` finds those
values in an update body: a top-level value whose serialised form (orjson: types and key
order included, so ``1`` never passes for ``true``) is the stored value's is replaced by
the stored value itself.
"""

from __future__ import annotations

from typing import Any

import orjson

#: Top-level keys never shared: the metadata (its own path) and the type fields.
_OWN = frozenset({"metadata", "apiVersion", "kind"})


def _same_json(a: Any, b: Any) -> bool:
    """Do two JSON values serialise to the same bytes (exact: types and key order)?"""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    try:
        return orjson.dumps(a) == orjson.dumps(b)
    except (orjson.JSONEncodeError, TypeError):
        return False  # (not something orjson carries: never shared)


def share_unchanged(body: dict[str, Any], stored: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """(``body`` with each top-level value equal to the stored one, byte for byte, replaced by the
    stored value; the keys replaced). ``body`` itself is not changed; with nothing replaced it is
    returned as it is."""
    shared = tuple(k for k, v in body.items()
                   if k not in _OWN and type(v) is dict and k in stored and _same_json(v, stored[k]))
    if not shared:
        return body, ()
    out = dict(body)
    for k in shared:
        out[k] = stored[k]
    return out, shared
