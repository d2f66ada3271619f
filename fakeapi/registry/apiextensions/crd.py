"""CustomResourceDefinition manifests turned into served kinds.

A CRD (apiextensions.k8s.io/v1) names a group, a scope, the kind's names and
one or more versions; each served version becomes a :class:`Kind` with its
structural schema, status subresource and selectable fields.
"""

from __future__ import annotations

import json
import marshal
from typing import Any

import orjson

from fakeapi.machinery.errors import FIELD_VALUE_INVALID, FIELD_VALUE_REQUIRED, Cause
from fakeapi.machinery.jsonutil import fast_copy
from fakeapi.registry.kinds import Kind

#: (CompiledSchema, fully typed) by a schema's serialized form: a process compiles each distinct
#: schema once, however many servers register the CRD (fixtures build a fresh server per case).
_CACHE: dict[bytes | str, tuple[Any, TypedFlag]] = {}


class TypedFlag:
    """:func:`fully_typed` of a schema as a truth value, worked out the first time it is asked.

    ``bool(flag)`` is the answer (``kind.extra["typed"]``): registering a CRD does not walk
    its schema for it; the first update of one of its objects does.
    """

    __slots__ = ("_schema", "_value")

    def __init__(self, schema: dict[str, Any]) -> None:
        self._schema: dict[str, Any] | None = schema
        self._value = False

    def __bool__(self) -> bool:
        if self._schema is not None:
            self._value = fully_typed(self._schema)
            self._schema = None
        return self._value

    def __repr__(self) -> str:
        return "TypedFlag(?)" if self._schema is not None else f"TypedFlag({self._value})"


def _schema_key(schema: dict[str, Any]) -> bytes | str:
    """A schema's exact serialized form: orjson (a large schema in a fraction of a millisecond),
    else marshal (version 2: no back-references), else JSON text."""
    try:
        return orjson.dumps(schema)
    except (orjson.JSONEncodeError, TypeError):
        pass
    try:
        return b"m" + marshal.dumps(schema, 2)
    except ValueError:
        return json.dumps(schema, separators=(",", ":"))


def _schema_facts(schema: dict[str, Any]) -> tuple[Any, TypedFlag]:
    """(the CompiledSchema, :func:`fully_typed` as a lazy flag) of a structural schema, made once per distinct schema,
    from a copy of its own (the schema passed in, a stored CRD's, is only serialised)."""
    key = _schema_key(schema)
    hit = _CACHE.get(key)
    if hit is None:
        from fakeapi.schema.compiled import CompiledSchema

        own = fast_copy(schema)  # (compiled from a copy: no kind holds a part of a stored CRD; see APIServer.install_crd)
        hit = _CACHE[key] = (CompiledSchema(own, structural=True), TypedFlag(own))
    return hit


def compiled_schema(schema: dict[str, Any]) -> Any:
    """The CompiledSchema of a structural schema, shared by every kind with the same schema (made from a copy of it)."""
    return _schema_facts(schema)[0]


#: Facts of stored CRD schemas by the schema object's identity (see :meth:`SchemaFacts.facts`).
_BY_IDENTITY: dict[int, tuple[dict[str, Any], tuple[Any, TypedFlag]]] = {}
_BY_IDENTITY_MAX = 256


class SchemaFacts:
    """The facts of one served version's schema (:func:`_schema_facts`), looked up when first needed.

    Registering a CRD does not serialize its schema (the cache key: a large schema, pod templates
    inlined, costs about a millisecond) nor look it up: the kind's ``compiled`` (its ``loader`` is
    :meth:`load`) and ``extra["typed"]`` (this object, as a truth value) do, on first use.
    """

    __slots__ = ("_facts", "_typed", "schema")

    def __init__(self, schema: dict[str, Any]) -> None:
        #: The stored CRD's schema: only looked up by identity and serialised (:meth:`facts`), never handed out.
        self.schema = schema
        self._facts: tuple[Any, TypedFlag] | None = None
        self._typed: bool | None = None  # (the truth value, once asked: every update asks)

    def facts(self) -> tuple[Any, TypedFlag]:
        """(the shared CompiledSchema, the shared :class:`TypedFlag`) of the schema.

        The schema is a stored CRD's, never mutated: when the very same schema object was looked
        up before (a CRD installed from a snapshot in every server: :mod:`fakeapi.registry.apiextensions.crdsnapshot`),
        its facts are found by identity, without serialising it.
        """
        facts = self._facts
        if facts is None:
            schema = self.schema
            hit = _BY_IDENTITY.get(id(schema))
            if hit is not None and hit[0] is schema:
                facts = hit[1]
            else:
                facts = _schema_facts(schema)
                if len(_BY_IDENTITY) >= _BY_IDENTITY_MAX:
                    _BY_IDENTITY.clear()
                _BY_IDENTITY[id(schema)] = (schema, facts)  # (the schema kept alive: its id stays its own)
            self._facts = facts
        return facts

    def load(self) -> tuple[Any, Any, Any]:
        """The Kind loader: (schema, compiled schema, no Go type).

        The schema is the compiled one's: equal to this version's, and the same object for every
        kind made from an equal schema (in every server), so that what is derived from it by
        identity (the typed walks' types: :func:`fakeapi.machinery.typedfields.root_type`) is made once.
        """
        compiled = self.facts()[0]
        return compiled.schema, compiled, None

    def __bool__(self) -> bool:
        typed = self._typed
        if typed is None:
            typed = self._typed = bool(self.facts()[1])
        return typed

    def __eq__(self, other: object) -> bool:
        # kinds made from equal schemas compare equal (they share the cached facts)
        if not isinstance(other, SchemaFacts):
            return NotImplemented
        return self is other or self.facts()[1] is other.facts()[1]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "SchemaFacts(?)" if self._facts is None else f"SchemaFacts(typed={self._facts[1]!r})"


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def validate_crd(crd: dict[str, Any], old: dict[str, Any] | None = None) -> list[Cause]:
    """The checks kube-apiserver makes that a fixture author is likely to trip on.

    ``old``: the stored CRD an update replaces. Then the name is not checked against the
    names (it cannot change), and ``validateCustomResourceDefinitionSpecUpdate``'s rules apply:
    ``spec.group`` and ``spec.names.plural`` never change, ``spec.scope`` and ``spec.names.kind``
    not once the CRD is Established.
    """
    causes: list[Cause] = []
    spec = _mapping(crd.get("spec"))
    group = spec.get("group") or ""
    names = _mapping(spec.get("names"))
    if not group:
        causes.append(Cause(FIELD_VALUE_REQUIRED, "Required value", "spec.group"))
    for key in ("plural", "kind"):
        if not names.get(key):
            causes.append(Cause(FIELD_VALUE_REQUIRED, "Required value", f"spec.names.{key}"))
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        causes.append(Cause("FieldValueNotSupported",
                            f'Unsupported value: "{spec.get("scope", "")}": supported values: "Cluster", "Namespaced"',
                            "spec.scope"))
    versions = spec.get("versions") or []
    if not versions:
        causes.append(Cause(FIELD_VALUE_REQUIRED, "Required value", "spec.versions"))
    elif sum(1 for v in versions if isinstance(v, dict) and v.get("storage")) != 1:
        causes.append(Cause(FIELD_VALUE_INVALID, "Invalid value: " + repr(versions and "versions")
                            + ": must have exactly one version marked as storage version", "spec.versions"))
    if old is not None:
        return causes + _crd_update_causes(spec, _mapping(old.get("spec")), _established(old))
    name = _mapping(crd.get("metadata")).get("name", "")
    if names.get("plural") and group and name != f"{names['plural']}.{group}":
        causes.append(Cause(FIELD_VALUE_INVALID,
                            f'Invalid value: "{name}": must be spec.names.plural+"."+spec.group', "metadata.name"))
    return causes


def _crd_update_causes(spec: dict[str, Any], old_spec: dict[str, Any], established: bool) -> list[Cause]:
    names, old_names = _mapping(spec.get("names")), _mapping(old_spec.get("names"))
    checks: list[tuple[str, Any, Any]] = []
    if established:  # they shape the storage
        checks += [("spec.scope", spec.get("scope"), old_spec.get("scope")),
                   ("spec.names.kind", names.get("kind"), old_names.get("kind"))]
    checks += [("spec.group", spec.get("group"), old_spec.get("group")),  # they make the resource's name
               ("spec.names.plural", names.get("plural"), old_names.get("plural"))]
    return [Cause(FIELD_VALUE_INVALID, f"Invalid value: {json.dumps(new or '')}: field is immutable", path)
            for path, new, was in checks if (new or "") != (was or "")]


def _established(crd: dict[str, Any]) -> bool:
    conditions = _mapping(crd.get("status")).get("conditions") or []
    return any(isinstance(c, dict) and c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def fully_typed(schema: dict[str, Any]) -> bool:
    """True when every node of a structural schema has a fixed JSON type (metadata aside).

    Then two objects that both validate can hold a ``true`` and a ``1`` at the same place
    only if they differ elsewhere too, so comparing them with ``==`` is exact.
    """
    props = schema.get("properties") or {}
    return all(_typed_node(v) for k, v in props.items() if k != "metadata") and _typed_node(
        {k: v for k, v in schema.items() if k != "properties"})


def _typed_node(node: Any) -> bool:
    if not isinstance(node, dict):
        return False
    if node.get("x-kubernetes-preserve-unknown-fields") or node.get("additionalProperties") is True:
        return False
    if not node.get("type") and not node.get("x-kubernetes-int-or-string"):
        return False
    for key in ("properties", "patternProperties"):
        for v in (node.get(key) or {}).values():
            if not _typed_node(v):
                return False
    for key in ("items", "additionalProperties"):
        sub = node.get(key)
        if isinstance(sub, dict) and not _typed_node(sub):
            return False
    for key in ("allOf", "anyOf", "oneOf"):
        for v in node.get(key) or []:
            if v.get("type") and not _typed_node(v):
                return False
    return True


def kinds_from_crd(crd: dict[str, Any]) -> list[Kind]:
    """One Kind per served version of the CRD (storage version first)."""
    spec = crd["spec"]
    names = spec["names"]
    out: list[Kind] = []
    versions = sorted(spec.get("versions") or [], key=lambda v: not v.get("storage"))
    for v in versions:
        if not v.get("served", True):
            continue
        schema = ((v.get("schema") or {}).get("openAPIV3Schema")) or {
            "type": "object", "x-kubernetes-preserve-unknown-fields": True}
        subresources = v.get("subresources") or spec.get("subresources") or {}
        selectable = tuple(
            str(f.get("jsonPath", "")).lstrip(".") for f in (v.get("selectableFields") or []) if f.get("jsonPath")
        )
        facts = SchemaFacts(schema)
        out.append(
            Kind(
                group=spec["group"],
                version=v["name"],
                kind=names["kind"],
                plural=names["plural"],
                singular=names.get("singular") or names["kind"].lower(),
                list_kind=names.get("listKind") or names["kind"] + "List",
                short_names=tuple(names.get("shortNames") or ()),
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                status_subresource="status" in subresources,
                selectable_fields=selectable,
                crd_name=crd["metadata"]["name"],
                extra={"typed": facts, "scale": fast_copy(subresources.get("scale"))},  # (no part of the CRD)
                loader=facts.load,  # schema and compiled (and the cache lookup) on first use
            )
        )
    return out


def storage_version(spec: dict[str, Any]) -> str:
    """The name of a CRD spec's storage version (the first version when none is marked)."""
    versions = spec.get("versions") or []
    for v in versions:
        if v.get("storage"):
            return str(v.get("name"))
    return str(versions[0].get("name")) if versions else "v1"
