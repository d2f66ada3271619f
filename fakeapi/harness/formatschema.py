"""The JSON Schema of the fixture format (docs/FIXTURES.md), built in Python.

The schema is *closed*: every harness-owned mapping lists its keys and
rejects others, so a typo is a collection error. Kubernetes objects and
partial expectations stay open (any field of any kind may appear there).

:func:`build_schema` returns the generic schema, the one shipped in the
package as ``format.schema.json`` (regenerate it with ``fakeapi schema -o
fakeapi/harness/format.schema.json``; a test keeps the two in step). With
``bundles=True`` the schema also lists the operations, settings and
invariants of every installed bundle, which gives editors completion for
them (``fakeapi schema --bundles``).

Editor support: put this first line in a fixture file::

    # yaml-language-server: $schema=<path or URL of the schema>

``fakeapi schema -o fixtures/fixture.schema.json`` writes the schema next to
the fixtures; the YAML language server (VS Code's YAML extension, Neovim's
yamlls, Helix, ...) then completes keys and flags mistakes as you type. The
path is relative to the YAML file.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

SCHEMA_ID = "urn:fakeapi:fixture-format:v1"
SCHEMA_FILE = Path(__file__).with_name("format.schema.json")

#: A Go ``time.Duration`` string: ``500ms``, ``30s``, ``5m``, ``1h30m`` (or ``0``).
DURATION_PATTERN = r"^[+-]?(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$"
#: An RFC 3339 timestamp.
TIME_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$"
#: ``<bundle>.<operation>`` keys of bundle operations (``arc.queue_jobs``).
BUNDLE_OP_PATTERN = r"^[a-z][a-z0-9_-]*\.[A-Za-z_][A-Za-z0-9_-]*$"
#: Tags become pytest markers.
TAG_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]*$"

#: Keys of a case, in the order the contract lists them.
CASE_KEYS = ("name", "description", "tags", "bundles", "controllers", "clock", "seed", "services", "given",
             "given_settle", "max_repeated_errors", "invariants", "steps", "expect", "robustness")
#: The core operations (besides bundle operations ``<bundle>.<op>``).
CORE_OPERATIONS = ("create", "apply", "server_side_apply", "update", "patch", "status", "delete", "advance", "crash",
                   "fault", "clear_faults", "kubelet.exit")
#: Keys an operation item may carry besides its operation.
OPERATION_MODIFIERS = ("as", "error")
#: Operations that are API requests (``as`` and ``error`` apply to them).
API_OPERATIONS = ("create", "apply", "server_side_apply", "update", "patch", "status", "delete")
ASSERTIONS = ("object", "absent", "count", "each", "calls")
MARKERS = ("$absent", "$present", "$regex", "$len", "$gte", "$lte", "$not", "$contains", "$exact", "$capture",
           "$captured")
FAULT_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "write", "*")
FAULT_REASONS = ("NotFound", "Conflict", "AlreadyExists", "Invalid", "Forbidden", "InternalError",
                 "ServerTimeout", "TooManyRequests", "BadRequest", "Unauthorized", "Gone", "Expired",
                 "ServiceUnavailable", "Timeout")
PICKS = ("one", "all", "oldest", "newest")
PROPAGATION_POLICIES = ("Background", "Foreground", "Orphan")

#: Custom annotation on schema nodes, read by the loader to word its errors.
FORMAT_KEY = "x-fakeapi-format"


def _duration(description: str) -> dict[str, Any]:
    return {"type": "string", "pattern": DURATION_PATTERN, FORMAT_KEY: "duration", "description": description}


def _str_or_list(description: str) -> dict[str, Any]:
    return {"description": description,
            "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}


def _target_properties(*, pick: bool = True) -> dict[str, Any]:
    props: dict[str, Any] = {
        "kind": {"type": "string", "minLength": 1, FORMAT_KEY: "kind",
                 "description": "Kind of the objects (EphemeralRunner); a plural or group/version/Kind also works."},
        "apiVersion": {"type": "string", "description": "Optional when the kind is unambiguous."},
        "namespace": {"type": "string", "description": "Optional for cluster-scoped kinds."},
        "name": {"type": "string", "description": "One object by name ..."},
        "selector": {
            "description": "... or a label selector: a string (\"app=x,tier in (a)\") or a {key: value} map.",
            "oneOf": [{"type": "string"}, {"type": "object", "additionalProperties": {"type": "string"}}],
        },
        "where": {"type": "object", "description": "... and/or a partial match (same rules as expectations)."},
    }
    if pick:
        props["pick"] = {
            "description": "one (default: exactly one must match) | all | oldest | newest | index in creation order",
            "oneOf": [{"type": "string", "enum": list(PICKS)}, {"type": "integer", "minimum": 0}],
        }
    return props


def _closed(title: str, properties: dict[str, Any], *, required: list[str] | None = None,
            description: str = "", **extra: Any) -> dict[str, Any]:
    node: dict[str, Any] = {"title": title, "type": "object", "properties": properties,
                            "additionalProperties": False}
    if required:
        node["required"] = required
    if description:
        node["description"] = description
    node.update(extra)
    return node


def _counts() -> dict[str, Any]:
    return {
        "equals": {"type": "integer", "minimum": 0, "description": "Exactly this many."},
        "min": {"type": "integer", "minimum": 0, "description": "At least this many."},
        "max": {"type": "integer", "minimum": 0, "description": "At most this many."},
    }


_COUNT_REQUIRED = {"anyOf": [{"required": ["equals"]}, {"required": ["min"]}, {"required": ["max"]}]}


def _defs() -> dict[str, Any]:
    obj = {
        "title": "object",
        "type": "object",
        "description": "A Kubernetes object as a user would write it.",
        "required": ["apiVersion", "kind", "metadata"],
        "properties": {
            "apiVersion": {"type": "string", "minLength": 1},
            "kind": {"type": "string", "minLength": 1},
            "metadata": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "generateName": {"type": "string"},
                    "namespace": {"type": "string"},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
                    "finalizers": {"type": "array", "items": {"type": "string"}},
                    "ownerReferences": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["kind", "name"],
                            "description": "uid may be left out: the harness fills in the uid of the named owner.",
                        },
                    },
                    "creationTimestamp": {"type": "string", "pattern": TIME_PATTERN, FORMAT_KEY: "time"},
                    "resourceVersion": {"type": "string"},
                },
            },
        },
    }
    target = _closed("target", _target_properties(), required=["kind"],
                     description="Existing objects: kind, namespace, name | selector, where, pick.")
    expect_object = {
        "title": "object expectation",
        "type": "object",
        "description": "A partial object: the object with this kind, namespace and name exists and matches.",
        "required": ["kind", "metadata"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string", "minLength": 1, FORMAT_KEY: "kind"},
            "metadata": {"type": "object", "required": ["name"],
                         "properties": {"name": {"type": "string"}, "namespace": {"type": "string"}}},
        },
    }
    fault = _closed(
        "fault rule",
        {
            "on": _closed("fault match", {
                "verb": {"description": "get, list, watch, create, update, patch, delete, write or *",
                         "oneOf": [{"type": "string", "enum": list(FAULT_VERBS)},
                                   {"type": "array", "items": {"type": "string", "enum": list(FAULT_VERBS)}}]},
                "kind": _str_or_list("Kind of the calls."),
                "name": _str_or_list("Object name."),
                "namespace": _str_or_list("Namespace."),
                "subresource": _str_or_list("Subresource (status)."),
                "actor": _str_or_list("The calling controller's name (or user)."),
                "service": {"type": "string", "description": "A bundle's simulated service (actions)."},
                "call": {"type": "string", "description": "A call of that service (RemoveRunner)."},
            }, description="Which calls the rule affects; every key optional."),
            "skip": {"type": "integer", "minimum": 0, "description": "Let this many matching calls through first."},
            "times": {"description": "Affect this many (default 1), or always.",
                      "oneOf": [{"type": "integer", "minimum": 1}, {"type": "string", "enum": ["always"]}]},
            "error": {
                "description": "A reason (Conflict, NotFound, ...) or {code, reason, message}.",
                "oneOf": [
                    {"type": "string", "enum": list(FAULT_REASONS)},
                    _closed("fault error", {"code": {"type": "integer", "minimum": 100, "maximum": 599},
                                            "reason": {"type": "string"}, "message": {"type": "string"},
                                            "details": {"type": "object"}}),
                ],
            },
            "crash": {"type": "string", "enum": ["before", "after"],
                      "description": "The calling controller crashes before or after the call."},
            "stale": {"type": "boolean", "description": "Cache reads serve the object as it was before its last change."},
        },
        description="A fault rule: on, skip, times, and one of error, crash, stale.",
    )
    # A rule for a bundle's simulated service (on.service) may name that service's own errors
    # (JobStillRunning); an API rule's error reason must be one the API server has.
    fault["properties"]["error"]["oneOf"][0] = {"type": "string", "minLength": 1}
    fault["if"] = {"properties": {"on": {"required": ["service"]}}, "required": ["on"]}
    fault["else"] = {"properties": {"error": {"oneOf": [{"type": "string", "enum": list(FAULT_REASONS)},
                                                        {"type": "object"}]}}}
    patch_op = _closed("patch", {
        **_target_properties(),
        "type": {"type": "string", "enum": ["merge", "json", "strategic"], "description": "Default merge."},
        "patch": {"type": ["object", "array"], "description": "The patch body."},
        "subresource": {"type": "string", "description": "status, or none."},
    }, required=["kind", "patch"])
    ssa_op = _closed("server_side_apply", {
        "object": {"$ref": "#/$defs/object",
                   "description": "The applied configuration: only the fields this manager means to own."},
        "fieldManager": {"type": "string", "minLength": 1,
                         "description": "The field manager; default: who performs it (`as`)."},
        "force": {"type": "boolean",
                  "description": "Take the fields other managers own instead of failing with a 409 conflict."},
        "subresource": {"type": "string", "description": "status, or none."},
    }, required=["object"], description="Server-side apply (creates the object when it is missing).")
    status_op = _closed("status", {
        **_target_properties(),
        "status": {"type": "object", "description": "A partial status, merge-patched on the status subresource."},
    }, required=["kind", "status"])
    delete_op = _closed("delete", {
        **_target_properties(),
        "propagationPolicy": {"description": "Background, Foreground or Orphan (other values reach the server, "
                                             "which refuses them)",
                              "anyOf": [{"type": "string", "enum": list(PROPAGATION_POLICIES)}, {"type": "string"}]},
    }, required=["kind"])
    exit_op = _closed("kubelet.exit", {
        **_target_properties(),
        "kind": {"type": "string", "minLength": 1, FORMAT_KEY: "kind", "description": "Default Pod."},
        "container": {"type": "string", "description": "The container that exits."},
        "code": {"type": "integer", "description": "Its exit code."},
    }, required=["container", "code"], description="A container of the target pods exits with this code.")
    operation = {
        "title": "operation",
        "type": "object",
        "description": "Exactly one operation key, plus optionally `as` and `error`.",
        "properties": {
            "create": {"$ref": "#/$defs/object", "description": "POST the object."},
            "apply": {"$ref": "#/$defs/object",
                      "description": "Create if absent, else JSON merge patch of the given fields (status ignored)."},
            "server_side_apply": ssa_op,
            "update": {"$ref": "#/$defs/object",
                       "description": "PUT; takes the stored resourceVersion unless the object sets one."},
            "patch": patch_op,
            "status": status_op,
            "delete": delete_op,
            "advance": _duration("Move the virtual clock (controllers run as time passes unless settle: false)."),
            "crash": {"type": "string", "minLength": 1,
                      "description": "A controller name, or all: it loses its memory and restarts."},
            "fault": {"$ref": "#/$defs/fault"},
            "clear_faults": {"const": True, "description": "Remove all fault rules."},
            "kubelet.exit": exit_op,
            "as": {"type": "string", "minLength": 1,
                   "description": "Who performs it: user (default), or a controller name (writes via the Go codec)."},
            "error": {"type": "object",
                      "description": "The operation must fail with this error (partial match on the Status body)."},
        },
        "patternProperties": {BUNDLE_OP_PATTERN: {"description": "An operation a bundle defines."}},
        "additionalProperties": False,
        "minProperties": 1,
    }
    settle = {
        "description": "true (default): run controllers until idle; false: don't; {reconciles: N}; {for: 5m}; "
                       "{until_idle: true, max: 10m}.",
        "oneOf": [
            {"type": "boolean"},
            _closed("settle", {
                "reconciles": {"type": "integer", "minimum": 1, "description": "At most N reconciles."},
                "for": _duration("Run with the clock for this long."),
                "until_idle": {"type": "boolean", "description": "Run until nothing is due (with `max`: at most "
                                                                 "that long, for controllers that poll)."},
                "max": _duration("With until_idle: the most virtual time the settle may take."),
            }, minProperties=1, maxProperties=2),
        ],
    }
    assertion = _closed(
        "expectation",
        {
            "object": {"$ref": "#/$defs/expectObject"},
            "absent": {"$ref": "#/$defs/target", "description": "No object matches the target."},
            "count": {**_closed("count", {**_target_properties(), **_counts()}, required=["kind"]),
                      **_COUNT_REQUIRED},
            "each": _closed("each", {
                **_target_properties(),
                "match": {"description": "Every matching object matches this partial object."},
                "allow_none": {"type": "boolean", "description": "Allow zero matching objects."},
            }, required=["kind", "match"]),
            "calls": {**_closed("calls", {
                "actor": {"type": "string"},
                "verb": {"type": "string"},
                "kind": {"type": "string", FORMAT_KEY: "kind"},
                "namespace": {"type": "string"},
                "name": {"type": "string"},
                "subresource": {"type": "string"},
                "code": {"type": "integer"},
                "reason": {"type": "string"},
                "since": {"type": "string", "enum": ["step", "case"], "description": "Default step."},
                **_counts(),
            }, description="That many API calls in the trace match."), **_COUNT_REQUIRED},
        },
        description="Exactly one of object, absent, count, each, calls.",
        minProperties=1,
        maxProperties=1,
    )
    step = _closed("step", {
        "name": {"type": "string"},
        "do": {"type": "array", "items": {"$ref": "#/$defs/operation"}, "description": "Operations, in order."},
        "settle": {"$ref": "#/$defs/settle"},
        "expect": {"type": "array", "items": {"$ref": "#/$defs/assertion"},
                   "description": "Assertions after this step settled."},
    })
    return {
        "object": obj,
        "marker": _marker_def(),
        "target": target,
        "expectObject": expect_object,
        "fault": fault,
        "operation": operation,
        "assertion": assertion,
        "step": step,
        "settle": settle,
    }


def _marker_def() -> dict[str, Any]:
    """The markers an expectation value may be (a map whose only key starts with ``$``)."""
    from fakeapi.harness.captures import NAME_PATTERN

    name = {"type": "string", "pattern": NAME_PATTERN}
    return _closed("marker", {
        "$absent": {"type": "boolean", "description": "The key is absent or zero."},
        "$present": {"type": "boolean", "description": "The key is present."},
        "$regex": {"type": "string", "description": "The value matches this regular expression."},
        "$len": {"type": "integer", "minimum": 0, "description": "A list, map or string of this length."},
        "$gte": {"type": ["number", "string"], "description": "At least this number, quantity or time."},
        "$lte": {"type": ["number", "string"], "description": "At most this number, quantity or time."},
        "$not": {"description": "Anything that does not match this value."},
        "$contains": {"type": ["array", "string"], "description": "These items in any order (or a substring)."},
        "$exact": {"description": "This value, without partial matching below here."},
        "$capture": {**name, "description": "The value must be present; it is remembered under this name for the "
                                            "rest of the case (only in `object` and `each.match`)."},
        "$captured": {**name, "description": "Equals the value remembered under this name; "
                                             "{$not: {$captured: NAME}} says it changed."},
    }, description="A marker: a map whose only key starts with $.", minProperties=1, maxProperties=1)


def build_schema(*, bundles: bool = False) -> dict[str, Any]:
    """The JSON Schema of one fixture case (one YAML document).

    ``bundles=True`` adds the operations, services and invariants of every
    installed bundle (for editor completion); the loader checks those
    separately, per case, against the bundles the case hosts.
    """
    defs = _defs()
    case = _closed(
        "case",
        {
            "name": {"type": "string", "minLength": 1, "description": "Required; unique in its file."},
            "description": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string", "pattern": TAG_PATTERN},
                     "description": "Each becomes a pytest marker."},
            "bundles": {"type": "array", "items": {"type": "string"},
                        "description": "Controllers and simulators to host (default: the API server alone)."},
            "controllers": {"type": "array", "items": {"type": "string", "minLength": 1},
                            "description": "Run only these of the bundles' controllers (default: all of them); "
                                           "the bundles' simulators still run."},
            "clock": {"type": "string", "pattern": TIME_PATTERN, FORMAT_KEY: "time",
                      "description": "Start of virtual time (default 2026-01-01T00:00:00Z)."},
            "seed": {"type": "integer", "description": "Seeds generated names and queue tie-breaks."},
            "services": {"type": "object", "additionalProperties": {"type": "object"},
                         "description": "Initial state of each bundle's simulators, by bundle name."},
            "given": {"type": "array", "items": {"$ref": "#/$defs/object"},
                      "description": "Objects stored before step 1, as a user would create them."},
            "given_settle": {"$ref": "#/$defs/settle",
                             "description": "How the controllers settle after given (a settle form; default true)."},
            "max_repeated_errors": {"type": "integer", "minimum": 0,
                                    "description": "A key whose reconcile fails this many times in a row with the "
                                                   "same error ends the case (default 5; 0: never)."},
            "invariants": {"type": "array", "items": {"type": "string"},
                           "description": "Named checks run after every reconcile."},
            "steps": {"type": "array", "items": {"$ref": "#/$defs/step"}},
            "expect": {"type": "array", "items": {"$ref": "#/$defs/assertion"},
                       "description": "Assertions after the last step settled."},
            "robustness": _closed("robustness", {
                "crash_after_each_write": {"type": "boolean"},
                "conflict_on_each_write": {"type": "boolean"},
            }),
        },
        required=["name"],
    )
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **case,
        "description": "One fakeapi fixture case (a YAML document); the format is docs/FIXTURES.md.",
        "$defs": defs,
    }
    if bundles:
        _add_bundles(schema)
    return schema


def _add_bundles(schema: dict[str, Any]) -> None:
    from fakeapi.harness.bundles import available_bundles, get_bundle

    op = schema["$defs"]["operation"]
    names = available_bundles()
    schema["properties"]["bundles"]["items"]["enum"] = names
    invariants: list[str] = []
    for name in names:
        try:
            b = get_bundle(name)
        except Exception:  # an installed bundle that fails to import: leave it out of the schema
            continue
        if b is None:
            continue
        for op_name in b.operations:
            op["properties"][op_name] = dict(b.operation_schemas.get(op_name) or {"description": f"{name} operation"})
        if b.settings_schema is not None:
            schema["properties"]["services"].setdefault("properties", {})[name] = b.settings_schema
        invariants.extend(b.invariants)
    if invariants:
        schema["properties"]["invariants"]["items"]["enum"] = sorted(invariants)


def schema_text(*, bundles: bool = False) -> str:
    """The schema as the JSON text written to ``format.schema.json``."""
    return json.dumps(build_schema(bundles=bundles), indent=2, ensure_ascii=False) + "\n"


@lru_cache(maxsize=1)
def shipped_schema() -> dict[str, Any]:
    """The schema shipped in the package (``format.schema.json``), built when the file is missing."""
    try:
        data: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
        return data
    except FileNotFoundError:
        return build_schema()
