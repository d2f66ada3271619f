"""Built-in OpenAPI schemas (from kubernetes-validate) and schema-node navigation.

Two schema shapes are navigated with the same helpers:

- the built-in kinds' schemas shipped by the ``kubernetes_validate`` package:
  one file per kind (``pod-v1.json``) whose nodes ``$ref`` into
  ``_definitions.json`` (``/api/_definitions.json#/$defs/<name>`` in kind files,
  ``#/$defs/<name>`` inside the definitions), nullable types written
  ``type: ["string", "null"]``;
- inline CRD structural schemas (``openAPIV3Schema``), with no ``$ref``.

:func:`structural_from_definition` expands a built-in definition into the
structural form controller-gen writes into a CRD (used for embedded pod
templates in custom kinds).
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from fakeapi.machinery.jsonutil import fast_copy

Schema = dict[str, Any]

QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
TIME = "io.k8s.apimachinery.pkg.apis.meta.v1.Time"
MICRO_TIME = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

# The pattern controller-gen writes for resource.Quantity fields.
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)

# `+default=` markers of k8s.io/api types that controller-gen turns into schema defaults
# (definition name -> property -> default). kubernetes-validate does not carry them.
_GO_DEFAULT_MARKERS: dict[str, dict[str, Any]] = {
    "io.k8s.api.core.v1.ContainerPort": {"protocol": "TCP"},
    "io.k8s.api.core.v1.ServicePort": {"protocol": "TCP"},
    "io.k8s.api.core.v1.EndpointPort": {"protocol": "TCP"},
}

def go_default_markers(node: Schema | None) -> dict[str, Any]:
    """The ``+default=`` values of the definition a node refers to (``{}`` for none)."""
    ref = node.get("$ref") if isinstance(node, dict) else None
    return _GO_DEFAULT_MARKERS.get(ref_name(ref), {}) if isinstance(ref, str) else {}


_VERSION_DIR = re.compile(r"^v(\d+)\.(\d+)\.(\d+)-local$")


#: The Kubernetes version whose built-in schemas fakeapi serves. kubernetes-validate ships the
#: schemas of several versions; serving a fixed one keeps a newer release of the package from
#: changing what the server does (and the ARC CRDs generated from it). The newest is used when
#: this one is missing.
KUBERNETES_SCHEMAS = "v1.37.0-local"


@lru_cache(maxsize=1)
def schema_dir() -> Path:
    """The :data:`KUBERNETES_SCHEMAS` directory of kubernetes-validate's schemas (else the newest ``vX.Y.Z-local``)."""
    # located without importing the package (its import pulls in jsonschema and yaml)
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the kubernetes-validate package is not installed")
    root = Path(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"
    if (root / KUBERNETES_SCHEMAS).is_dir():
        return root / KUBERNETES_SCHEMAS
    best: tuple[tuple[int, int, int], Path] | None = None
    for p in root.iterdir():
        m = _VERSION_DIR.match(p.name)
        if m and p.is_dir():
            key = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
            if best is None or key > best[0]:
                best = (key, p)
    if best is None:
        raise FileNotFoundError(f"no vX.Y.Z-local schema directory under {root}")
    return best[1]


class _Definitions(Mapping[str, Schema]):
    """The ``$defs`` of ``_definitions.json``, each definition parsed from the file's bytes on first read.

    The file holds every built-in type (1.7 MB); a server uses a few dozen of them. The file's
    layout (``json.dumps(indent=2, sort_keys=True)``) makes a definition name the only key
    indented by four spaces, in sorted order: a definition is found by bisection over the
    bytes, without reading the rest of the file, and decoded once, where it starts (the same
    object is returned from then on). The full index (every name's offset) is built only when
    needed: to iterate, to count, or for a name the bisection does not find (then the index
    decides, whatever the order of the keys).
    """

    def __init__(self, data: bytes, first: int) -> None:
        self._data = data
        self._first = first  # where the first definition's key line starts
        self._offsets: dict[str, int] | None = None
        self._parsed: dict[str, Schema] = {}

    def _index(self) -> dict[str, int]:
        """Every definition name and the offset of its value (scanning the whole file, once)."""
        if self._offsets is None:
            self._offsets = {m.group(1).decode("utf-8"): m.end() for m in _DEF_KEY.finditer(self._data, self._first)}
        return self._offsets

    def _bisect(self, name: str) -> int:
        """The offset of definition ``name``'s value, found by bisection over the sorted keys; -1 if not found."""
        data, key = self._data, name.encode("utf-8")
        lo, hi = self._first, len(data)
        while lo < hi:  # the key lines still in question start in [lo, hi)
            mid = (lo + hi) // 2
            line = data.find(_KEY_LINE, mid)
            if line < 0 or line >= hi:
                hi = mid
                continue
            start = line + len(_KEY_LINE)
            end = data.find(b'": ', start)
            if end < 0:
                return -1
            found = data[start:end]
            if found == key:
                return end + 3
            if found < key:
                lo = line + 1
            else:
                hi = line
        return -1

    def _offset(self, name: str) -> int:
        """The offset of definition ``name``'s value, or -1 when there is no such definition."""
        if self._offsets is None:
            at = self._bisect(name)
            if at >= 0:
                return at
        return self._index().get(name, -1)

    def __getitem__(self, name: str) -> Schema:
        hit = self._parsed.get(name)
        if hit is None:
            at = self._offset(name)
            if at < 0:
                raise KeyError(name)
            stop = self._data.find(_KEY_LINE, at)  # the next definition (the decoder stops before it)
            text = self._data[at:stop if stop >= 0 else len(self._data)].decode("utf-8")
            value, _ = _DECODER.raw_decode(text)
            hit = self._parsed.setdefault(name, value)  # one object per definition, even across threads
        return hit

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._offset(name) >= 0

    def __iter__(self) -> Iterator[str]:
        return iter(self._index())

    def __len__(self) -> int:
        return len(self._index())


_DECODER = json.JSONDecoder()
_DEFS_PREFIX = b'{\n  "$defs": {\n'
_KEY_LINE = b'\n    "'
_DEF_KEY = re.compile(rb'\n    "([^"\\\n]+)": ')


@lru_cache(maxsize=1)
def definitions() -> Mapping[str, Schema]:
    """All built-in definitions (the ``$defs`` of ``_definitions.json``), by full name (parsed on first use)."""
    with open(schema_dir() / "_definitions.json", "rb") as f:
        data = f.read()
    if data.startswith(_DEFS_PREFIX) and _DEF_KEY.search(data):
        return _Definitions(data, len(_DEFS_PREFIX) - 1)
    defs: dict[str, Schema] = json.loads(data)["$defs"]  # another layout: parse it all
    return defs


def _file_name(kind: str, api_version: str) -> str:
    group, _, version = api_version.rpartition("/")
    if not group:
        return f"{kind.lower()}-{version}.json"
    return f"{kind.lower()}-{group.split('.')[0]}-{version}.json"


@lru_cache(maxsize=256)
def builtin_schema(kind: str, api_version: str) -> Schema:
    """The root schema of a built-in kind, e.g. ``("Pod", "v1")``.

    Raises KeyError when kubernetes-validate has no schema for that kind.
    """
    path = schema_dir() / _file_name(kind, api_version)
    if path.is_file():
        with open(path, encoding="utf-8") as f:
            root: Schema = json.load(f)
        if _has_gvk(root, kind, api_version):
            return root
    name = definition_name(kind, api_version)
    if name is None:
        raise KeyError(f"no built-in schema for {api_version} {kind}")
    return definitions()[name]


def _has_gvk(node: Schema, kind: str, api_version: str) -> bool:
    group, _, version = api_version.rpartition("/")
    gvks = node.get("x-kubernetes-group-version-kind")
    if not gvks:
        return True
    return any(g.get("group", "") == group and g.get("version") == version and g.get("kind") == kind for g in gvks)


@lru_cache(maxsize=256)
def definition_name(kind: str, api_version: str) -> str | None:
    """The definition name of a kind (``io.k8s.api.core.v1.Pod`` for ``("Pod", "v1")``), or None."""
    group, _, version = api_version.rpartition("/")
    for name, node in definitions().items():
        for g in node.get("x-kubernetes-group-version-kind") or ():
            if g.get("group", "") == group and g.get("version") == version and g.get("kind") == kind:
                return name
    return None


# --- navigation ------------------------------------------------------------------------

_MERGED: dict[int, tuple[Schema, Schema]] = {}
_REF_IGNORED = frozenset({"$ref", "description"})


def ref_name(ref: str) -> str:
    """The definition name a ``$ref`` points to (``.../$defs/<name>``)."""
    return ref.rpartition("/")[2]


def resolve(node: Schema) -> Schema:
    """Follow ``$ref`` (built-in schemas); inline nodes are returned as they are.

    Sibling keywords of a ``$ref`` (``x-kubernetes-patch-strategy``, …) are kept:
    the result is the referenced definition overlaid with them (cached).
    """
    ref = node.get("$ref")
    if ref is None or type(ref) is not str:
        return node
    target = definitions()[ref_name(ref)]
    if len(node) == 1 or all(k in _REF_IGNORED for k in node):
        return resolve(target)
    hit = _MERGED.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    merged = dict(resolve(target))
    merged.update((k, v) for k, v in node.items() if k not in _REF_IGNORED)
    _MERGED[id(node)] = (node, merged)
    return merged


def child(node: Schema | None, key: str) -> Schema | None:
    """The (resolved) schema of property ``key`` of an object node, or of a map value.

    Returns None when the node does not describe that key.
    """
    if node is None:
        return None
    n = resolve(node)
    props = n.get("properties")
    if props is not None:
        sub = props.get(key)
        if sub is not None:
            return resolve(sub)
    ap = n.get("additionalProperties")
    if isinstance(ap, dict):
        return resolve(ap)
    return None


def items(node: Schema | None) -> Schema | None:
    """The (resolved) schema of an array node's elements, or None."""
    if node is None:
        return None
    it = resolve(node).get("items")
    return resolve(it) if isinstance(it, dict) else None


def patch_strategy(node: Schema | None) -> str:
    """``x-kubernetes-patch-strategy`` of a node (``merge``, ``replace``, ``retainKeys``…) or ""."""
    if node is None:
        return ""
    return str(resolve(node).get("x-kubernetes-patch-strategy", ""))


def patch_merge_key(node: Schema | None) -> str:
    """``x-kubernetes-patch-merge-key`` of a list node, or ""."""
    if node is None:
        return ""
    return str(resolve(node).get("x-kubernetes-patch-merge-key", ""))


def list_map_keys(node: Schema | None) -> list[str]:
    """``x-kubernetes-list-map-keys`` of a list node, falling back to ``[patch merge key]``."""
    if node is None:
        return []
    n = resolve(node)
    keys = n.get("x-kubernetes-list-map-keys")
    if keys:
        return list(keys)
    pmk = n.get("x-kubernetes-patch-merge-key")
    return [pmk] if pmk else []


def list_type(node: Schema | None) -> str:
    """``x-kubernetes-list-type`` of a list node (``atomic``, ``set``, ``map``) or ""."""
    if node is None:
        return ""
    return str(resolve(node).get("x-kubernetes-list-type", ""))


def types_of(node: Schema) -> tuple[str, ...]:
    """The non-null JSON types a node allows (``type: [X, "null"]`` gives ``(X,)``)."""
    t = resolve(node).get("type")
    if t is None:
        return ()
    if isinstance(t, str):
        return (t,)
    return tuple(x for x in t if x != "null")


# --- structural expansion ------------------------------------------------------------


def structural_from_definition(name: str) -> Schema:
    """A built-in definition expanded inline in CRD structural form (as controller-gen writes it).

    No ``$ref``; ``[X, "null"]`` types collapsed; Quantity and IntOrString as
    ``x-kubernetes-int-or-string``; list/patch extensions kept; descriptions
    and enums dropped; embedded ObjectMeta as ``{type: object}``. Returns a
    fresh copy each call (callers may embed and mutate it).
    """
    return fast_copy(_structural(name))


@lru_cache(maxsize=64)
def _structural(name: str) -> Schema:
    """The expanded definition, built once per process (never handed out: callers get copies)."""
    return _sort_keys(_expand_def(name, ()))


def _sort_keys(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _sort_keys(node[k]) for k in sorted(node)}
    if isinstance(node, list):
        return [_sort_keys(v) for v in node]
    return node


def _expand_def(name: str, stack: tuple[str, ...]) -> Schema:
    if name == QUANTITY:
        return {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": QUANTITY_PATTERN,
            "x-kubernetes-int-or-string": True,
        }
    if name == INT_OR_STRING:
        return {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
    if name in (TIME, MICRO_TIME):
        return {"type": "string", "format": "date-time"}
    if name == OBJECT_META and stack:
        return {"type": "object"}
    if name in stack:
        # controller-gen cannot express recursion either: keep the value as is.
        return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    out = _expand_node(definitions()[name], (*stack, name))
    marks = _GO_DEFAULT_MARKERS.get(name)
    if marks:
        for prop, value in marks.items():
            if prop in out.get("properties", {}):
                out["properties"][prop]["default"] = value
    return out


_DROPPED = frozenset(
    {"description", "enum", "x-kubernetes-unions", "x-kubernetes-group-version-kind", "$schema", "$id"}
)


def _expand_node(node: Schema, stack: tuple[str, ...]) -> Schema:
    ref = node.get("$ref")
    if isinstance(ref, str):
        expanded = _expand_def(ref_name(ref), stack)
        for k, v in node.items():
            if k not in _REF_IGNORED and k not in _DROPPED:
                expanded[k] = v
        return expanded
    if "oneOf" in node or "anyOf" in node:
        alts = node.get("oneOf") or node.get("anyOf") or []
        kinds = {tuple(types_of(a)) for a in alts}
        if kinds == {("string",), ("integer",)} or kinds == {("string",), ("number",)}:
            return {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
    out: Schema = {}
    for k, v in node.items():
        if k in _DROPPED or k in ("oneOf", "anyOf", "allOf", "not"):
            continue
        if k == "type":
            ts = [t for t in ([v] if isinstance(v, str) else v) if t != "null"]
            if len(ts) == 1:
                out["type"] = ts[0]
            elif ts:
                out["type"] = ts
        elif k == "properties":
            out["properties"] = {p: _expand_node(s, stack) for p, s in v.items()}
        elif k in ("items", "additionalProperties") and isinstance(v, dict):
            out[k] = _expand_node(v, stack)
        else:
            out[k] = v
    t = out.get("type")
    if t is None and "properties" not in out and "items" not in out:
        # free-form JSON (apiextensions JSON and similar)
        out["x-kubernetes-preserve-unknown-fields"] = True
    elif t == "object" and "properties" not in out and "additionalProperties" not in out:
        # RawExtension, FieldsV1: arbitrary content
        out["x-kubernetes-preserve-unknown-fields"] = True
    if "properties" in out and "type" not in out:
        out["type"] = "object"
    return out
