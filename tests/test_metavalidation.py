"""ObjectMeta validation with Go's exact messages (reference §1.4-1.6, §2.6, §8 items 1 and 21)."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.machinery.errors import invalid
from fakeapi.machinery.metavalidation import (
    dedup_owner_references,
    finalizer_warnings,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    validate_object_meta,
    validate_object_meta_update,
    validate_path_segment_name,
)

SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_1123 = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
LABEL_1035 = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation "
    "is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)

# --- name rules -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fn", "value", "errors"),
    [
        (is_dns1123_subdomain, "example.com", []),
        (is_dns1123_subdomain, "a" * 253, []),
        (is_dns1123_subdomain, "Foo", [SUBDOMAIN]),
        (is_dns1123_subdomain, "a-", [SUBDOMAIN]),
        (is_dns1123_subdomain, "a" * 254, ["must be no more than 253 bytes"]),
        (is_dns1123_subdomain, "", [SUBDOMAIN]),
        (is_dns1123_label, "my-name", []),
        (is_dns1123_label, "a.b", ["must not contain dots"]),
        (is_dns1123_label, "A", [LABEL_1123]),
        (is_dns1123_label, "a" * 64, ["must be no more than 63 bytes"]),
        (is_dns1035_label, "abc-123", []),
        (is_dns1035_label, "1abc", [LABEL_1035]),
        (is_qualified_name, "example.com/My_Name.1", []),
        (is_qualified_name, "a b", [NAME_PART]),
        (is_qualified_name, "/a", ["prefix part must be non-empty"]),
        (is_qualified_name, "a/", ["name part must be non-empty", NAME_PART]),
        (is_qualified_name, "Example.com/a", ["prefix part " + SUBDOMAIN]),
        (is_qualified_name, "a" * 64, ["name part must be no more than 63 bytes"]),
        (
            is_qualified_name,
            "a/b/c",
            [
                "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
                "and '/' (e.g. 'example.com/MyName')"
            ],
        ),
        (is_valid_label_value, "", []),
        (is_valid_label_value, "My_value-1.x", []),
        (is_valid_label_value, "-x", [LABEL_VALUE]),
        (is_valid_label_value, "a" * 64, ["must be no more than 63 bytes"]),
        (is_valid_label_value, "é" * 32, ["must be no more than 63 bytes", LABEL_VALUE]),  # Go counts bytes
        (validate_path_segment_name, "ok", []),
        (validate_path_segment_name, ".", ["may not be '.'"]),
        (validate_path_segment_name, "..", ["may not be '..'"]),
        (validate_path_segment_name, "a/b%c", ["may not contain '/'", "may not contain '%'"]),
    ],
)
def test_name_validators_return_gos_messages(fn: Any, value: str, errors: list[str]) -> None:
    assert fn(value) == errors


# --- validate_object_meta -----------------------------------------------------------------------


def causes_of(meta: dict[str, Any], **kw: Any) -> list[tuple[str, str, str]]:
    causes, _ = validate_object_meta(meta, **{"namespaced": True, **kw})
    return [(c.reason, c.field, c.message) for c in causes]


OK = {"name": "w1", "namespace": "ns"}


@pytest.mark.parametrize(
    ("meta", "kw", "expected"),
    [
        pytest.param(
            {"namespace": "ns"},
            {},
            [("FieldValueRequired", "metadata.name", "Required value: name or generateName is required")],
            id="no-name",
        ),
        pytest.param(
            {"name": "Foo", "namespace": "ns"},
            {},
            [("FieldValueInvalid", "metadata.name", f'Invalid value: "Foo": {SUBDOMAIN}')],
            id="name-not-subdomain",
        ),
        pytest.param({"generateName": "web-", "namespace": "ns"}, {}, [], id="generate-name-trailing-dash"),
        pytest.param(
            {"generateName": "Web-", "name": "web-abcde", "namespace": "ns"},
            {},
            [("FieldValueInvalid", "metadata.generateName", f'Invalid value: "Web-": {SUBDOMAIN}')],
            id="generate-name-invalid",
        ),
        pytest.param(
            {"name": "w1"}, {}, [("FieldValueRequired", "metadata.namespace", "Required value")], id="no-namespace"
        ),
        pytest.param(
            {"name": "w1", "namespace": "Ns"},
            {},
            [("FieldValueInvalid", "metadata.namespace", f'Invalid value: "Ns": {LABEL_1123}')],
            id="namespace-not-label",
        ),
        pytest.param(
            {"name": "w1", "namespace": "ns"},
            {"namespaced": False},
            [("FieldValueForbidden", "metadata.namespace", "Forbidden: not allowed on this type")],
            id="namespace-on-cluster-scoped",
        ),
        pytest.param(
            {"name": "a.b"},
            {"namespaced": False, "name_rule": "label"},
            [("FieldValueInvalid", "metadata.name", 'Invalid value: "a.b": must not contain dots')],
            id="namespace-name-rule",
        ),
        pytest.param(
            {"name": "1svc", "namespace": "ns"},
            {"name_rule": "dns1035"},
            [("FieldValueInvalid", "metadata.name", f'Invalid value: "1svc": {LABEL_1035}')],
            id="service-name-rule",
        ),
        pytest.param(
            {"name": "a/b", "namespace": "ns"},
            {"name_rule": "path"},
            [("FieldValueInvalid", "metadata.name", "Invalid value: \"a/b\": may not contain '/'")],
            id="path-segment-rule",
        ),
        pytest.param(
            {**OK, "generation": -1},
            {},
            [("FieldValueInvalid", "metadata.generation", "Invalid value: -1: must be greater than or equal to 0")],
            id="negative-generation",
        ),
        pytest.param(
            {**OK, "labels": {"a b": "ok", "ok": "-bad"}},
            {},
            [
                ("FieldValueInvalid", "metadata.labels", f'Invalid value: "a b": {NAME_PART}'),
                ("FieldValueInvalid", "metadata.labels", f'Invalid value: "-bad": {LABEL_VALUE}'),
            ],
            id="labels",
        ),
        pytest.param({**OK, "annotations": {"Example.COM/Key": "x"}}, {}, [], id="annotation-keys-checked-lowercased"),
        pytest.param(
            {**OK, "annotations": {"a b": "x"}},
            {},
            [("FieldValueInvalid", "metadata.annotations", f'Invalid value: "a b": {NAME_PART}')],
            id="annotation-key-invalid",
        ),
        pytest.param(
            {**OK, "annotations": {"k": "x" * (256 * 1024)}},
            {},
            [("FieldValueTooLong", "metadata.annotations", "Too long: may not be more than 262144 bytes")],
            id="annotations-over-256KiB",
        ),
        pytest.param(
            {**OK, "finalizers": ["bad name"]},
            {"custom_resource": True},
            [("FieldValueInvalid", "metadata.finalizers", 'Invalid value: "bad name": ' + NAME_PART)],
            id="finalizer-not-qualified-name",
        ),
        pytest.param(
            {**OK, "finalizers": ["orphan", "foregroundDeletion"]},
            {},
            [
                (
                    "FieldValueInvalid",
                    "metadata.finalizers",
                    'Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion '
                    "cannot be both set",
                )
            ],
            id="orphan-and-foreground",
        ),
        pytest.param(
            {**OK, "finalizers": ["kubernetes", "example.com/f", "cleanup"]},
            {},
            [
                (
                    "FieldValueInvalid",
                    "metadata.finalizers[2]",
                    'Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified',
                )
            ],
            id="builtin-kind-rejects-unqualified-finalizer",
        ),
        pytest.param({**OK, "finalizers": ["cleanup"]}, {"custom_resource": True}, [], id="cr-only-warns"),
    ],
)
def test_validate_object_meta_rules(meta: dict[str, Any], kw: dict[str, Any], expected: list[Any]) -> None:
    assert causes_of(meta, **kw) == expected


def test_reference_item_1_create_without_name_cause() -> None:
    causes, _ = validate_object_meta({"namespace": "ns"}, namespaced=True, custom_resource=True)
    assert [c.to_dict() for c in causes] == [
        {
            "reason": "FieldValueRequired",
            "message": "Required value: name or generateName is required",
            "field": "metadata.name",
        }
    ]


OWNER = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "a", "uid": "u1", "controller": True}


@pytest.mark.parametrize(
    ("refs", "expected"),
    [
        pytest.param([OWNER], [], id="valid"),
        pytest.param(
            [{"apiVersion": "v1", "kind": "K", "name": "", "uid": ""}],
            [
                ("metadata.ownerReferences.name", 'Invalid value: "": must not be empty'),
                ("metadata.ownerReferences.uid", 'Invalid value: "": must not be empty'),
            ],
            id="name-and-uid-required",
        ),
        pytest.param(
            [{"apiVersion": "a/b/c", "kind": "", "name": "n", "uid": "u"}],
            [
                ("metadata.ownerReferences.apiVersion", 'Invalid value: "a/b/c": version must not be empty'),
                ("metadata.ownerReferences.kind", 'Invalid value: "": must not be empty'),
            ],
            id="api-version-and-kind-required",
        ),
        pytest.param(
            [{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"}],
            [
                (
                    "metadata.ownerReferences",
                    'Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"u"}: '
                    "/v1, Kind=Event is disallowed from being an owner",
                )
            ],
            id="event-may-not-own",
        ),
        pytest.param(
            [OWNER, {**OWNER, "name": "b", "uid": "u2"}],
            [
                (
                    "metadata.ownerReferences",
                    'Invalid value: [{"apiVersion":"example.com/v1","kind":"Widget","name":"a","uid":"u1",'
                    '"controller":true},{"apiVersion":"example.com/v1","kind":"Widget","name":"b","uid":"u2",'
                    '"controller":true}]: Only one reference can have Controller set to true. Found "true" in '
                    "references for Widget/a and Widget/b",
                )
            ],
            id="two-controllers",
        ),
    ],
)
def test_owner_reference_rules(refs: list[dict[str, Any]], expected: list[tuple[str, str]]) -> None:
    causes, _ = validate_object_meta({**OK, "ownerReferences": refs}, namespaced=True)
    assert [(c.field, c.message) for c in causes] == expected


@pytest.mark.parametrize(
    ("finalizers", "old", "warnings"),
    [
        (["example.com/f", "kubernetes", "orphan"], None, []),
        (["foregroundDeletion"], None, []),
        (
            ["zeta", "alpha"],
            None,
            [
                'metadata.finalizers: "alpha": prefer a domain-qualified finalizer name including a path (/) to '
                "avoid accidental conflicts with other finalizer writers",
                'metadata.finalizers: "zeta": prefer a domain-qualified finalizer name including a path (/) to '
                "avoid accidental conflicts with other finalizer writers",
            ],
        ),
        (["zeta", "alpha"], ["zeta", "alpha"], []),  # on update only new finalizers warn
    ],
)
def test_custom_resource_unqualified_finalizer_only_warns(
    finalizers: list[str], old: list[str] | None, warnings: list[str]
) -> None:
    meta = {**OK, "finalizers": finalizers}
    if old is None:
        causes, got = validate_object_meta(meta, namespaced=True, custom_resource=True)
        assert causes == []
    else:
        got = finalizer_warnings(meta, {**OK, "finalizers": old})
    assert got == warnings


def test_whole_object_is_accepted_in_place_of_metadata() -> None:
    causes, _ = validate_object_meta({"apiVersion": "v1", "kind": "X", "metadata": {"name": "Foo"}}, namespaced=False)
    assert [c.field for c in causes] == ["metadata.name"]


# --- validate_object_meta_update ----------------------------------------------------------------

DELETING = {"name": "w1", "namespace": "ns", "uid": "u1", "finalizers": ["a"], "deletionTimestamp": "2026-07-24T10:11:12Z"}


@pytest.mark.parametrize(
    ("new", "old", "kw", "expected"),
    [
        pytest.param(
            {**DELETING, "finalizers": ["a", "c", "b"]},
            DELETING,
            {},
            [
                (
                    "FieldValueForbidden",
                    "metadata.finalizers",
                    "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers "
                    '[]string{"b", "c"}',
                )
            ],
            id="new-finalizer-while-deleting",
        ),
        pytest.param({**DELETING, "finalizers": []}, DELETING, {}, [], id="removing-finalizers-while-deleting"),
        pytest.param(
            {**DELETING, "finalizers": ["a", "b"]}, DELETING, {"subresource": "status"}, [], id="status-ignores-finalizers"
        ),
        pytest.param({**OK, "finalizers": ["b"]}, OK, {}, [], id="adding-finalizer-when-not-deleting"),
        pytest.param(
            {**OK, "uid": "u2"},
            {**OK, "uid": "u1"},
            {},
            [("FieldValueInvalid", "metadata.uid", 'Invalid value: "u2": field is immutable')],
            id="uid-changed-by-patch",
        ),
        pytest.param(OK, {**OK, "uid": "u1"}, {}, [], id="empty-uid-is-restored"),
        pytest.param(
            {**OK, "deletionTimestamp": "2026-07-24T10:11:12Z"},
            OK,
            {},
            [
                (
                    "FieldValueInvalid",
                    "metadata.deletionTimestamp",
                    'Invalid value: "2026-07-24T10:11:12Z": field is immutable',
                )
            ],
            id="client-sets-deletion-timestamp",
        ),
        pytest.param({**DELETING, "deletionTimestamp": None}, DELETING, {}, [], id="clearing-deletion-timestamp-ignored"),
        pytest.param(
            {**DELETING, "deletionTimestamp": "2030-01-01T00:00:00Z"}, DELETING, {}, [], id="moving-deletion-timestamp-ignored"
        ),
        pytest.param(
            {**OK, "deletionGracePeriodSeconds": 30},
            {**OK, "deletionGracePeriodSeconds": 0},
            {},
            [("FieldValueInvalid", "metadata.deletionGracePeriodSeconds", "Invalid value: 30: field is immutable")],
            id="grace-period-changed",
        ),
        pytest.param(OK, {**OK, "deletionGracePeriodSeconds": 0}, {}, [], id="grace-period-omitted-is-restored"),
        pytest.param(
            {**OK, "generation": 1},
            {**OK, "generation": 2},
            {},
            [("FieldValueInvalid", "metadata.generation", "Invalid value: 1: must not be decremented")],
            id="generation-decremented",
        ),
        pytest.param(
            {**OK, "name": "w2"},
            OK,
            {},
            [("FieldValueInvalid", "metadata.name", 'Invalid value: "w2": field is immutable')],
            id="name-changed",
        ),
        pytest.param({**OK, "creationTimestamp": "2030-01-01T00:00:00Z"}, OK, {}, [], id="creation-timestamp-restored"),
    ],
)
def test_validate_object_meta_update_rules(
    new: dict[str, Any], old: dict[str, Any], kw: dict[str, Any], expected: list[Any]
) -> None:
    causes = validate_object_meta_update(new, old, **kw)
    assert [(c.reason, c.field, c.message) for c in causes] == expected


def test_reference_item_21_message_through_errors_invalid() -> None:
    causes = validate_object_meta_update({**DELETING, "finalizers": ["a", "b"]}, DELETING)
    err = invalid("example.com", "Widget", "w1", causes)
    assert err.message == (
        'Widget.example.com "w1" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the '
        'object is being deleted, found new finalizers []string{"b"}'
    )


# --- dedup_owner_references ---------------------------------------------------------------------

REF_A = {"apiVersion": "v1", "kind": "K", "name": "a", "uid": "u1"}


@pytest.mark.parametrize(
    ("refs", "kept", "warned_uids"),
    [
        ([REF_A], [REF_A], None),
        ([REF_A, dict(REF_A)], [REF_A], "u1"),
        ([REF_A, {**REF_A, "uid": "u2"}, dict(REF_A), {**REF_A, "uid": "u2"}], [REF_A, {**REF_A, "uid": "u2"}], "u1, u2"),
        ([REF_A, {**REF_A, "controller": True}], [REF_A, {**REF_A, "controller": True}], None),  # same uid, differ
    ],
)
def test_dedup_owner_references_drops_exact_duplicates_with_one_warning(
    refs: list[dict[str, Any]], kept: list[dict[str, Any]], warned_uids: str | None
) -> None:
    meta = {"ownerReferences": list(refs)}
    warnings = dedup_owner_references(meta)
    assert meta["ownerReferences"] == kept
    if warned_uids is None:
        assert warnings == []
    else:
        assert warnings == [
            ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and "
            "may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: "
            + warned_uids
        ]


def test_dedup_owner_references_patch_wording_and_whole_object() -> None:
    obj = {"metadata": {"ownerReferences": [REF_A, dict(REF_A)]}}
    warnings = dedup_owner_references(obj, after_mutating_admission=True)
    assert obj["metadata"]["ownerReferences"] == [REF_A]
    assert warnings[0].startswith(
        ".metadata.ownerReferences contains duplicate entries after mutating admission happens; "
    )
