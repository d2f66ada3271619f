"""The Go type model generated from the upstream Go structs (issue 20).

- the generator's parser, on a small Go package checked in under tests/data/gostructs
  (no network): it reproduces the committed expected data file, and its facts are the
  ones Go's encoding/json uses;
- the committed data files are consistent: rebuilding their types from their own records
  and roots gives them back unchanged, and their roots are the kinds fakeapi serves;
- drift: the model of every served kind, built-in and ARC, is walked field by field
  against the data file (JSON names, pointers, omitempty, omitzero, element and struct
  types) and against the kubernetes-validate schemas' field sets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakeapi.codec import gostructs
from fakeapi.codec.gomodel import (
    BOOL,
    BYTES,
    CUSTOM_JSON,
    FLOAT,
    INT,
    RAW_FIELD_OVERRIDES,
    STRING,
    GoDecodeError,
    GoType,
    builtin_go_type,
    go_roundtrip,
)
from fakeapi.codec.semantic import semantic_equal
from fakeapi.machinery import openapi
from fakeapi.registry.builtin import BUILTINS
from reconcilers import constants as c
from reconcilers.crds import object_schema
from reconcilers.gotypes import ARC_DATA, ARC_PACKAGE, arc_go_type, arc_go_types, arc_structs
from tools import gen_gotypes

DATA = Path(__file__).parent / "data" / "gostructs"
FIXTURE = "example.com/fixture/v1"
FIXTURE_ROOTS = [f"{FIXTURE}.Widget", f"{FIXTURE}.WidgetList", f"{FIXTURE}.Alias"]


# --- the parser, on the checked-in fixture --------------------------------------------------------

def _fixture_args(out: Path) -> list[str]:
    args = ["custom", "--source", f"example.com={DATA}", "--out", str(out)]
    for p in (FIXTURE, "example.com/meta/v1", "example.com/util/intstr"):
        args += ["--package", p]
    for r in FIXTURE_ROOTS:
        args += ["--root", r]
    return args


def test_the_generator_reproduces_the_expected_file_from_the_fixture(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    assert gen_gotypes.main(_fixture_args(out)) == 0
    assert out.read_text() == (DATA / "expected.json").read_text()


def _fixture_types() -> dict[str, Any]:
    return json.loads((DATA / "expected.json").read_text())["types"]


def _fields(types: dict[str, Any], name: str) -> dict[str, dict[str, Any]]:
    return {f["go"]: f for f in types[name]["fields"]}


def test_the_parser_reads_fields_tags_and_types_as_written() -> None:
    t = _fixture_types()
    spec = _fields(t, f"{FIXTURE}.WidgetSpec")
    assert spec["Replicas"] == {"go": "Replicas", "json": "replicas", "omitempty": True,
                                "tag": 'json:"replicas,omitempty"', "type": "*int32"}
    assert spec["Count"]["type"] == "int64" and "omitempty" not in spec["Count"]
    assert spec["Ports"]["type"] == f"[]*{FIXTURE}.Port"
    assert spec["ByName"]["type"] == "map[string][]uint8"  # byte is uint8
    assert spec["When"]["type"] == "*example.com/meta/v1.Time"  # an aliased import resolved to its path
    assert spec["Port"]["type"] == "example.com/util/intstr.IntOrString"  # an import named by its package clause
    assert spec["Created"]["omitempty"] and spec["Created"]["omitzero"]
    assert spec["Ignored"].get("skip") and "json" not in spec["Ignored"]  # json:"-"
    assert spec["Dash"]["json"] == "-" and not spec["Dash"].get("skip")  # json:"-," names a field "-"
    assert spec["A"]["type"] == spec["B"]["type"] == "string" and spec["A"]["omitempty"]  # A, B string
    assert spec["NoTag"]["json"] == "" and "tag" not in spec["NoTag"]
    assert spec["Inline"]["embedded"] and spec["Inline"]["inline"]
    assert spec["Pointed"]["embedded"] and spec["Pointed"]["json"] == "pointed"
    assert spec["Matrix"]["type"] == "[2][]float64"
    assert spec["handle"]["type"] == f"{FIXTURE}.Handle[string]"  # a generic instantiation
    # "// +optional" is a comment, not a JSON fact
    assert "omitempty" not in _fields(t, f"{FIXTURE}.WidgetList")["Items"]
    assert t[f"{FIXTURE}.Phase"] == {"kind": "named", "underlying": "string",
                                     "methods": {"MarshalJSON": "value", "UnmarshalJSON": "pointer"}}
    assert t[f"{FIXTURE}.Alias"] == {"kind": "alias", "underlying": f"{FIXTURE}.Labels"}
    assert t[f"{FIXTURE}.WidgetStatus"]["methods"] == {"IsZero": "pointer"}
    assert t["example.com/meta/v1.Time"]["methods"] == {"IsZero": "pointer", "MarshalJSON": "value",
                                                        "UnmarshalJSON": "pointer"}
    # reached only through an unexported field: not followed; std types listed, not read
    assert f"{FIXTURE}.Handle" not in t and f"{FIXTURE}.Hidden" not in t  # (nor through a json:"-" one)
    assert t["time.Duration"] == {"kind": "std"}


def test_json_fields_follow_encoding_json() -> None:
    s = gostructs.GoStructs(_fixture_types())
    names = [f.name for f in s.json_fields(f"{FIXTURE}.WidgetSpec")]
    # unexported and json:"-" fields dropped; Inline flattened in place; its "count" shadowed by
    # the shallower WidgetSpec.Count; the tagged embedded pointer is a named field
    assert names == ["replicas", "count", "phase", "port", "ports", "byName", "labels", "when", "created",
                     "-", "NoTag", "A", "B", "extra", "pointed", "matrix"]
    count = next(f for f in s.json_fields(f"{FIXTURE}.WidgetSpec") if f.name == "count")
    assert count.type == "int64" and count.path == ("Count",)
    extra = next(f for f in s.json_fields(f"{FIXTURE}.WidgetSpec") if f.name == "extra")
    assert extra.path == ("Inline", "Extra")
    widget = [f.name for f in s.json_fields(f"{FIXTURE}.Widget")]
    assert widget == ["kind", "apiVersion", "metadata", "spec", "status"]


def test_two_fields_of_one_name_at_one_depth_cancel_out() -> None:
    types = {
        "x.Outer": {"kind": "struct", "fields": [
            {"go": "A", "type": "x.A", "embedded": True, "json": ""},
            {"go": "B", "type": "x.B", "embedded": True, "json": ""}]},
        "x.A": {"kind": "struct", "fields": [{"go": "Name", "type": "string", "json": ""},
                                             {"go": "Tagged", "type": "string", "json": "t"}]},
        "x.B": {"kind": "struct", "fields": [{"go": "Name", "type": "string", "json": ""},
                                             {"go": "Other", "type": "int", "json": ""}]},
    }
    # Name twice at depth 1, neither tagged: dropped, as encoding/json drops it
    assert [f.name for f in gostructs.GoStructs(types).json_fields("x.Outer")] == ["t", "Other"]


def test_a_referenced_type_the_parser_could_not_read_is_an_error() -> None:
    src = "package p\n\ntype F func(int) error\n\ntype S struct {\n\tCall F `json:\"call\"`\n}\n"
    pkg = gen_gotypes.parse_package("example.com/p", [("p.go", src)])
    assert pkg.types["F"].kind == "unparsed"
    with pytest.raises(gen_gotypes.GoSyntaxError, match=r"example\.com/p\.F is referenced but could not be parsed"):
        gen_gotypes.build_types({"example.com/p": pkg}, ["example.com/p.S"])


def test_a_missing_package_is_named(tmp_path: Path) -> None:
    pkg = gen_gotypes.parse_package("example.com/p", [("p.go", 'package p\n\nimport "example.com/q"\n\n'
                                                                 "type S struct {\n\tX q.T `json:\"x\"`\n}\n")])
    with pytest.raises(KeyError, match=r"package example\.com/q was not read"):
        gen_gotypes.build_types({"example.com/p": pkg}, ["example.com/p.S"])


def test_the_generator_reports_bad_go_without_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "p.go").write_text("package p\n\ntype S struct {\n\tX int `json:\"x\"` extra\n}\n")
    out = tmp_path / "out.json"
    rc = gen_gotypes.main(["custom", "--source", f"example.com={tmp_path}", "--package", "example.com/p",
                           "--root", "example.com/p.S", "--out", str(out)])
    assert rc == 1 and not out.exists()
    assert "example.com/p.S is referenced but could not be parsed" in capsys.readouterr().err


def test_a_supplement_adds_fields_and_refuses_ones_upstream_has() -> None:
    pkg = gen_gotypes.parse_package("example.com/p", [("p.go", "package p\n\ntype S struct {\n\tA int `json:\"a\"`\n}\n")])
    packages = {"example.com/p": pkg}
    added = gen_gotypes.apply_supplement(packages, "example.com/p",
                                         "package p\n\ntype S struct {\n\tB int64 `json:\"b,omitempty\"`\n}\n")
    assert added == ["S.B"] and [f.name for f in pkg.types["S"].fields] == ["A", "B"]
    with pytest.raises(SystemExit, match="already upstream"):
        gen_gotypes.apply_supplement(packages, "example.com/p", "package p\n\ntype S struct {\n\tA int\n}\n")


# --- the committed data files are consistent ------------------------------------------------------

def _k8s_data() -> dict[str, Any]:
    return gostructs.load(gostructs.K8S_DATA)


def test_the_k8s_data_rebuilds_from_its_own_records() -> None:
    data = _k8s_data()
    assert gen_gotypes.rebuild_types(data) == data["types"]
    assert data["roots"] == gen_gotypes.K8S_ROOTS


def test_the_arc_data_rebuilds_from_its_own_records() -> None:
    data = gostructs.load(ARC_DATA)
    assert gen_gotypes.rebuild_types(data, _k8s_data()["types"]) == data["types"]
    assert data["roots"] == [f"{ARC_PACKAGE}.{k}" for k in c.ARC_KINDS]


def test_the_data_files_record_their_upstream_revisions() -> None:
    k8s = {s["module"]: s for s in _k8s_data()["sources"]}
    assert set(k8s) == {"k8s.io/api", "k8s.io/apimachinery", "k8s.io/apiextensions-apiserver", "k8s.io/kube-aggregator"}
    for s in k8s.values():
        assert len(s["commit"]) == 40 and s["date"]
    arc = gostructs.load(ARC_DATA)
    assert [s["module"] for s in arc["sources"]] == ["github.com/actions/actions-runner-controller"]
    assert arc["supplements"][0]["fields"] == [
        "EphemeralRunnerSetSpec.ActionableRevision", "EphemeralRunnerSetStatus.AppliedActionableRevision",
        "EphemeralRunnerSetStatus.FinishedRunnerCleanupPatchID", "AutoscalingRunnerSetStatus.ObservedGeneration"]


def test_every_served_builtin_kind_is_a_root() -> None:
    roots = set(_k8s_data()["roots"])
    for spec in BUILTINS:
        assert gostructs.go_name(spec.definition) in roots, spec.kind


def test_the_data_records_the_self_marshalling_types() -> None:
    structs = arc_structs()
    custom = {n for n in structs.types if structs.types[n]["kind"] != "std" and structs.custom_json(n)}
    # every modelled one is in the data as marshalling itself; the one without a model is in no
    # served kind (the drift tests below fail on a reachable self-marshalling type without one)
    assert custom - set(CUSTOM_JSON) == {"k8s.io/apimachinery/pkg/apis/meta/v1.Duration"}
    assert set(CUSTOM_JSON) <= custom
    assert structs.methods("k8s.io/apimachinery/pkg/apis/meta/v1.Time") == {
        "IsZero": "pointer", "MarshalJSON": "value", "UnmarshalJSON": "pointer"}
    assert structs.methods("k8s.io/apimachinery/pkg/api/resource.Quantity")["MarshalJSON"] == "value"


# --- drift: the model against the data ------------------------------------------------------------

_INT_NAMES = frozenset(gostructs.INT_TYPES)


class _Walker:
    """Walks a model against the data it was built from; counts the fields it compared."""

    def __init__(self, structs: gostructs.GoStructs) -> None:
        self.structs = structs
        self.seen: set[str] = set()
        self.fields = 0
        self.schema_checked = 0

    def struct(self, t: GoType, name: str) -> None:
        if name in self.seen:
            return
        self.seen.add(name)
        assert t.kind == "struct" and t.name == name.rpartition(".")[2], name
        jfs = self.structs.json_fields(name)
        assert list(t.fields) == [f.name for f in jfs], name
        for jf in jfs:
            f = t.fields[jf.name]
            where = f"{name}.{jf.name}"
            assert f.omitempty == jf.omitempty, where
            assert f.omitzero == jf.omitzero, where
            assert f.pointer == jf.type.startswith("*"), where
            self.fields += 1
            override = RAW_FIELD_OVERRIDES.get((name, jf.name))
            if override is not None:
                assert f.type is override
                continue
            self.type(f.type, jf.type.removeprefix("*"), where)
        definition = gostructs.definition_name(name)
        if definition is not None and definition in openapi.definitions():
            props = openapi.definitions()[definition].get("properties") or {}
            props = {p for p in props if (name, p) not in SCHEMA_ONLY_FIELDS}
            assert set(props) == set(t.fields), name  # the served schema and the Go struct agree
            self.schema_checked += 1

    def type(self, t: GoType, expr: str, where: str) -> None:
        if expr == "[]uint8":
            assert t is BYTES, where
        elif expr.startswith("[") or expr.startswith("map["):
            assert t.kind == ("map" if expr.startswith("map[") else "slice"), where
            elem = expr[expr.index("]") + 1:] if expr.startswith("[") else _map_value(expr)
            assert t.elem_pointer == elem.startswith("*"), where
            assert t.elem is not None
            self.type(t.elem, elem.removeprefix("*"), where + "[]")
        elif expr == "string":
            assert t is STRING, where
        elif expr == "bool":
            assert t is BOOL, where
        elif expr in _INT_NAMES:
            assert t.kind == "int" and (t.name == expr or (expr == "int64" and t is INT)), where
        elif expr in ("float32", "float64"):
            assert t is FLOAT, where
        elif self.structs.custom_json(expr):
            assert t is CUSTOM_JSON[expr], where
            if t.kind == "union":
                assert t.elem is not None
                self.struct(t.elem, "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSONSchemaProps")
        else:
            rec = self.structs.record(expr)
            if rec["kind"] in ("named", "alias"):
                self.type(t, rec["underlying"], where)
            else:
                assert rec["kind"] == "struct", where
                self.struct(t, expr)


#: Fields the served v1.37.0 schemas have and k8s.io/api at the recorded commit has not (added to the
#: release after that commit): a Go client drops them, and so does fakeapi.
SCHEMA_ONLY_FIELDS = {("k8s.io/api/core/v1.NodeSystemInfo", "runningInUserNamespace")}


def _map_value(expr: str) -> str:
    depth = 0
    for j, ch in enumerate(expr):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return expr[j + 1:]
    raise AssertionError(expr)


def test_every_served_builtin_kind_encodes_as_its_go_struct() -> None:
    w = _Walker(gostructs.k8s())
    for spec in BUILTINS:
        name = gostructs.go_name(spec.definition)
        assert name is not None
        w.struct(builtin_go_type(spec.definition), name)
    assert w.fields > 1100 and w.schema_checked > 250  # (the walk covered the kinds' whole closure)


def test_every_arc_kind_encodes_as_its_go_struct() -> None:
    w = _Walker(arc_structs())
    for kind, t in arc_go_types().items():
        w.struct(t, f"{ARC_PACKAGE}.{kind}")
    assert {f"{ARC_PACKAGE}.{k}Spec" for k in c.ARC_KINDS} <= w.seen and w.fields > 600
    assert "k8s.io/api/core/v1.PodSpec" in w.seen  # (the embedded pod templates are k8s.io's structs)


@pytest.mark.parametrize("kind", c.ARC_KINDS)
def test_the_arc_crd_schemas_declare_only_go_fields(kind: str) -> None:
    def walk(node: dict[str, Any], t: GoType, where: str) -> None:
        if t.kind == "struct":
            for p, sub in (node.get("properties") or {}).items():
                assert p in t.fields, f"{where}.{p}"
                walk(sub, t.fields[p].type, f"{where}.{p}")
        elif t.kind in ("slice", "map") and t.elem is not None:
            sub = node.get("items") if t.kind == "slice" else node.get("additionalProperties")
            if isinstance(sub, dict):
                walk(sub, t.elem, where + "[]")

    walk(object_schema(kind), arc_go_types()[kind], kind)


# --- encoding facts that only the Go structs tell -------------------------------------------------

_APIEXT = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."


def test_json_schema_props_round_trip_recursively() -> None:
    props = builtin_go_type(_APIEXT + "JSONSchemaProps")
    schema = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": False,  # *bool: false kept
        "uniqueItems": False, "nullable": False, "exclusiveMinimum": False,  # bool omitempty: dropped
        "unknownKey": 1,  # no such field: dropped
        "properties": {
            "replicas": {"type": "integer", "minimum": 0, "maximum": 0, "multipleOf": 1},
            "list": {"type": "array", "maxItems": 0, "minItems": 0,
                     "items": {"type": "string", "minLength": 0, "maxLength": 0, "bogus": True}},
            "tuple": {"type": "array", "items": [{"type": "string", "x": 1}, None]},
            "empty": {"type": "array", "items": []},
        },
        "additionalProperties": {"type": "string", "nullable": False},
        "additionalItems": True,
        "patternProperties": {"^a": {"maxProperties": 0}},
        "dependencies": {"a": ["b", "c"], "d": {"required": ["e"], "z": 1}, "f": [], "g": "x"},
        "definitions": {"def": {"minProperties": 0}},
        "allOf": [{"minimum": 0, "u": 1}], "anyOf": [{"maxLength": 0}], "oneOf": [{"format": ""}],
        "not": {"maxItems": 0, "q": 1},
        "default": {"b": 1}, "enum": [None, "a"], "example": [1],
        "x-kubernetes-list-type": "", "x-kubernetes-map-type": "atomic",  # *string: "" kept
    }
    assert go_roundtrip(schema, props) == {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": False,
        "properties": {
            "replicas": {"type": "integer", "minimum": 0, "maximum": 0, "multipleOf": 1},
            "list": {"type": "array", "maxItems": 0, "minItems": 0,
                     "items": {"type": "string", "minLength": 0, "maxLength": 0}},
            "tuple": {"type": "array", "items": [{"type": "string"}, {}]},
            "empty": {"type": "array", "items": None},  # an empty schema list marshals as null
        },
        "additionalProperties": {"type": "string"},
        "additionalItems": True,
        "patternProperties": {"^a": {"maxProperties": 0}},
        "dependencies": {"a": ["b", "c"], "d": {"required": ["e"]}, "f": None, "g": None},
        "definitions": {"def": {"minProperties": 0}},
        "allOf": [{"minimum": 0}], "anyOf": [{"maxLength": 0}], "oneOf": [{}],
        "not": {"maxItems": 0},
        "default": {"b": 1}, "enum": [None, "a"], "example": [1],
        "x-kubernetes-list-type": "", "x-kubernetes-map-type": "atomic",
    }


@pytest.mark.parametrize(("field", "value", "message"), [
    ("items", "x", "input must be a JSON object or array"),
    ("additionalProperties", 1, "boolean or JSON schema expected"),
    ("additionalItems", "yes", "boolean or JSON schema expected"),
    ("items", [1], "json: cannot unmarshal number into Go value of type v1.JSONSchemaProps"),
])
def test_json_schema_props_unions_reject_what_marshal_go_rejects(field: str, value: Any, message: str) -> None:
    with pytest.raises(GoDecodeError, match=message):
        go_roundtrip({field: value}, builtin_go_type(_APIEXT + "JSONSchemaProps"))


def test_a_null_union_pointer_is_omitted() -> None:
    props = builtin_go_type(_APIEXT + "JSONSchemaProps")
    assert go_roundtrip({"items": None, "additionalProperties": None, "default": None}, props) == {}


def test_an_empty_go_struct_drops_what_it_is_sent() -> None:
    sub = builtin_go_type(_APIEXT + "CustomResourceSubresources")
    assert go_roundtrip({"status": {"anything": 1}}, sub) == {"status": {}}


def test_a_value_struct_the_schema_calls_optional_is_always_emitted() -> None:
    backend = builtin_go_type("io.k8s.api.networking.v1.IngressServiceBackend")
    assert backend.fields["port"].pointer is False  # ServiceBackendPort is a value in Go
    assert go_roundtrip({"name": "svc"}, backend) == {"name": "svc", "port": {}}


def test_a_pointer_quantity_is_a_pointer() -> None:
    empty_dir = builtin_go_type("io.k8s.api.core.v1.EmptyDirVolumeSource")
    assert empty_dir.fields["sizeLimit"].pointer
    assert go_roundtrip({}, empty_dir) == {}


def test_a_nil_pointer_element_stays_null_and_differs_from_the_zero_value() -> None:
    metrics = arc_go_type("MetricsConfig")
    counters = metrics.fields["counters"].type  # map[string]*CounterMetric
    assert counters.kind == "map" and counters.elem_pointer
    assert go_roundtrip({"counters": {"a": None, "b": {"labels": ["x"], "bogus": 1}}}, metrics) == {
        "counters": {"a": None, "b": {"labels": ["x"]}}}
    assert not semantic_equal({"counters": {"a": None}}, {"counters": {"a": {}}}, metrics)
    assert semantic_equal({"counters": {"a": {}}}, {"counters": {"a": {"labels": []}}}, metrics)
