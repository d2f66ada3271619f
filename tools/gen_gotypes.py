"""Generate fakeapi's Go struct data files from upstream Go source.

fakeapi encodes objects as a Go client or kube-apiserver does after decoding
them into the upstream Go structs: which fields are pointers, which have
``omitempty`` or ``omitzero``, which are value structs, which types marshal
themselves. Those are facts of the Go source, so this script reads the Go
source and writes them into a JSON data file; :mod:`fakeapi.codec.gostructs` reads
that file at run time. Nothing here runs in CI: the committed data files are
what ships, and the tests check that the model agrees with them.

Usage (source locations are git directories or checked-out trees; ``@REV``
picks a revision of a git directory; ``--note`` records how a revision relates
to a release)::

    python tools/gen_gotypes.py k8s \\
        --source k8s.io/api=/path/to/api.git@REV \\
        --source k8s.io/apimachinery=/path/to/apimachinery.git@REV \\
        --source k8s.io/apiextensions-apiserver=/path/to/apiextensions-apiserver.git@REV \\
        --note k8s.io/api="the commit of the v1.NN.0 release" \\
        --out fakeapi/codec/gostructs_k8s.json

    python tools/gen_gotypes.py arc \\
        --source github.com/actions/actions-runner-controller=/path/to/arc.git@REV \\
        --supplement tools/arc_supplement.go --supplement-note "where its fields come from" \\
        --base fakeapi/codec/gostructs_k8s.json --out reconcilers/gostructs_arc.json

    python tools/gen_gotypes.py custom --source example.com=DIR \\
        --package example.com/a/v1 --root example.com/a/v1.Kind --out OUT.json

For a new Kubernetes version, pick the commits whose structs match the schemas
fakeapi serves (``openapi.KUBERNETES_SCHEMAS``): tests/test_gostructs.py
compares every struct's field set with them. New served kinds go into
:data:`K8S_ROOTS` (and their packages into :data:`K8S_PACKAGES`).

The parser understands the subset of Go that API type packages are written
in: package and import clauses, type declarations (structs with embedded
fields and tags, named types, aliases), and method declarations (only their
receivers and names are kept: ``MarshalJSON``, ``UnmarshalJSON``, ``IsZero``,
``MarshalText``, ``UnmarshalText``); every other declaration is skipped.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT = 1

#: Methods that change how encoding/json treats a type.
JSON_METHODS = ("MarshalJSON", "UnmarshalJSON", "MarshalText", "UnmarshalText", "IsZero")

#: Go's predeclared types (the ones API structs use).
BUILTIN_TYPES = frozenset({
    "bool", "string", "byte", "rune", "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16",
    "uint32", "uint64", "uintptr", "float32", "float64", "complex64", "complex128", "error", "any",
})

#: The packages each kind of data file is generated from (module-relative directories).
K8S_PACKAGES = {
    "k8s.io/api": ["core/v1", "apps/v1", "batch/v1", "coordination/v1", "networking/v1", "policy/v1",
                   "rbac/v1", "autoscaling/v1", "scheduling/v1alpha3", "certificates/v1", "storage/v1"],
    "k8s.io/apimachinery": ["pkg/apis/meta/v1", "pkg/api/resource", "pkg/util/intstr", "pkg/runtime",
                            "pkg/types"],
    "k8s.io/apiextensions-apiserver": ["pkg/apis/apiextensions/v1"],
    "k8s.io/kube-aggregator": ["pkg/apis/apiregistration/v1"],
}

#: The Go types of the built-in kinds fakeapi serves (their closure is what the data file holds).
K8S_ROOTS = [
    "k8s.io/api/core/v1." + k
    for k in ("Namespace", "Pod", "Secret", "ConfigMap", "PersistentVolumeClaim", "Service", "ServiceAccount",
              "Event", "PodTemplateSpec", "ReplicationController", "Node")
] + [
    "k8s.io/api/certificates/v1.CertificateSigningRequest", "k8s.io/api/storage/v1.CSIStorageCapacity",
    "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1.APIService",
] + [
    "k8s.io/api/rbac/v1.Role", "k8s.io/api/rbac/v1.RoleBinding", "k8s.io/api/rbac/v1.ClusterRole",
    "k8s.io/api/rbac/v1.ClusterRoleBinding", "k8s.io/api/coordination/v1.Lease",
    "k8s.io/api/apps/v1.Deployment", "k8s.io/api/apps/v1.ReplicaSet", "k8s.io/api/apps/v1.StatefulSet",
    "k8s.io/api/apps/v1.DaemonSet", "k8s.io/api/batch/v1.Job", "k8s.io/api/batch/v1.CronJob",
    "k8s.io/api/networking/v1.Ingress", "k8s.io/api/networking/v1.NetworkPolicy",
    "k8s.io/api/policy/v1.PodDisruptionBudget", "k8s.io/api/autoscaling/v1.Scale",
    "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.CustomResourceDefinition",
    "k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta", "k8s.io/apimachinery/pkg/apis/meta/v1.ListMeta",
    "k8s.io/apimachinery/pkg/apis/meta/v1.Status",
    # self-marshalling types no served kind's field has (yet): recorded for the drift tests
    "k8s.io/apimachinery/pkg/runtime.RawExtension", "k8s.io/apimachinery/pkg/apis/meta/v1.Duration",
]

ARC_MODULE = "github.com/actions/actions-runner-controller"
ARC_PACKAGES = {ARC_MODULE: ["apis/actions.github.com/v1alpha1", "vault"]}
ARC_ROOTS = [
    f"{ARC_MODULE}/apis/actions.github.com/v1alpha1.{k}"
    for k in ("AutoscalingRunnerSet", "EphemeralRunnerSet", "EphemeralRunner", "AutoscalingListener")
]


class GoSyntaxError(ValueError):
    """Go source this parser does not understand (with file and line)."""


# --- tokens -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Tok:
    """One token: ``kind`` is ident, number, string, rawstring, char, op or nl (a line end)."""

    kind: str
    text: str
    line: int


_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r]+)
  | (?P<nl>\n)
  | (?P<lcomment>//[^\n]*)
  | (?P<bcomment>/\*.*?\*/)
  | (?P<rawstring>`[^`]*`)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<char>'(?:[^'\\\n]|\\.)+')
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>\.?[0-9][0-9A-Za-z_.]*(?:[eEpP][+-][0-9_]+)?)
  | (?P<op>\.\.\.|<-|[:=!<>&|^+\-*/%]=|&&|\|\||<<|>>|&\^|\+\+|--|[{}()\[\];,.:=*&|^!<>+\-/%~])
    """,
    re.VERBOSE | re.DOTALL,
)


def tokenize(text: str, filename: str = "<go>") -> list[Tok]:
    """Go source as tokens; comments dropped (a comment spanning lines leaves a line end)."""
    out: list[Tok] = []
    pos, line, n = 0, 1, len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            raise GoSyntaxError(f"{filename}:{line}: unexpected character {text[pos]!r}")
        kind = m.lastgroup or ""
        s = m.group()
        if kind == "nl":
            out.append(Tok("nl", "\n", line))
        elif kind == "bcomment" or kind == "rawstring":
            if kind == "rawstring":
                out.append(Tok("rawstring", s, line))
            elif "\n" in s:
                out.append(Tok("nl", "\n", line))
        elif kind not in ("ws", "lcomment"):
            out.append(Tok(kind, s, line))
        line += s.count("\n")
        pos = m.end()
    return out


# --- declarations ---------------------------------------------------------------------------------

@dataclass
class GoFieldDecl:
    """One struct field as written: Go name, type expression, embedded or not, its raw tag."""

    name: str
    type: str
    embedded: bool
    tag: str | None


@dataclass
class GoTypeDecl:
    """A type declaration: a struct (``fields``), a named type (``underlying``) or an alias."""

    name: str
    kind: str  # "struct" | "named" | "alias"
    fields: list[GoFieldDecl] = field(default_factory=list)
    underlying: str = ""


@dataclass
class GoPackage:
    """The declarations of one Go package (its import path and name)."""

    path: str
    name: str = ""
    types: dict[str, GoTypeDecl] = field(default_factory=dict)
    #: type name -> method name -> "value" | "pointer" (its receiver), for :data:`JSON_METHODS`
    methods: dict[str, dict[str, str]] = field(default_factory=dict)


class _FileParser:
    def __init__(self, toks: list[Tok], pkg: GoPackage, filename: str, package_names: dict[str, str]) -> None:
        self.t = toks
        self.i = 0
        self.pkg = pkg
        self.file = filename
        self.imports: dict[str, str] = {}
        self.package_names = package_names

    # helpers
    def peek(self, k: int = 0) -> Tok | None:
        j = self.i + k
        return self.t[j] if j < len(self.t) else None

    def peek_text(self, k: int = 0) -> str:
        """The text of the token ``k`` ahead ("" at the end)."""
        tok = self.peek(k)
        return tok.text if tok is not None else ""

    def err(self, msg: str) -> GoSyntaxError:
        tok = self.peek()
        return GoSyntaxError(f"{self.file}:{tok.line if tok else 'EOF'}: {msg}")

    def next(self) -> Tok:
        tok = self.peek()
        if tok is None:
            raise self.err("unexpected end of file")
        self.i += 1
        return tok

    def expect(self, text: str) -> Tok:
        tok = self.next()
        if tok.text != text:
            self.i -= 1
            raise self.err(f"expected {text!r}, found {tok.text!r}")
        return tok

    def skip_nl(self) -> None:
        while (tok := self.peek()) is not None and (tok.kind == "nl" or tok.text == ";"):
            self.i += 1

    def skip_balanced(self) -> None:
        """Skip from an opening bracket to its closing one."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        stack = [pairs[self.next().text]]
        while stack:
            tok = self.next()
            if tok.kind != "op":
                continue
            if tok.text in pairs:
                stack.append(pairs[tok.text])
            elif tok.text in (")", "]", "}") and tok.text != stack.pop():
                raise self.err("unbalanced brackets")

    def skip_statement(self) -> None:
        """Skip to the end of a top-level line (brackets skipped whole)."""
        while (tok := self.peek()) is not None:
            if tok.kind == "nl" or tok.text == ";":
                return
            if tok.text in ("(", "[", "{"):
                self.skip_balanced()
            else:
                self.i += 1

    # top level
    def parse(self) -> None:
        while (tok := self.peek()) is not None:
            if tok.kind != "ident":
                self.i += 1
                continue
            if tok.text == "package":
                self.i += 1
                name = self.next().text
                if self.pkg.name and self.pkg.name != name:
                    raise self.err(f"package {name} in a directory of package {self.pkg.name}")
                self.pkg.name = name
            elif tok.text == "import":
                self.i += 1
                self.spec_or_group(self.import_spec)
            elif tok.text == "type":
                self.i += 1
                self.spec_or_group(self.type_spec)
            elif tok.text == "func":
                self.i += 1
                self.func_decl()
            elif tok.text in ("var", "const"):
                self.i += 1
                if self.peek_text() == "(":
                    self.skip_balanced()
                else:
                    self.skip_statement()
            else:
                self.skip_statement()

    def spec_or_group(self, spec: Callable[[], None]) -> None:
        """One spec (``import "x"``, ``type T ...``) or a parenthesised group of them."""
        if self.peek_text() != "(":
            spec()
            return
        self.i += 1
        while True:
            self.skip_nl()
            if self.peek_text() == ")":
                self.i += 1
                return
            spec()

    def import_spec(self) -> None:
        tok = self.next()
        alias = None
        if tok.kind in ("ident",) or tok.text == ".":
            alias = tok.text
            tok = self.next()
        if tok.kind not in ("string", "rawstring"):
            raise self.err("expected an import path")
        path = tok.text[1:-1]
        name = alias or self.package_names.get(path) or _default_package_name(path)
        if name not in ("_", "."):
            self.imports[name] = path

    def type_spec(self) -> None:
        name = self.next()
        if name.kind != "ident":
            raise self.err("expected a type name")
        start = self.i
        try:
            self._type_spec(name)
        except GoSyntaxError as e:
            # a type API structs cannot hold (func, chan, generic...): kept as unparsed, an error
            # only if a served kind reaches it
            self.i = start
            self.skip_statement()
            self.pkg.types[name.text] = GoTypeDecl(name.text, "unparsed", underlying=str(e))

    def _type_spec(self, name: Tok) -> None:
        nxt = self.peek()
        if nxt is not None and nxt.text == "[" and self._looks_generic():
            raise self.err(f"generic type {name.text} is not supported")
        if nxt is not None and nxt.text == "=":
            self.i += 1
            self.pkg.types[name.text] = GoTypeDecl(name.text, "alias", underlying=self.type_expr())
            return
        if nxt is not None and nxt.text == "struct":
            self.i += 1
            self.pkg.types[name.text] = GoTypeDecl(name.text, "struct", fields=self.struct_body(name.text))
            return
        self.pkg.types[name.text] = GoTypeDecl(name.text, "named", underlying=self.type_expr())

    def _looks_generic(self) -> bool:
        # "type X[T any] ..." versus an array "type X [4]byte"
        a, b = self.peek(1), self.peek(2)
        return a is not None and b is not None and a.kind == "ident" and b.text not in ("]",)

    def func_decl(self) -> None:
        recv: tuple[str, str] | None = None
        if self.peek_text() == "(":
            start = self.i
            self.skip_balanced()
            inner = [t for t in self.t[start + 1:self.i - 1] if t.kind != "nl"]
            pointer = any(t.text == "*" for t in inner)
            idents = [t.text for t in inner if t.kind == "ident"]
            if not idents:
                raise self.err("method without a receiver type")
            recv = (idents[-1], "pointer" if pointer else "value")
        name = self.next()
        if recv is not None and name.text in JSON_METHODS:
            self.pkg.methods.setdefault(recv[0], {})[name.text] = recv[1]
        # the signature, then the body (a type literal's braces in the signature are skipped whole)
        while (tok := self.peek()) is not None:
            if tok.text in ("struct", "interface") and self.peek_text(1) == "{":
                self.i += 1
                self.skip_balanced()
            elif tok.text in ("(", "["):
                self.skip_balanced()
            elif tok.text == "{":
                self.skip_balanced()
                return
            elif tok.kind == "nl":
                return  # a declaration without a body
            else:
                self.i += 1

    # types
    def qualify(self, name: str, pkg_alias: str | None) -> str:
        if pkg_alias is None:
            if name in BUILTIN_TYPES:
                return "uint8" if name == "byte" else ("int32" if name == "rune" else name)
            return f"{self.pkg.path}.{name}"
        path = self.imports.get(pkg_alias)
        if path is None:
            raise self.err(f"unknown package {pkg_alias!r}")
        return f"{path}.{name}"

    def type_expr(self) -> str:
        tok = self.next()
        if tok.text == "*":
            return "*" + self.type_expr()
        if tok.text == "[":
            if self.peek_text() == "]":
                self.i += 1
                return "[]" + self.type_expr()
            size = self.next().text
            self.expect("]")
            return f"[{size}]" + self.type_expr()
        if tok.text == "map":
            self.expect("[")
            key = self.type_expr()
            self.expect("]")
            return f"map[{key}]{self.type_expr()}"
        if tok.text == "interface":
            if self.peek_text() != "{":
                raise self.err("expected '{' after interface")
            start = self.i
            self.skip_balanced()
            if any(t.kind != "nl" for t in self.t[start + 1:self.i - 1]):
                return "interface{...}"
            return "interface{}"
        if tok.text == "struct":
            fields = self.struct_body("")
            if fields:
                raise self.err("anonymous struct types with fields are not supported")
            return "struct{}"
        if tok.text in ("func", "chan"):
            raise self.err(f"{tok.text} types are not supported in API structs")
        if tok.kind != "ident":
            self.i -= 1
            raise self.err(f"expected a type, found {tok.text!r}")
        if self.peek_text() == ".":
            self.i += 1
            name = self.next()
            q = self.qualify(name.text, tok.text)
        else:
            q = self.qualify(tok.text, None)
        if self.peek_text() == "[":
            # type arguments of a generic type (unique.Handle[string])
            self.i += 1
            args = [self.type_expr()]
            while self.peek_text() == ",":
                self.i += 1
                args.append(self.type_expr())
            self.expect("]")
            q += "[" + ",".join(args) + "]"
        return q

    def struct_body(self, owner: str) -> list[GoFieldDecl]:
        self.expect("{")
        fields: list[GoFieldDecl] = []
        while True:
            self.skip_nl()
            tok = self.peek()
            if tok is None:
                raise self.err(f"unterminated struct {owner}")
            if tok.text == "}":
                self.i += 1
                return fields
            nxt = self.peek(1)
            if tok.text == "*" or (tok.kind == "ident" and nxt is not None and (
                    nxt.text in (".", "}", ";") or nxt.kind in ("nl", "string", "rawstring"))):
                texpr = self.type_expr()
                base = texpr.lstrip("*").rpartition(".")[2]
                fields.append(GoFieldDecl(base, texpr, True, self.tag()))
            else:
                names = [self.next().text]
                while self.peek_text() == ",":
                    self.i += 1
                    names.append(self.next().text)
                texpr = self.type_expr()
                tag = self.tag()
                fields.extend(GoFieldDecl(n, texpr, False, tag) for n in names)
            end = self.peek()
            if end is not None and end.kind != "nl" and end.text not in (";", "}"):
                raise self.err(f"unexpected {end.text!r} in struct {owner}")

    def tag(self) -> str | None:
        tok = self.peek()
        if tok is not None and tok.kind in ("string", "rawstring"):
            self.i += 1
            return tok.text[1:-1] if tok.kind == "rawstring" else json.loads(tok.text)
        return None


def _default_package_name(path: str) -> str:
    last = path.rstrip("/").rpartition("/")[2]
    return re.sub(r"[^A-Za-z0-9_]", "", last.removeprefix("go-"))


def parse_package(path: str, files: Iterable[tuple[str, str]],
                  package_names: dict[str, str] | None = None) -> GoPackage:
    """Parse the ``(file name, source)`` pairs of one package with import path ``path``."""
    pkg = GoPackage(path)
    for name, text in files:
        _FileParser(tokenize(text, name), pkg, name, package_names or {}).parse()
    return pkg


# --- the JSON view of a struct (encoding/json's rules) ------------------------------------------

_TAG_PAIR = re.compile(r'([^\s:"]+):"((?:[^"\\]|\\.)*)"')


def json_tag(tag: str | None) -> tuple[str | None, list[str]]:
    """The ``json`` key of a struct tag: (name or None when absent, options)."""
    if not tag:
        return None, []
    for key, value in _TAG_PAIR.findall(tag):
        if key == "json":
            name, *opts = value.split(",")
            return name, opts
    return None, []


def field_record(f: GoFieldDecl) -> dict[str, Any]:
    """A field as the data file writes it: Go name, type, embedded, its JSON name and options."""
    name, opts = json_tag(f.tag)
    rec: dict[str, Any] = {"go": f.name, "type": f.type}
    if f.embedded:
        rec["embedded"] = True
    if name == "-" and not opts:
        rec["skip"] = True  # json:"-": never encoded (json:"-," names a field "-")
    else:
        rec["json"] = name or ""
        for opt in ("omitempty", "omitzero", "inline", "string"):
            if opt in opts:
                rec[opt] = True
    if f.tag is not None:
        rec["tag"] = f.tag
    return rec


def type_names(expr: str) -> Iterator[str]:
    """The named types a type expression mentions (``map[K]V`` gives K and V)."""
    while True:
        if expr.startswith("*"):
            expr = expr[1:]
        elif expr.startswith("["):
            expr = expr[expr.index("]") + 1:]
        elif expr.startswith("map["):
            depth, j = 0, 3
            for j in range(3, len(expr)):
                if expr[j] == "[":
                    depth += 1
                elif expr[j] == "]":
                    depth -= 1
                    if depth == 0:
                        break
            yield from type_names(expr[4:j])
            expr = expr[j + 1:]
        else:
            break
    if expr and not expr.startswith(("interface{", "struct{")) and expr not in BUILTIN_TYPES:
        if "[" in expr:  # a generic type: its name and its type arguments
            base, _, args = expr.partition("[")
            yield base
            for arg in args[:-1].split(","):
                yield from type_names(arg)
        else:
            yield expr


def is_std(qualified: str) -> bool:
    """Is this a standard-library type (its package path has no dot in its first element)?"""
    path = qualified.rpartition(".")[0]
    return "." not in path.partition("/")[0]


def build_types(packages: dict[str, GoPackage], roots: Iterable[str],
                known: dict[str, Any] | None = None) -> dict[str, Any]:
    """The data file's ``types``: every type reachable from ``roots``, as records.

    ``known``: records already in another data file (references to them are not
    followed and not repeated). Standard-library types are listed, not followed.
    """
    known = known or {}
    out: dict[str, Any] = {}
    todo = list(roots)
    while todo:
        q = todo.pop()
        if q in out or q in known:
            continue
        if is_std(q):
            out[q] = {"kind": "std"}
            continue
        path, _, name = q.rpartition(".")
        pkg = packages.get(path)
        if pkg is None:
            raise KeyError(f"package {path} was not read (its type {name} is referenced)")
        decl = pkg.types.get(name)
        if decl is None:
            raise KeyError(f"no type {name} in package {path}")
        if decl.kind == "unparsed":
            raise GoSyntaxError(f"{q} is referenced but could not be parsed: {decl.underlying}")
        rec: dict[str, Any] = {"kind": decl.kind}
        if decl.kind == "struct":
            rec["fields"] = [field_record(f) for f in decl.fields]
            for f, frec in zip(decl.fields, rec["fields"]):
                # encoding/json ignores unexported (not embedded) and json:"-" fields
                if (f.embedded or f.name[:1].isupper()) and not frec.get("skip"):
                    todo.extend(type_names(f.type))
        else:
            rec["underlying"] = decl.underlying
            todo.extend(type_names(decl.underlying))
        methods = pkg.methods.get(name)
        if methods:
            rec["methods"] = dict(sorted(methods.items()))
        out[q] = rec
    return dict(sorted(out.items()))


def rebuild_types(data: dict[str, Any], known: dict[str, Any] | None = None) -> dict[str, Any]:
    """:func:`build_types` over the records of a data file itself (its ``roots``): the drift check.

    A data file is consistent when this gives back its ``types`` unchanged: every
    referenced type present, nothing unreachable, the records in canonical form.
    """
    packages: dict[str, GoPackage] = {}
    for q, rec in data["types"].items():
        if rec["kind"] == "std":
            continue
        path, _, name = q.rpartition(".")
        pkg = packages.setdefault(path, GoPackage(path))
        if rec["kind"] == "struct":
            decl = GoTypeDecl(name, "struct", fields=[
                GoFieldDecl(f["go"], f["type"], bool(f.get("embedded")), f.get("tag")) for f in rec["fields"]])
        else:
            decl = GoTypeDecl(name, rec["kind"], underlying=rec["underlying"])
        pkg.types[name] = decl
        if rec.get("methods"):
            pkg.methods[name] = dict(rec["methods"])
    return build_types(packages, data["roots"], known)


# --- reading sources ----------------------------------------------------------------------------

@dataclass
class Source:
    """A module's source: a git directory at a revision, or a plain directory."""

    module: str
    location: Path
    rev: str | None

    def _git(self, *args: str) -> str:
        return subprocess.run(["git", f"--git-dir={self.location}", *args], check=True, capture_output=True,
                              text=True).stdout

    def is_git(self) -> bool:
        """Is the location a git directory (bare or ``.git``)?"""
        return (self.location / "HEAD").is_file() and (self.location / "objects").is_dir()

    def commit(self) -> str | None:
        """The commit hash read (None for a plain directory)."""
        return self._git("rev-parse", f"{self.rev or 'HEAD'}^{{commit}}").strip() if self.is_git() else None

    def date(self) -> str | None:
        """The committer date of the revision read (None for a plain directory)."""
        if not self.is_git():
            return None
        return self._git("log", "-1", "--format=%cI", f"{self.rev or 'HEAD'}^{{commit}}").strip() or None

    def go_files(self, pkg_dir: str) -> list[tuple[str, str]]:
        """The non-test, non-generated ``.go`` files of a package directory: (name, text)."""
        if self.is_git():
            rev = self.rev or "HEAD"
            names = self._git("ls-tree", "--name-only", f"{rev}:{pkg_dir}").split()
            files = [(n, self._git("show", f"{rev}:{pkg_dir}/{n}")) for n in names if _wanted(n)]
        else:
            d = self.location / pkg_dir
            files = [(p.name, p.read_text()) for p in sorted(d.iterdir()) if _wanted(p.name)]
        if not files:
            raise FileNotFoundError(f"no Go files in {self.module}/{pkg_dir}")
        return [(f"{self.module}/{pkg_dir}/{n}", t) for n, t in files]


def _wanted(name: str) -> bool:
    return (name.endswith(".go") and not name.endswith("_test.go") and not name.endswith(".pb.go")
            and not name.startswith("zz_generated"))


def _parse_source_arg(text: str) -> Source:
    module, eq, loc = text.partition("=")
    if not eq:
        raise argparse.ArgumentTypeError(f"--source wants MODULE=PATH[@REV], not {text!r}")
    path, _, rev = loc.rpartition("@") if "@" in loc else (loc, "", "")
    return Source(module, Path(path), rev or None)


def read_packages(sources: list[Source], layout: dict[str, list[str]]) -> dict[str, GoPackage]:
    """Parse every package of ``layout`` (module -> package directories) from its source."""
    by_module = {s.module: s for s in sources}
    out: dict[str, GoPackage] = {}
    names = {f"{m}/{d}": "" for m, ds in layout.items() for d in ds}
    files: dict[str, list[tuple[str, str]]] = {}
    for module, dirs in layout.items():
        src = by_module.get(module)
        if src is None:
            raise SystemExit(f"no --source given for {module}")
        for d in dirs:
            files[f"{module}/{d}"] = src.go_files(d)
    # package clauses first: an import without an alias is named by its package clause
    for path, fs in files.items():
        for _, text in fs:
            m = re.search(r"^package\s+(\w+)", text, re.M)
            if m:
                names[path] = m.group(1)
                break
    for path, fs in files.items():
        out[path] = parse_package(path, fs, names)
    return out


def apply_supplement(packages: dict[str, GoPackage], path: str, text: str) -> list[str]:
    """Append the fields of the structs declared in a supplement file to the same-named structs
    of package ``path``; returns ``Type.Field`` for each field added."""
    sup = parse_package(path, [("supplement", text)])
    added = []
    pkg = packages[path]
    for name, decl in sup.types.items():
        target = pkg.types.get(name)
        if target is None or target.kind != "struct" or decl.kind != "struct":
            raise SystemExit(f"supplement: no struct {name} in {path}")
        have = {f.name for f in target.fields}
        for f in decl.fields:
            if f.name in have:
                raise SystemExit(f"supplement: {name}.{f.name} is already upstream; drop it from the supplement")
            target.fields.append(f)
            added.append(f"{name}.{f.name}")
    return added


def write_data(path: Path, data: dict[str, Any]) -> None:
    """Write a data file: one type per line group, one field per line (reviewable diffs)."""
    lines = ["{"]
    for key in ("format", "generator", "sources", "supplements", "roots"):
        if key in data:
            lines.append(f" {json.dumps(key)}: {json.dumps(data[key], sort_keys=True)},")
    lines.append(' "types": {')
    items = list(data["types"].items())
    for n, (q, rec) in enumerate(items):
        head = {k: v for k, v in rec.items() if k != "fields"}
        sep = "," if n < len(items) - 1 else ""
        if "fields" not in rec:
            lines.append(f"  {json.dumps(q)}: {json.dumps(head, sort_keys=True)}{sep}")
            continue
        body = json.dumps(head, sort_keys=True)[1:-1]
        lines.append(f"  {json.dumps(q)}: {{{body + ', ' if body else ''}\"fields\": [")
        for m, f in enumerate(rec["fields"]):
            lines.append(f"   {json.dumps(f, sort_keys=True)}{',' if m < len(rec['fields']) - 1 else ''}")
        lines.append(f"  ]}}{sep}")
    lines.append(" }")
    lines.append("}")
    path.write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Command line: generate the ``k8s`` or ``arc`` data file."""
    ap = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    ap.add_argument("which", choices=("k8s", "arc", "custom"),
                    help="k8s: fakeapi's built-in kinds; arc: ARC's kinds; custom: --package and --root")
    ap.add_argument("--package", action="append", default=[],
                    help="custom: an import path to read (under one of the --source modules)")
    ap.add_argument("--root", action="append", default=[], help="custom: a type whose closure is written")
    ap.add_argument("--source", action="append", type=_parse_source_arg, default=[],
                    help="MODULE=PATH[@REV]: a module's git directory (or checked-out tree) and revision")
    ap.add_argument("--note", action="append", default=[],
                    help="MODULE=TEXT: how the revision relates to a release (recorded in the data file)")
    ap.add_argument("--supplement", type=Path, help="a Go file of struct fields newer than the source (arc)")
    ap.add_argument("--supplement-note", default="", help="where the supplement's fields come from")
    ap.add_argument("--base", type=Path, help="the k8s data file (arc: its types are not repeated)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    if args.which == "custom":
        layout: dict[str, list[str]] = {}
        for pkg in args.package:
            module = next((s.module for s in args.source if pkg == s.module or pkg.startswith(s.module + "/")), None)
            if module is None:
                ap.error(f"--package {pkg} is under no --source module")
            layout.setdefault(module, []).append(pkg[len(module) + 1:])
        roots = list(args.root)
    else:
        layout, roots = (K8S_PACKAGES, K8S_ROOTS) if args.which == "k8s" else (ARC_PACKAGES, ARC_ROOTS)
    tags = dict(t.split("=", 1) for t in args.note)
    try:
        packages = read_packages(args.source, layout)
        known: dict[str, Any] = {}
        if args.which == "arc":
            if args.base is None:
                raise SystemExit("arc needs --base (the k8s data file)")
            known = json.loads(args.base.read_text())["types"]
            base_layout = {m: ds for m, ds in K8S_PACKAGES.items() if m in {s.module for s in args.source}}
            packages.update(read_packages(args.source, base_layout) if base_layout else {})
        supplements = []
        if args.supplement is not None:
            path = f"{ARC_MODULE}/{ARC_PACKAGES[ARC_MODULE][0]}" if args.which == "arc" else ""
            added = apply_supplement(packages, path, args.supplement.read_text())
            supplements.append({"file": args.supplement.as_posix(), "fields": added, "note": args.supplement_note})
        types = build_types(packages, roots, known)
    except (GoSyntaxError, KeyError, FileNotFoundError, subprocess.CalledProcessError) as e:
        print(f"gen_gotypes: {e}", file=sys.stderr)
        return 1
    data: dict[str, Any] = {
        "format": FORMAT,
        "generator": "tools/gen_gotypes.py " + args.which,
        "sources": [{"module": s.module, "commit": s.commit(), "rev": s.rev or ("HEAD" if s.is_git() else None),
                     "date": s.date(), "note": tags.get(s.module)}
                    for s in args.source],
        "roots": roots,
        "types": types,
    }
    if supplements:
        data["supplements"] = supplements
    write_data(args.out, data)
    print(f"wrote {args.out}: {len(types)} types")
    return 0


if __name__ == "__main__":
    sys.exit(main())
