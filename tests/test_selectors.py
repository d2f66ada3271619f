"""Label and field selectors: grammar, matching, Go's error messages (reference §2.3, §8 items 25-26)."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.machinery.selectors import (
    DOES_NOT_EXIST,
    DOUBLE_EQUALS,
    EQUALS,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_EQUALS,
    NOT_IN,
    FieldTerm,
    Requirement,
    SelectorError,
    field_value,
    parse_field_selector,
    parse_label_selector,
    selector_from_map,
    selector_from_object,
)

# Reference §8 item 25: objects a, b, c.
OBJECTS: dict[str, dict[str, str] | None] = {
    "a": {"env": "prod"},
    "b": {"env": "dev", "legacy": ""},
    "c": None,
}


def select(text: str) -> list[str]:
    sel = parse_label_selector(text)
    return [name for name, labels in OBJECTS.items() if sel.matches(labels)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("env in (prod,dev),!legacy", ["a"]),
        ("env!=prod", ["b", "c"]),
        ("env", ["a", "b"]),
        ("env notin (prod)", ["b", "c"]),
        ("env=prod", ["a"]),
        ("env==prod", ["a"]),
        ("!env", ["c"]),
        ("legacy=", ["b"]),
        ("legacy in ()", ["b"]),
        ("", ["a", "b", "c"]),
        ("   ", ["a", "b", "c"]),
        ("env in (prod, dev) , legacy", ["b"]),
    ],
)
def test_reference_item_25_label_selector_table(text: str, expected: list[str]) -> None:
    assert select(text) == expected


@pytest.mark.parametrize(
    ("text", "labels", "matches"),
    [
        ("n>5", {"n": "6"}, True),
        ("n>5", {"n": "5"}, False),
        ("n<5", {"n": "-3"}, True),
        ("n>5", {"n": "abc"}, False),  # a non-integer label value never matches gt/lt
        ("n>5", {}, False),  # gt/lt require the key
        ("n<5", {"n": "9223372036854775808"}, False),  # out of int64 range
        ("n!=x", {}, True),  # != matches an absent key
        ("n notin (x)", {}, True),
        ("n in (x)", {}, False),
    ],
)
def test_every_operator_matches_like_go(text: str, labels: dict[str, str], matches: bool) -> None:
    assert parse_label_selector(text).matches(labels) is matches


@pytest.mark.parametrize(
    ("text", "operator", "values"),
    [
        ("k=v", EQUALS, ("v",)),
        ("k==v", DOUBLE_EQUALS, ("v",)),
        ("k!=v", NOT_EQUALS, ("v",)),
        ("k in (b,a)", IN, ("a", "b")),
        ("k notin (a)", NOT_IN, ("a",)),
        ("k", EXISTS, ()),
        ("!k", DOES_NOT_EXIST, ()),
        ("k>5", GREATER_THAN, ("5",)),
        ("k<5", LESS_THAN, ("5",)),
        ("k=", EQUALS, ("",)),
        ("k in (a,,b)", IN, ("", "a", "b")),
        ("k in (a,a)", IN, ("a",)),
    ],
)
def test_each_form_parses_to_one_requirement(text: str, operator: str, values: tuple[str, ...]) -> None:
    assert parse_label_selector(text).requirements == [Requirement("k", operator, values)]


def test_in_and_notin_are_identifiers_in_value_position() -> None:
    sel = parse_label_selector("in in (in,notin)")
    assert sel.requirements == [Requirement("in", IN, ("in", "notin"))]


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("z=1,a in (y,x),!m", "a in (x,y),!m,z=1"),
        ("k==v", "k==v"),
        ("k>5", "k>5"),
        ("  a  =  b ", "a=b"),
        ("x notin (b,a)", "x notin (a,b)"),
    ],
)
def test_str_is_gos_canonical_form_sorted_by_key(text: str, canonical: str) -> None:
    assert str(parse_label_selector(text)) == canonical


E_LABEL_KEY = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
E_LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("env in prod", "unable to parse requirement: found 'prod' expected: '('"),
        ("env in (prod", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("env in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"),
        ("env in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("a=(", "unable to parse requirement: found '(', expected: identifier"),
        ("!", "unable to parse requirement: found '', expected: identifier"),
        ("!=a", "found '!=', expected: !, identifier, or 'end of string'"),
        ("(", "found '(', expected: !, identifier, or 'end of string'"),
        ("a,", "found '', expected: identifier after ','"),
        ("a,,b", "found ',', expected: identifier after ','"),
        ("k=v=w", "found '=', expected: ',' or 'end of string'"),
        ("k=a b", "found 'b', expected: ',' or 'end of string'"),
        ("app:web", f'unable to parse requirement: <nil>: Invalid value: "app:web": {E_LABEL_KEY}'),
        ("x=a b c", "found 'b', expected: ',' or 'end of string'"),
        ("x=-a", f'unable to parse requirement: values[0][x]: Invalid value: "-a": {E_LABEL_VALUE}'),
        (
            "x>abc",
            "unable to parse requirement: values[0]: Invalid value: \"abc\": "
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        ("x>-1", f'unable to parse requirement: values[0][x]: Invalid value: "-1": {E_LABEL_VALUE}'),
        (
            "x=" + "v" * 64,
            f'unable to parse requirement: values[0][x]: Invalid value: "{"v" * 64}": must be no more than 63 bytes',
        ),
    ],
)
def test_malformed_label_selector_gives_gos_message(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        parse_label_selector(text)
    assert str(err.value) == message


def test_value_too_long_and_invalid_aggregates_with_semicolon() -> None:
    value = "-" + "v" * 63
    with pytest.raises(SelectorError) as err:
        parse_label_selector("x=" + value)
    assert str(err.value) == (
        f'unable to parse requirement: values[0][x]: Invalid value: "{value}": '
        f"must be no more than 63 bytes; {E_LABEL_VALUE}"
    )


def test_parsed_selectors_are_cached_and_immutable() -> None:
    first = parse_label_selector("a=b")
    assert parse_label_selector("a=b") is first
    reqs = first.requirements
    reqs.clear()
    assert first.requirements == [Requirement("a", EQUALS, ("b",))]


@pytest.mark.parametrize(
    ("sel", "empty", "nothing", "matches_unlabelled", "matches_env_prod"),
    [
        (None, False, True, False, False),
        ({}, True, False, True, True),
        ({"matchLabels": {}, "matchExpressions": []}, True, False, True, True),
        ({"matchLabels": {"env": "prod"}}, False, False, False, True),
        ({"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]}, False, False, True, False),
        ({"matchExpressions": [{"key": "env", "operator": "Exists"}]}, False, False, False, True),
        ({"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["dev"]}]}, False, False, True, True),
        ({"matchExpressions": [{"key": "env", "operator": "In", "values": ["dev", "prod"]}]}, False, False, False, True),
    ],
)
def test_label_selector_object_nil_selects_nothing_and_empty_selects_everything(
    sel: dict[str, Any] | None, empty: bool, nothing: bool, matches_unlabelled: bool, matches_env_prod: bool
) -> None:
    s = selector_from_object(sel)
    assert (s.empty, s.nothing) == (empty, nothing)
    assert s.matches(None) is matches_unlabelled
    assert s.matches({"env": "prod"}) is matches_env_prod


@pytest.mark.parametrize(
    ("sel", "message"),
    [
        ({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}, '"Gt" is not a valid pod selector operator'),
        (
            {"matchExpressions": [{"key": "a", "operator": "In"}]},
            "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
            'values: Invalid value: ["x"]: values set must be empty for exists and does not exist',
        ),
        ({"matchLabels": {"a b": "x"}}, f'key: Invalid value: "a b": {E_LABEL_KEY}'),
        ({"matchLabels": {"a": "x y"}}, f'values[0][a]: Invalid value: "x y": {E_LABEL_VALUE}'),
    ],
)
def test_label_selector_object_errors_are_label_selector_as_selector_messages(
    sel: dict[str, Any], message: str
) -> None:
    with pytest.raises(SelectorError) as err:
        selector_from_object(sel)
    assert str(err.value) == message


def test_selector_from_object_string_form_sorts_by_key() -> None:
    s = selector_from_object(
        {"matchLabels": {"z": "1"}, "matchExpressions": [{"key": "a", "operator": "In", "values": ["y", "x"]}]}
    )
    assert str(s) == "a in (x,y),z=1"


def test_selector_from_map_is_equality_terms_and_empty_map_selects_everything() -> None:
    assert str(selector_from_map({"b": "2", "a": "1"})) == "a=1,b=2"
    assert selector_from_map({}).empty
    assert selector_from_map({"a": "1"}).matches({"a": "1", "x": "y"})


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("a=1", [("a", frozenset({"1"}))]),
        ("a==1,b in (x,y)", [("a", frozenset({"1"})), ("b", frozenset({"x", "y"}))]),
        ("a!=1,b notin (x),c,!d,e>1", []),
        ("a in (x),a in (y)", [("a", frozenset({"x"})), ("a", frozenset({"y"}))]),
    ],
)
def test_index_terms_list_only_equality_and_in_requirements(text: str, terms: list[tuple[str, frozenset[str]]]) -> None:
    assert parse_label_selector(text).index_terms() == terms


def test_everything_and_nothing_have_no_index_terms() -> None:
    assert selector_from_object({}).index_terms() == []
    assert selector_from_object(None).index_terms() == []


# --- field selectors -----------------------------------------------------------------------

W1 = {"metadata": {"name": "w1", "namespace": "ns"}, "spec": {"mode": "a", "replicas": 2, "on": True}}


def fields_of(obj: dict[str, Any]) -> Any:
    return lambda f: field_value(obj, f)


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        ("metadata.name=w1", True),  # reference §8 item 26
        ("metadata.name==w1", True),
        ("metadata.name!=w1", False),
        ("metadata.namespace!=ns", False),  # item 26: a list in ns gives []
        ("metadata.name=w1,metadata.namespace=ns", True),
        ("metadata.name=w1,metadata.namespace=other", False),
        ("spec.missing=", True),  # a missing field reads as ""
        ("", True),
    ],
)
def test_reference_item_26_field_selector_table(text: str, matches: bool) -> None:
    assert parse_field_selector(text).matches(fields_of(W1)) is matches


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("a=1", [FieldTerm("a", "=", "1")]),
        ("a==1", [FieldTerm("a", "==", "1")]),
        ("a!=1", [FieldTerm("a", "!=", "1")]),
        ("b=2,a=1", [FieldTerm("a", "=", "1"), FieldTerm("b", "=", "2")]),  # terms sorted by text
        (r"a=x\,y\=z\\w", [FieldTerm("a", "=", r"x,y=z\w")]),
        ("a=1,,", [FieldTerm("a", "=", "1")]),
        (" a = 1", [FieldTerm(" a ", "=", " 1")]),  # no whitespace trimming
    ],
)
def test_field_selector_terms_and_escapes(text: str, terms: list[FieldTerm]) -> None:
    assert parse_field_selector(text).terms == terms


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abc", "invalid selector: 'abc'; can't understand 'abc'"),
        ("a=1,b", "invalid selector: 'a=1,b'; can't understand 'b'"),
        (r"a=x\y", r"invalid field selector: invalid escape sequence: \y"),
        ("a=x\\", "invalid field selector: invalid escape sequence: \\"),
        ("a==x=y", "invalid field selector: unescaped character in value: 61"),
    ],
)
def test_malformed_field_selector_gives_gos_message(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        parse_field_selector(text)
    assert str(err.value) == message


def test_field_selector_string_form_escapes_and_writes_double_equals_as_single() -> None:
    assert str(parse_field_selector(r"b==x\,y,a!=1")) == r"a!=1,b=x\,y"


@pytest.mark.parametrize(
    ("text", "field", "exact"),
    [
        ("metadata.name=w1", "metadata.name", "w1"),
        ("metadata.name==w1", "metadata.name", "w1"),
        ("metadata.name!=w1", "metadata.name", None),
        ("metadata.namespace=ns", "metadata.name", None),
    ],
)
def test_field_selector_exact_is_for_index_lookups(text: str, field: str, exact: str | None) -> None:
    assert parse_field_selector(text).exact(field) == exact


def test_field_selector_fields_and_empty() -> None:
    sel = parse_field_selector("spec.mode=a,metadata.name!=x")
    assert sel.fields() == {"spec.mode", "metadata.name"}
    assert not sel.empty
    assert parse_field_selector("").empty


@pytest.mark.parametrize(
    ("obj", "path", "value"),
    [
        (W1, "metadata.name", "w1"),
        (W1, ".spec.mode", "a"),  # selectableFields jsonPath form
        (W1, "spec.replicas", "2"),
        (W1, "spec.on", "true"),
        ({"spec": {"on": False}}, "spec.on", "false"),
        ({"spec": {"ratio": 1.5}}, "spec.ratio", "1.5"),
        ({"spec": {"big": 1e21}}, "spec.big", "1e+21"),
        (W1, "spec.absent", ""),
        (W1, "spec.mode.deeper", ""),
        ({}, "metadata.namespace", ""),
    ],
)
def test_field_value_renders_like_fmt_sprint(obj: dict[str, Any], path: str, value: str) -> None:
    assert field_value(obj, path) == value
