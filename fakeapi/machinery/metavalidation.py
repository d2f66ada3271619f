"""ObjectMeta validation as kube-apiserver does it (reference §1.4-1.6, §2.6).

Ports of ``k8s.io/apimachinery/pkg/api/validate/content`` (name and label
rules), ``pkg/api/validation/objectmeta.go`` (``ValidateObjectMetaAccessor``,
``ValidateObjectMetaAccessorUpdate``), the core-kinds finalizer rule of
``k8s.io/kubernetes/pkg/apis/core/validation`` and the custom-resource finalizer
warnings of ``apiextensions-apiserver/.../customresource/validator.go``.

Every rule returns :class:`~fakeapi.machinery.errors.Cause` values whose ``message`` is
the Go ``field.Error.ErrorBody()`` text (``Invalid value: "Foo": ...``) and whose
``field`` is the Go field path (``metadata.labels``; Go gives no key or index for
labels, annotations, finalizers and ownerReferences, except the core-kinds
finalizer rule which says ``metadata.finalizers[0]``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from fakeapi.machinery.errors import (
    Cause,
)
from fakeapi.machinery.gorender import (  # noqa: F401 (re-exported: they lived here)
    _INF,
    _MAX_LEN_UNIT,
    _SHORT_ESCAPES,
    EMPTY_ERROR,
    _blen,
    _is_mapping,
    bad_value,
    forbidden,
    go_float,
    go_json,
    go_quote,
    go_string_map,
    go_string_slice,
    invalid,
    label_selector_string,
    max_len_error,
    not_supported,
    regex_error,
    required,
    too_long,
)

# --- name rules (content package) -----------------------------------------------------

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_VALUE_FMT = "(" + LABEL_KEY_FMT + ")?"

_DNS1123_LABEL_RE = re.compile(DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL_RE = re.compile(DNS1035_LABEL_FMT)
_LABEL_KEY_RE = re.compile(LABEL_KEY_FMT)
_LABEL_VALUE_RE = re.compile(LABEL_VALUE_FMT)

_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)


def _is_dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``: ≤ 63, ``[a-z0-9]([-a-z0-9]*[a-z0-9])?``."""
    errs: list[str] = []
    if _blen(value) > 63:
        errs.append(max_len_error(63))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def _is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``: ≤ 253, dot-separated DNS-1123 labels."""
    errs: list[str] = []
    if _blen(value) > 253:
        errs.append(max_len_error(253))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def _is_dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label``: ≤ 63, ``[a-z]([-a-z0-9]*[a-z0-9])?``."""
    errs: list[str] = []
    if _blen(value) > 63:
        errs.append(max_len_error(63))
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def _is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName`` (= ``content.IsLabelKey``): ``[prefix/]name``."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + EMPTY_ERROR)
        else:
            errs.extend("prefix part " + m for m in _dns1123_subdomain(prefix))
    else:
        return [
            "a valid label key "
            + regex_error(_LABEL_KEY_MSG, LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + EMPTY_ERROR)
    elif _blen(name) > 63:
        errs.append("name part " + max_len_error(63))
    if not _LABEL_KEY_RE.fullmatch(name):
        errs.append("name part " + regex_error(_LABEL_KEY_MSG, LABEL_KEY_FMT, "MyName", "my.name", "123-abc"))
    return errs


def _is_valid_label_value(value: str) -> list[str]:
    """``IsValidLabelValue``: ≤ 63, may be empty."""
    errs: list[str] = []
    if _blen(value) > 63:
        errs.append(max_len_error(63))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def validate_path_segment_name(value: str, prefix: bool = False) -> list[str]:
    """``path.ValidatePathSegmentName``: not ``.``/``..``, no ``/`` or ``%``."""
    if not prefix:
        for bad in (".", ".."):
            if value == bad:
                return [f"may not be '{bad}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def mask_trailing_dash(name: str) -> str:
    """``maskTrailingDash``: ``web-`` validates as ``wea`` (Go drops two characters)."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


# --- memoized rules --------------------------------------------------------------------
#
# The rules are pure functions of a string and the same names, label keys and values come
# back on every write: their results are cached (as tuples, handed out as fresh lists).
# Only real ``str`` values are cached; anything else runs the rule as it is.

_CACHE_SIZE = 8192


@lru_cache(maxsize=_CACHE_SIZE)
def _dns1123_label(value: str) -> tuple[str, ...]:
    return tuple(_is_dns1123_label(value))


@lru_cache(maxsize=_CACHE_SIZE)
def _dns1123_subdomain(value: str) -> tuple[str, ...]:
    return tuple(_is_dns1123_subdomain(value))


@lru_cache(maxsize=_CACHE_SIZE)
def _dns1035_label(value: str) -> tuple[str, ...]:
    return tuple(_is_dns1035_label(value))


@lru_cache(maxsize=_CACHE_SIZE)
def _qualified_name(value: str) -> tuple[str, ...]:
    return tuple(_is_qualified_name(value))


@lru_cache(maxsize=_CACHE_SIZE)
def _label_value(value: str) -> tuple[str, ...]:
    return tuple(_is_valid_label_value(value))


@lru_cache(maxsize=_CACHE_SIZE)
def _annotation_key(key: str) -> tuple[str, ...]:
    return _qualified_name(key.lower())


# Whole sets of labels and annotations come back on every write of an object (and on its siblings'):
# the sets found valid are remembered by their items (the last few thousand), and a set found among
# them is not walked again. Only a valid set is remembered (its causes are none); a set with anything to
# report is walked every time. (An item equal to a valid one is the same strings: a str equals only a
# str.) On update the labels the write keeps are skipped anyway: the memo is for creates.
_VALID_LABEL_SETS: dict[tuple[tuple[Any, Any], ...], None] = {}
_VALID_ANNOTATION_SETS: dict[tuple[tuple[Any, Any], ...], None] = {}


def _item_key(m: dict[str, Any]) -> tuple[tuple[Any, Any], ...] | None:
    """The items of a map as a key of those memos, or None when a value cannot be one (unhashable)."""
    key = tuple(m.items())
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _remember(memo: dict[tuple[tuple[Any, Any], ...], None], key: tuple[tuple[Any, Any], ...]) -> None:
    if len(memo) >= _CACHE_SIZE:
        memo.clear()
    memo[key] = None


def is_dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``: ≤ 63, ``[a-z0-9]([-a-z0-9]*[a-z0-9])?``."""
    return list(_dns1123_label(value)) if type(value) is str else _is_dns1123_label(value)


def is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``: ≤ 253, dot-separated DNS-1123 labels."""
    return list(_dns1123_subdomain(value)) if type(value) is str else _is_dns1123_subdomain(value)


def is_dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label``: ≤ 63, ``[a-z]([-a-z0-9]*[a-z0-9])?``."""
    return list(_dns1035_label(value)) if type(value) is str else _is_dns1035_label(value)


def is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName`` (= ``content.IsLabelKey``): ``[prefix/]name``."""
    return list(_qualified_name(value)) if type(value) is str else _is_qualified_name(value)


def is_valid_label_value(value: str) -> list[str]:
    """``IsValidLabelValue``: ≤ 63, may be empty."""
    return list(_label_value(value)) if type(value) is str else _is_valid_label_value(value)


_NAME_RULES = {
    "subdomain": is_dns1123_subdomain,
    "label": is_dns1123_label,
    "dns1035": is_dns1035_label,
}


def validate_name(name: str, rule: str = "subdomain", *, prefix: bool = False) -> list[str]:
    """A kind's ValidateNameFunc: ``subdomain``, ``label``, ``dns1035``, ``path`` or ``none``.

    ``prefix`` validates a generateName (trailing dash masked). Path-segment
    rules (checked after the kind's own rule passes, as ``rest.BeforeCreate``
    does) are included.
    """
    if type(name) is str and type(rule) is str:
        return list(_validate_name(name, rule, bool(prefix)))
    return _validate_name_uncached(name, rule, prefix=prefix)


@lru_cache(maxsize=_CACHE_SIZE)
def _validate_name(name: str, rule: str, prefix: bool) -> tuple[str, ...]:
    return tuple(_validate_name_uncached(name, rule, prefix=prefix))


def _validate_name_uncached(name: str, rule: str = "subdomain", *, prefix: bool = False) -> list[str]:
    fn = _NAME_RULES.get(rule)
    if fn is not None:
        errs = fn(mask_trailing_dash(name) if prefix else name)
        if errs:
            return errs
    elif rule not in ("path", "none"):
        raise ValueError(f"unknown name rule {rule!r}")
    return validate_path_segment_name(name, prefix)


# --- ObjectMeta on create -------------------------------------------------------------

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})
_OWNER_REF_FIELDS = ("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")
_OWNER_REF_STRINGS = ("apiVersion", "kind", "name", "uid")
_MANAGED_FIELDS_MAX_MANAGER = 128


def validate_labels(labels: Any, field: str = "metadata.labels", old: Any = None) -> list[Cause]:
    """``v1validation.ValidateLabels``: keys qualified names, values label values.

    ``old``: stored labels (checked when stored) the write replaces: a label it keeps as it was has
    nothing to report (each label's causes depend on that label alone) and is not checked again.
    """
    if type(labels) is not dict or not labels or old is not None:  # (an update: only its new labels are walked)
        return _label_causes(labels, field, old)
    key = _item_key(labels)
    if key is not None and key in _VALID_LABEL_SETS:
        return []  # (a set of labels found valid before: nothing to report)
    causes = _label_causes(labels, field)
    if not causes and key is not None:
        _remember(_VALID_LABEL_SETS, key)
    return causes


def _label_causes(labels: Any, field: str = "metadata.labels", old: Any = None) -> list[Cause]:
    """:func:`validate_labels`, label by label."""
    causes: list[Cause] = []
    if not _is_mapping(labels):
        return causes
    kept = old if type(old) is dict and type(labels) is dict else {}
    for k, v in labels.items():
        if type(v) is str and kept.get(k, _NO_LABEL) == v:
            continue  # (on update, a label the stored object has as it is was checked when stored)
        for msg in _qualified_name(k) if type(k) is str else _is_qualified_name(k):
            causes.append(invalid(field, k, msg))
        v = v if isinstance(v, str) else ""
        for msg in _label_value(v) if type(v) is str else _is_valid_label_value(v):
            causes.append(invalid(field, v, msg))
    return causes


_NO_LABEL: Any = object()
_SELECTOR_OPERATORS_WITH_VALUES = ("In", "NotIn")
_SELECTOR_OPERATORS_WITHOUT_VALUES = ("Exists", "DoesNotExist")


def validate_label_selector(selector: Any, field: str, *, allow_invalid_label_value: bool = False) -> list[Cause]:
    """``metav1validation.ValidateLabelSelector``: the ``matchLabels`` (``ValidateLabels``), then each of
    the ``matchExpressions`` (``ValidateLabelSelectorRequirement``: an operator, values for ``In`` and
    ``NotIn`` only, a qualified-name key, label-value values unless ``allow_invalid_label_value``).

    A nil selector (``None``) has nothing to check.
    """
    if not _is_mapping(selector):
        return []
    causes = validate_labels(selector.get("matchLabels"), f"{field}.matchLabels")
    exprs = selector.get("matchExpressions")
    for i, expr in enumerate(exprs if isinstance(exprs, list) else ()):
        if not _is_mapping(expr):
            continue
        path = f"{field}.matchExpressions[{i}]"
        op = expr.get("operator")
        op = op if isinstance(op, str) else ""
        values = expr.get("values")
        values = values if isinstance(values, list) else []
        if op in _SELECTOR_OPERATORS_WITH_VALUES:
            if not values:
                causes.append(required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in _SELECTOR_OPERATORS_WITHOUT_VALUES:
            if values:
                causes.append(forbidden(f"{path}.values",
                                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        else:
            causes.append(invalid(f"{path}.operator", op, "not a valid selector operator"))
        key = expr.get("key")
        key = key if isinstance(key, str) else ""
        causes += [invalid(f"{path}.key", key, msg) for msg in _qualified_name(key)]
        if not allow_invalid_label_value:
            for j, value in enumerate(values):
                value = value if isinstance(value, str) else ""
                causes += [invalid(f"{path}.values[{j}]", value, msg) for msg in _label_value(value)]
    return causes


def validate_annotations(annotations: Any, field: str = "metadata.annotations") -> list[Cause]:
    """``ValidateAnnotations``: keys checked lower-cased; total size ≤ 256 KiB."""
    if type(annotations) is not dict or not annotations:
        return _annotation_causes(annotations, field)
    key = _item_key(annotations)
    if key is not None and key in _VALID_ANNOTATION_SETS:
        return []  # (a set of annotations found valid before: nothing to report)
    causes = _annotation_causes(annotations, field)
    if not causes and key is not None:
        _remember(_VALID_ANNOTATION_SETS, key)
    return causes


def _annotation_causes(annotations: Any, field: str = "metadata.annotations") -> list[Cause]:
    """:func:`validate_annotations`, annotation by annotation."""
    causes: list[Cause] = []
    if not _is_mapping(annotations):
        return causes
    total = 0
    for k, v in annotations.items():
        for msg in _annotation_key(k) if type(k) is str else _is_qualified_name(k.lower()):
            causes.append(invalid(field, k, msg))
        total += _blen(k) + (_blen(v) if isinstance(v, str) else 0)
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        causes.append(too_long(field, TOTAL_ANNOTATION_SIZE_LIMIT))
    return causes


def _owner_ref_struct(ref: Any) -> dict[str, Any]:
    """An ownerReference as Go's typed struct marshals it (field order, zero strings)."""
    src = ref if _is_mapping(ref) else {}
    out: dict[str, Any] = {}
    for f in _OWNER_REF_FIELDS:
        v = src.get(f)
        if f in _OWNER_REF_STRINGS:
            out[f] = v if isinstance(v, str) else ""
        elif v is not None:
            out[f] = bool(v)
    return out


def _parse_api_version(api_version: str) -> tuple[str, str]:
    """``schema.ParseGroupVersion`` (an unparsable value gives the empty GroupVersion)."""
    if not api_version or api_version == "/":
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", api_version
    if len(parts) == 2:
        return parts[0], parts[1]
    return "", ""


def validate_owner_references(refs: Any, field: str = "metadata.ownerReferences") -> list[Cause]:
    """``ValidateOwnerReferences``: required fields, banned owners, one controller."""
    causes: list[Cause] = []
    if not isinstance(refs, list):
        return causes
    first_controller = ""
    for raw in refs:
        if type(raw) is dict:
            # (issue 22: a reference with every string set, a version and no Event owner adds no cause, and
            # with no controller flag no controller: the commonest, checked without its typed copy; a first
            # controller, the next commonest, is only noted)
            av, kd, nm, ud = raw.get("apiVersion"), raw.get("kind"), raw.get("name"), raw.get("uid")
            if (type(av) is str and type(kd) is str and type(nm) is str and type(ud) is str and kd and nm and ud
                    and kd != "Event" and _parse_api_version(av)[1]):
                controller = raw.get("controller")
                if controller is None or not controller:
                    continue
                if not first_controller and controller is True:
                    first_controller = f"{kd}/{nm}"
                    continue
        ref = _owner_ref_struct(raw)
        group, version = _parse_api_version(ref["apiVersion"])
        if not version:
            causes.append(invalid(field + ".apiVersion", ref["apiVersion"], "version must not be empty"))
        if not ref["kind"]:
            causes.append(invalid(field + ".kind", ref["kind"], "must not be empty"))
        if not ref["name"]:
            causes.append(invalid(field + ".name", ref["name"], "must not be empty"))
        if not ref["uid"]:
            causes.append(invalid(field + ".uid", ref["uid"], "must not be empty"))
        if group == "" and version == "v1" and ref["kind"] == "Event":
            causes.append(invalid(field, ref, "/v1, Kind=Event is disallowed from being an owner"))
        if ref.get("controller") is True:
            name = f"{ref['kind']}/{ref['name']}"
            if first_controller:
                whole = [_owner_ref_struct(r) for r in refs]
                causes.append(
                    invalid(
                        field,
                        whole,
                        'Only one reference can have Controller set to true. Found "true" in references for '
                        f"{first_controller} and {name}",
                    )
                )
            else:
                first_controller = name
    return causes


def validate_finalizers(finalizers: Any, field: str = "metadata.finalizers") -> list[Cause]:
    """``ValidateFinalizers``: qualified names; not both ``orphan`` and ``foregroundDeletion``."""
    causes: list[Cause] = []
    if not isinstance(finalizers, list):
        return causes
    for f in finalizers:
        f = f if isinstance(f, str) else ""
        for msg in is_qualified_name(f):
            causes.append(invalid(field, f, msg))
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        causes.append(invalid(field, list(finalizers), "finalizer orphan and foregroundDeletion cannot be both set"))
    return causes


def _core_finalizer_names(finalizers: Any) -> list[Cause]:
    """Core kinds' ``validateKubeFinalizerName``: a name without ``/`` must be standard."""
    causes: list[Cause] = []
    if not isinstance(finalizers, list):
        return causes
    for i, f in enumerate(finalizers):
        if isinstance(f, str) and "/" not in f and f not in STANDARD_FINALIZERS:
            causes.append(
                invalid(
                    f"metadata.finalizers[{i}]", f, "name is neither a standard finalizer name nor is it fully qualified"
                )
            )
    return causes


def finalizer_warnings(meta: Mapping[str, Any], old_meta: Mapping[str, Any] | None = None) -> list[str]:
    """Custom resources: warnings for finalizers added by this write (sorted, as Go does).

    On update pass the stored metadata: only new finalizers are warned about.
    """
    meta = _meta_of(meta)
    new = meta.get("finalizers") or []
    if not isinstance(new, list):
        return []
    added = {f for f in new if isinstance(f, str)}
    if old_meta is not None:
        old = _meta_of(old_meta).get("finalizers") or []
        added -= set(old) if isinstance(old, list) else set()
    warnings: list[str] = []
    for f in sorted(added):
        for msg in is_qualified_name(f):
            warnings.append(f"metadata.finalizers: {go_quote(f)}: {msg}")
        if "/" not in f and f not in STANDARD_FINALIZERS:
            warnings.append(
                f"metadata.finalizers: {go_quote(f)}: prefer a domain-qualified finalizer name including a path (/) "
                "to avoid accidental conflicts with other finalizer writers"
            )
    return warnings


def _is_printable(s: str) -> bool:
    return all(c == " " or c.isprintable() for c in s)


def validate_managed_fields(entries: Any, field: str = "metadata.managedFields") -> list[Cause]:
    """``ValidateManagedFields``: operation Apply|Update, fieldsType FieldsV1, manager ≤ 128 printable."""
    causes: list[Cause] = []
    if not isinstance(entries, list):
        return causes
    for i, e in enumerate(entries):
        e = e if _is_mapping(e) else {}
        p = f"{field}[{i}]"
        op = e.get("operation") or ""
        if op not in ("Apply", "Update"):
            causes.append(invalid(p + ".operation", op, "must be `Apply` or `Update`"))
        ft = e.get("fieldsType") or ""
        if ft and ft != "FieldsV1":
            causes.append(invalid(p + ".fieldsType", ft, "must be `FieldsV1`"))
        manager = e.get("manager") or ""
        if _blen(manager) > _MANAGED_FIELDS_MAX_MANAGER:
            causes.append(too_long(p + ".manager", _MANAGED_FIELDS_MAX_MANAGER))
        for pos, ch in enumerate(manager):
            if not (ch == " " or ch.isprintable()):
                causes.append(
                    invalid(p + ".manager", manager, f"invalid character {_go_unicode(ch)} (at position {pos})")
                )
        sub = e.get("subresource") or ""
        if _blen(sub) > 256:
            causes.append(too_long(p + ".subresource", 256))
    return causes


def _go_unicode(ch: str) -> str:
    """Go ``%#U``: ``U+0007`` (the quoted character is omitted when not printable)."""
    return f"U+{ord(ch):04X}"


def validate_object_meta(
    meta: Mapping[str, Any] | None,
    *,
    namespaced: bool,
    name_rule: str = "subdomain",
    custom_resource: bool = False,
    old: Mapping[str, Any] | None = None,
) -> tuple[list[Cause], list[str]]:
    """Validate ``metadata`` (or a whole object's) on create; returns (causes, warnings).

    Order as ``ValidateObjectMetaAccessor``: generateName, name, namespace,
    generation, labels, annotations, ownerReferences, finalizers, managedFields;
    then (built-in kinds only) the core finalizer-name rule. ``name_rule`` is
    ``subdomain`` (CRs and most kinds), ``label`` (Namespace), ``dns1035``
    (Service), ``path`` (path-segment rule only) or ``none``. A name that is
    empty while generateName is set is not reported: the server generates the
    name before validating. Warnings: custom-resource finalizer-name warnings.

    The server runs this on updates too (``validateCommonFields``), followed by
    :func:`validate_object_meta_update`; on update use
    ``finalizer_warnings(new, old)`` for the warnings. ``old``: the stored metadata an
    update replaces; values equal to its values passed these checks when stored and are
    not checked again (the answer is the same: the checks depend on nothing else).
    """
    m = _meta_of(meta)
    o = _meta_of(old) if old is not None else _NO_META
    causes: list[Cause] = []
    gen_name = m.get("generateName") or ""
    name = m.get("name") or ""
    if isinstance(gen_name, str) and gen_name and gen_name != o.get("generateName"):
        for msg in validate_name(gen_name, name_rule, prefix=True):
            causes.append(invalid("metadata.generateName", gen_name, msg))
    if not name:
        if not gen_name:
            causes.append(required("metadata.name", "name or generateName is required"))
    elif isinstance(name, str) and name != o.get("name"):
        for msg in validate_name(name, name_rule):
            causes.append(invalid("metadata.name", name, msg))
    namespace = m.get("namespace") or ""
    if namespaced:
        if not namespace:
            causes.append(required("metadata.namespace"))
        elif namespace != o.get("namespace"):
            for msg in validate_name(namespace, "label"):
                causes.append(invalid("metadata.namespace", namespace, msg))
    elif namespace:
        causes.append(forbidden("metadata.namespace", "not allowed on this type"))
    generation = m.get("generation")
    if isinstance(generation, (int, float)) and not isinstance(generation, bool) and generation < 0:
        causes.append(invalid("metadata.generation", generation, "must be greater than or equal to 0"))
    for key, check in _META_CHECKS:
        value = m.get(key)
        if value is not None and (old is None or (value is not (ov := o.get(key)) and value != ov)):
            if check is validate_labels:
                # (only the labels the write adds or changes)
                causes.extend(validate_labels(value, old=o.get(key) if old is not None else None))
            else:
                causes.extend(check(value))
    warnings: list[str] = []
    if custom_resource:
        fins = m.get("finalizers")
        if old is None or fins is None or (fins is not o.get("finalizers") and fins != o.get("finalizers")):
            warnings = finalizer_warnings(m, old)
        # (else, issue 22: the stored finalizers, so none added: no warning)
    else:
        causes.extend(_core_finalizer_names(m.get("finalizers")))
    return causes, warnings


_NO_META: Mapping[str, Any] = {}
#: The checks of ObjectMeta's maps and lists, in ``ValidateObjectMetaAccessor``'s order.
_META_CHECKS: tuple[tuple[str, Callable[[Any], list[Cause]]], ...] = (
    ("labels", validate_labels),
    ("annotations", validate_annotations),
    ("ownerReferences", validate_owner_references),
    ("finalizers", validate_finalizers),
    ("managedFields", validate_managed_fields),
)


# --- ObjectMeta on update -------------------------------------------------------------


def validate_object_meta_update(
    new: Mapping[str, Any] | None,
    old: Mapping[str, Any] | None,
    *,
    subresource: str = "",
) -> list[Cause]:
    """The update-only rules of ``ValidateObjectMetaAccessorUpdate`` (after ``BeforeUpdate``).

    ``new``/``old`` are the request's and the stored metadata (or whole objects).

    - new finalizers while the stored object is being deleted: Forbidden;
    - generation decremented;
    - name, namespace, uid (non-empty and different: the PATCH case),
      deletionTimestamp (set by the client on an object without one) and
      deletionGracePeriodSeconds (changed, and not merely omitted) immutable.

    Values ``BeforeUpdate`` restores silently are not errors: creationTimestamp,
    an existing deletionTimestamp, an empty uid, an omitted grace period. With a
    ``subresource`` (status) the metadata the status strategy copies from the
    stored object (finalizers, deletionTimestamp, generation) is not checked.
    The resourceVersion rule is the server's (it answers with the plural resource).
    Label/annotation/ownerReference/finalizer-name rules come from
    :func:`validate_object_meta`, which the server runs on updates too.
    """
    n, o = _meta_of(new), _meta_of(old)
    causes: list[Cause] = []
    if not subresource and o.get("deletionTimestamp"):
        old_f = o.get("finalizers") or []
        new_f = n.get("finalizers") or []
        extra = sorted({f for f in new_f if isinstance(f, str)} - set(old_f))
        if extra:
            causes.append(
                forbidden(
                    "metadata.finalizers",
                    "no new finalizers can be added if the object is being deleted, found new finalizers "
                    + go_string_slice(extra),
                )
            )
    if not subresource:
        ng, og = _int(n.get("generation")), _int(o.get("generation"))
        if ng < og:
            causes.append(invalid("metadata.generation", ng, "must not be decremented"))
    for f in ("name", "namespace"):
        nv, ov = n.get(f) or "", o.get(f) or ""
        if nv != ov:
            causes.append(invalid("metadata." + f, nv, "field is immutable"))
    nu, ou = n.get("uid") or "", o.get("uid") or ""
    if nu and nu != ou:
        causes.append(invalid("metadata.uid", nu, "field is immutable"))
    if not subresource and not o.get("deletionTimestamp") and n.get("deletionTimestamp"):
        causes.append(invalid("metadata.deletionTimestamp", n.get("deletionTimestamp"), "field is immutable"))
    ng_p, og_p = n.get("deletionGracePeriodSeconds"), o.get("deletionGracePeriodSeconds")
    if ng_p is not None and ng_p != og_p:
        causes.append(invalid("metadata.deletionGracePeriodSeconds", ng_p, "field is immutable"))
    return causes


def _meta_of(d: Any) -> Mapping[str, Any]:
    """``metadata`` itself, or the ``metadata`` of a whole object."""
    if type(d) is not dict and not _is_mapping(d):
        return {}
    inner = d.get("metadata")
    if type(inner) is dict:
        return inner
    return inner if inner is not None and _is_mapping(inner) else d


def _int(v: Any) -> int:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0


# --- ownerReference de-duplication ----------------------------------------------------

DUPLICATE_OWNER_REFERENCES_WARNING = (
    ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, "
    "and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: {}"
)
DUPLICATE_OWNER_REFERENCES_AFTER_ADMISSION_WARNING = (
    ".metadata.ownerReferences contains duplicate entries after mutating admission happens; API server dedups "
    "owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; "
    "duplicate UID(s) observed: {}"
)


def dedup_owner_references(meta: dict[str, Any], *, after_mutating_admission: bool = False) -> list[str]:
    """Drop ownerReferences equal to an earlier entry with the same uid, in place (metadata or object).

    As ``dedupOwnerReferencesAndAddWarning``: only entries entirely equal to a
    kept one are dropped (same uid with other differences are kept); returns
    one warning listing the duplicate uids, or []. The server uses the
    ``after_mutating_admission`` wording for PATCH requests.
    """
    inner = meta.get("metadata")
    if isinstance(inner, dict):
        meta = inner
    refs = meta.get("ownerReferences")
    if not isinstance(refs, list) or len(refs) < 2:
        return []
    kept: list[Any] = []
    seen: set[Any] = set()
    duplicates: list[str] = []
    for ref in refs:
        uid = ref.get("uid", "") if _is_mapping(ref) else ""
        uid = uid if isinstance(uid, str) else ""
        if uid not in seen or not any(_owner_ref_equal(k, ref) for k in kept):
            seen.add(uid)
            kept.append(ref)
        else:
            duplicates.append(uid)
    if not duplicates:
        return []
    meta["ownerReferences"] = kept
    fmt = DUPLICATE_OWNER_REFERENCES_AFTER_ADMISSION_WARNING if after_mutating_admission else (
        DUPLICATE_OWNER_REFERENCES_WARNING
    )
    return [fmt.format(", ".join(duplicates))]


def _owner_ref_equal(a: Any, b: Any) -> bool:
    """Semantic equality of two ownerReferences (as typed Go structs)."""
    return _owner_ref_struct(a) == _owner_ref_struct(b)
