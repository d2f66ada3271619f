"""The upstream Go structs, as recorded in generated data files, and their JSON view.

``fakeapi/codec/gostructs_k8s.json`` holds, for every Go type reachable from the
built-in kinds fakeapi serves, what ``tools/gen_gotypes.py`` read from the Go
source of k8s.io/api, k8s.io/apimachinery and k8s.io/apiextensions-apiserver at
the recorded commits: each struct's fields (Go name, type expression, embedded
or not, JSON name, ``omitempty``/``omitzero``/``inline``), each named type's
underlying type, and the JSON methods (``MarshalJSON``...) a type declares.
Other data files of the same form (ARC's) are read with :func:`load`.

:func:`json_fields` applies encoding/json's rules to a struct: untagged
embedded structs are flattened, unexported and ``json:"-"`` fields dropped,
a name given at two depths resolved to the shallower one. :mod:`fakeapi.gomodel`
builds its Go types from that.

Type expressions are Go's, with package paths in place of package names:
``*k8s.io/api/core/v1.PodSpec``, ``[]string``, ``map[string][]uint8``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

#: The built-in kinds' data file, beside this module (a path from ``__file__``: importlib.resources would
#: import tempfile, shutil, zipfile, bz2 and lzma at every cold start; issue 22).
K8S_DATA = Path(__file__).resolve().parent / "gostructs_k8s.json"

#: The formats of data file this module reads.
FORMATS = frozenset({1})

#: Go's integer types (a JSON number of the type's range), its floats, and its other basic types.
INT_TYPES = frozenset({"int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
                       "uintptr"})
FLOAT_TYPES = frozenset({"float32", "float64"})


class GoStructsError(ValueError):
    """A data file that is missing, malformed, or lacks a type another one refers to."""


@dataclass(frozen=True)
class JSONField:
    """One field of a struct's JSON object: its name, Go type expression and tag options.

    ``path`` is the Go field path that reaches it (``("ObjectMeta",)`` for a field
    promoted out of an embedded struct); ``inline`` marks a field whose tag says
    ``inline`` (encoding/json ignores that option: an embedded untagged struct is
    flattened whatever its tag's options).
    """

    name: str
    type: str
    omitempty: bool
    omitzero: bool
    path: tuple[str, ...]


class GoStructs:
    """The types of one or more data files, by qualified name (``k8s.io/api/core/v1.Pod``)."""

    def __init__(self, types: dict[str, dict[str, Any]], sources: list[dict[str, Any]] | None = None) -> None:
        self.types = types
        self.sources = sources or []
        self._fields: dict[str, tuple[JSONField, ...]] = {}

    def record(self, name: str) -> dict[str, Any]:
        """The data file's record of a type; :class:`GoStructsError` when it has none."""
        rec = self.types.get(name)
        if rec is None:
            raise GoStructsError(f"no Go type {name} in the data files")
        return rec

    def methods(self, name: str) -> dict[str, str]:
        """The JSON methods a type declares: method name -> receiver (``value``/``pointer``)."""
        return dict(self.record(name).get("methods") or {})

    def custom_json(self, name: str) -> bool:
        """Does the type marshal itself (``MarshalJSON`` or ``MarshalText``)?"""
        m = self.record(name).get("methods") or {}
        return "MarshalJSON" in m or "MarshalText" in m

    def json_fields(self, name: str) -> tuple[JSONField, ...]:
        """The fields of a struct's JSON object, in Go's field order (encoding/json's ``typeFields``)."""
        hit = self._fields.get(name)
        if hit is None:
            hit = self._fields[name] = tuple(self._resolve(name))
        return hit

    def _resolve(self, name: str) -> list[JSONField]:
        # breadth first over embedded structs, as encoding/json does: the shallowest field of a name
        # wins; of several at that depth, the one tagged with the name; else none of them
        found: dict[str, list[tuple[int, bool, int, JSONField]]] = {}
        order = 0
        level: list[tuple[str, tuple[str, ...]]] = [(name, ())]
        seen: set[str] = set()
        depth = 0
        while level:
            nxt: list[tuple[str, tuple[str, ...]]] = []
            for tname, path in level:
                if tname in seen:
                    continue
                seen.add(tname)
                rec = self.record(tname)
                if rec.get("kind") != "struct":
                    raise GoStructsError(f"{tname} is not a struct")
                for f in rec["fields"]:
                    if f.get("skip"):
                        continue  # json:"-"
                    go, jname = f["go"], f.get("json", "")
                    texpr = f["type"]
                    if f.get("embedded") and not jname:
                        base = texpr.lstrip("*")
                        brec = self.types.get(base)
                        if brec is not None and brec.get("kind") == "struct" and not self.custom_json(base):
                            if texpr.startswith("*"):
                                raise GoStructsError(f"{tname}: an embedded pointer ({texpr}) is not modelled")
                            nxt.append((base, (*path, go)))
                            continue
                    if not go[:1].isupper():
                        continue
                    jf = JSONField(jname or go, texpr, bool(f.get("omitempty")), bool(f.get("omitzero")),
                                   (*path, go))
                    found.setdefault(jf.name, []).append((depth, bool(jname), order, jf))
                    order += 1
            level = nxt
            depth += 1
        out: list[tuple[int, JSONField]] = []
        for cands in found.values():
            top = min(c[0] for c in cands)
            at = [c for c in cands if c[0] == top]
            tagged = [c for c in at if c[1]]
            if len(at) == 1:
                out.append((at[0][2], at[0][3]))
            elif len(tagged) == 1:
                out.append((tagged[0][2], tagged[0][3]))
        # encoding/json orders fields by their index sequence: embedded fields in place of the embedding
        out.sort(key=lambda x: x[0])
        return [jf for _, jf in self._in_go_order(name, [jf for _, jf in out])]

    def _in_go_order(self, name: str, fields: list[JSONField]) -> list[tuple[tuple[int, ...], JSONField]]:
        index: dict[tuple[str, ...], tuple[int, ...]] = {}

        def walk(tname: str, path: tuple[str, ...], idx: tuple[int, ...]) -> None:
            for i, f in enumerate(self.record(tname)["fields"]):
                p = (*path, f["go"])
                index[p] = (*idx, i)
                base = f["type"].lstrip("*")
                if f.get("embedded") and not f.get("json") and self.types.get(base, {}).get("kind") == "struct" \
                        and len(p) < 8:
                    walk(base, p, (*idx, i))

        walk(name, (), ())
        return sorted(((index[jf.path], jf) for jf in fields), key=lambda x: x[0])


def load(path: Path) -> dict[str, Any]:
    """Read a data file; :class:`GoStructsError` when it is missing or not of a known format."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise GoStructsError(f"cannot read Go struct data {path}: {e}") from e
    if not isinstance(data, dict) or data.get("format") not in FORMATS or not isinstance(data.get("types"), dict):
        raise GoStructsError(f"{path} is not a Go struct data file of format {sorted(FORMATS)}")
    return data


@lru_cache(maxsize=1)
def k8s() -> GoStructs:
    """The built-in kinds' Go types (``fakeapi/codec/gostructs_k8s.json``)."""
    data = load(K8S_DATA)
    return GoStructs(data["types"], data.get("sources"))


def combined(*datas: dict[str, Any]) -> GoStructs:
    """The types of several data files together (ARC's refer to k8s.io types in the k8s file)."""
    types: dict[str, dict[str, Any]] = dict(k8s().types)
    sources = list(k8s().sources)
    for d in datas:
        types.update(d["types"])
        sources.extend(d.get("sources") or ())
    return GoStructs(types, sources)


#: OpenAPI definition-name prefixes (``io.k8s.api.core.v1.Pod``) and the Go module each stands for.
_DEFINITION_PREFIXES = (
    ("io.k8s.apiextensions-apiserver.", "k8s.io/apiextensions-apiserver/"),
    ("io.k8s.apimachinery.", "k8s.io/apimachinery/"),
    ("io.k8s.api.", "k8s.io/api/"),
    ("io.k8s.kube-aggregator.", "k8s.io/kube-aggregator/"),
)


def go_name(definition: str) -> str | None:
    """The Go type an OpenAPI definition name stands for (``io.k8s.api.core.v1.Pod`` ->
    ``k8s.io/api/core/v1.Pod``); None for a name outside the four modules."""
    for pre, module in _DEFINITION_PREFIXES:
        if definition.startswith(pre):
            pkg, _, short = definition[len(pre):].rpartition(".")
            return f"{module}{pkg.replace('.', '/')}.{short}"
    return None


def definition_name(go: str) -> str | None:
    """The inverse of :func:`go_name`."""
    path, _, short = go.rpartition(".")
    for pre, module in _DEFINITION_PREFIXES:
        if path.startswith(module):
            return f"{pre}{path[len(module):].replace('/', '.')}.{short}"
    return None
