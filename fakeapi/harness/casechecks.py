"""What a fixture case's data must satisfy: the format schema's errors explained in a user's
words, and the checks only the case can tell (its bundles' operations and invariants, the kinds
its targets name, markers, times, services). :mod:`fakeapi.harness.loader` runs them on each
parsed case and places every problem at its file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from fakeapi.harness import formatschema as fs
from fakeapi.harness.bundles import Bundle, available_bundles, get_bundle
from fakeapi.harness.captures import case_capture_problems
from fakeapi.harness.selection import controller_selection_problems
from fakeapi.harness.suggest import did_you_mean
from fakeapi.harness.valuechecks import regex_problem, time_problem

#: A JSON path inside one case: keys and list indexes.
JsonPath = tuple[str | int, ...]


def dotted(path: Iterable[str | int]) -> str:
    """``steps[0].do[1].patch`` for a JSON path."""
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        elif re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$-]*", p):
            out += f".{p}" if out else p
        else:
            out += f'["{p}"]'
    return out or "the case"


# ---------------------------------------------------------------------------- the model


class _Detailed:
    """jsonschema's validator of a schema (what problem messages are made from), made when first asked for
    errors: a process whose cases all pass jsonschema-rs's check never imports jsonschema (issue 22: its
    import was a twentieth of collecting the corpus, in every pytest process)."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self._validator: Any = None

    def iter_errors(self, data: Any) -> Iterator[Any]:
        """The errors of ``data``, as ``jsonschema.Draft202012Validator(schema).iter_errors`` gives them."""
        v = self._validator
        if v is None:
            import jsonschema

            v = self._validator = jsonschema.Draft202012Validator(self.schema)
        return iter(v.iter_errors(data))


@lru_cache(maxsize=1)
def _validators() -> tuple[Any, Any]:
    schema = fs.shipped_schema()
    slow = _Detailed(schema)
    try:
        import jsonschema_rs

        fast = jsonschema_rs.validator_for(schema)
    except Exception:  # jsonschema-rs missing or refusing the schema: validate with jsonschema alone
        fast = None
    return fast, slow


_TYPE_WORDS = {"object": "a mapping", "array": "a list", "string": "a string", "integer": "an integer",
               "number": "a number", "boolean": "a boolean (true or false)", "null": "null"}


def _type_of(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null"


def _short(v: Any, width: int = 40) -> str:
    import json

    text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
    return text if len(text) <= width else text[: width - 1] + "…"


def _type_ok(types: Any, v: Any) -> bool:
    if types is None:
        return True
    ts = [types] if isinstance(types, str) else list(types)
    t = _type_of(v)
    return t in ts or (t == "integer" and "number" in ts)


def _branch_types(branch: dict[str, Any], defs: dict[str, Any]) -> Any:
    ref = branch.get("$ref")
    if isinstance(ref, str):
        branch = defs.get(ref.rpartition("/")[2], {})
    if "const" in branch:
        return _type_of(branch["const"])
    return branch.get("type")


def _words(types: Any) -> str:
    ts = [types] if isinstance(types, str) else list(types)
    words = [_TYPE_WORDS.get(t, t) for t in ts]
    return " or ".join(words)


def _where(schema: dict[str, Any]) -> str:
    title = schema.get("title")
    return f" in {'the' if title == 'case' else 'a' if title[0] not in 'aeiou' else 'an'} {title}" if title else ""


def explain_schema_error(err: Any, defs: dict[str, Any], out: list[tuple[JsonPath, bool, str]]) -> None:
    """Turn one jsonschema ``ValidationError`` into readable ``(path, at_key, message)`` problems."""
    path: JsonPath = tuple(err.absolute_path)
    v, schema, inst = err.validator, err.schema, err.instance
    if v in ("oneOf", "anyOf"):
        branches = err.validator_value
        if all(set(b) == {"required"} for b in branches):
            keys = ", ".join(f"`{r}`" for b in branches for r in b["required"])
            out.append((path, False, f"`{dotted(path)}` needs one of {keys}"))
            return
        fitting = [i for i, b in enumerate(branches) if _type_ok(_branch_types(b, defs), inst)]
        if len(fitting) == 1:
            sub = [e for e in err.context if e.relative_schema_path and e.relative_schema_path[0] == fitting[0]]
            if sub:
                for e in sub:
                    explain_schema_error(e, defs, out)
                return
        wanted = []
        for b in branches:
            t = _branch_types(b, defs)
            if t is not None and _words(t) not in wanted:
                wanted.append(_words(t))
        if len(fitting) != 1 and wanted:
            out.append((path, False, f"`{dotted(path)}` must be {' or '.join(wanted)}, got "
                                     f"{_TYPE_WORDS.get(_type_of(inst), 'null')} `{_short(inst)}`"))
        else:
            out.append((path, False, f"`{dotted(path)}`: {err.message}"))
        return
    if v == "additionalProperties":
        allowed = list(schema.get("properties", {}))
        patterns = list(schema.get("patternProperties", {}))
        for k in inst:
            if k in allowed or any(re.search(p, k) for p in patterns):
                continue
            hint = did_you_mean(k, allowed)
            if not hint:
                hint = " (valid keys: " + ", ".join(allowed) + ")"
            out.append(((*path, k), True, f"unknown key `{k}`{_where(schema)}{hint}"))
        return
    if v == "required":
        for k in err.validator_value:
            if isinstance(inst, dict) and k not in inst:
                out.append((path, False, f"missing required key `{k}`{_where(schema)}"))
        return
    if v == "type":
        if schema.get(fs.FORMAT_KEY) == "duration" and _type_of(inst) in ("integer", "number"):
            out.append((path, False, f"`{_short(inst)}` is not a Go duration: write `{_short(inst)}s` "
                                     "(like 500ms, 30s, 5m or 1h30m)"))
            return
        out.append((path, False, f"`{dotted(path)}` must be {_words(err.validator_value)}, got "
                                 f"{_TYPE_WORDS.get(_type_of(inst), 'null')} `{_short(inst)}`"))
        return
    if v == "pattern":
        fmt = schema.get(fs.FORMAT_KEY)
        if fmt == "duration":
            msg = f"`{_short(inst)}` is not a Go duration (write it like 500ms, 30s, 5m or 1h30m)"
        elif fmt == "time":
            msg = f"`{_short(inst)}` is not an RFC 3339 time (write it like 2026-01-01T00:00:00Z)"
        elif path and path[0] == "tags":
            msg = f"tag `{_short(inst)}` is not a valid marker name (letters, digits, _ and -)"
        else:
            msg = f"`{_short(inst)}` does not match {err.validator_value}"
        out.append((path, False, msg))
        return
    if v == "enum":
        opts = [str(o) for o in err.validator_value]
        out.append((path, False, f"`{_short(inst)}` is not one of {', '.join(opts)}{did_you_mean(str(inst), opts)}"))
        return
    if v == "const":
        out.append((path, False, f"`{dotted(path)}` must be `{_short(err.validator_value)}`"))
        return
    if v in ("minProperties", "maxProperties"):
        title = schema.get("title")
        if title == "expectation":
            found = ", ".join(f"`{k}`" for k in inst) or "none"
            msg = f"an expectation needs exactly one of {', '.join(fs.ASSERTIONS)}; found {found}"
        elif title == "operation":
            msg = "an operation needs one operation key (" + ", ".join(fs.CORE_OPERATIONS) + ", or <bundle>.<op>)"
        elif title == "settle":
            msg = "settle takes one of `reconciles`, `for` or `until_idle` (with `max`)"
        else:
            msg = f"`{dotted(path)}`: {err.message}"
        out.append((path, False, msg))
        return
    if v == "minLength" and inst == "":
        out.append((path, False, f"`{dotted(path)}` must not be empty"))
        return
    if v == "minimum" or v == "maximum":
        out.append((path, False, f"`{dotted(path)}` {err.message}"))
        return
    out.append((path, False, f"`{dotted(path)}`: {err.message}"))


def _schema_problems(validator: Any, data: Any, defs: dict[str, Any], base: JsonPath = ()
                     ) -> list[tuple[JsonPath, bool, str]]:
    out: list[tuple[JsonPath, bool, str]] = []
    for err in validator.iter_errors(data):
        explain_schema_error(err, defs, out)
    return [((*base, *p), k, m) for p, k, m in out]


#: A bundle's schemas (of its settings and operations) by id, each held, with its validators
#: (jsonschema-rs's, or None, and jsonschema's): made once per schema, not once per case.
_BUNDLE_VALIDATORS: dict[int, tuple[dict[str, Any], Any, Any]] = {}


def bundle_schema_problems(schema: dict[str, Any], data: Any, base: JsonPath) -> list[tuple[JsonPath, bool, str]]:
    """``data`` against a schema a bundle declares, problems explained as the format schema's are.

    As for the format schema: jsonschema-rs tells whether there is any problem, and jsonschema's errors
    (what the messages are made from) are asked for only when there is (issue 22).
    """
    hit = _BUNDLE_VALIDATORS.get(id(schema))
    if hit is None or hit[0] is not schema:
        try:
            import jsonschema_rs

            fast: Any = jsonschema_rs.validator_for(schema)
        except Exception:  # jsonschema-rs missing or refusing the schema: validate with jsonschema alone
            fast = None
        hit = _BUNDLE_VALIDATORS[id(schema)] = (schema, fast, _Detailed(schema))
    _, fast, slow = hit
    if fast is not None and fast.is_valid(data):
        return []
    return _schema_problems(slow, data, schema.get("$defs", {}), base)


# ---------------------------------------------------------------------------- semantic checks


def _builtin_kind_names() -> set[str]:
    try:
        from fakeapi.registry.builtin import BUILTINS
    except Exception:  # pragma: no cover - the server package is incomplete
        return {"Namespace", "Pod", "Secret", "ConfigMap", "ServiceAccount", "Event", "Role", "RoleBinding",
                "CustomResourceDefinition"}
    names: set[str] = set()
    for b in BUILTINS:
        names.update({b.kind, b.plural, b.kind.lower(), *b.short_names})
    return names


_BUILTIN_KINDS = _builtin_kind_names()
_BUNDLE_KINDS: dict[str, frozenset[str] | None] = {}


def _kind_names(k: Any) -> set[str]:
    return {k.kind, k.plural, k.kind.lower(), k.singular, *k.short_names}


def bundle_kinds(bundle: Bundle) -> frozenset[str] | None:
    """Kind names a bundle registers (``bundle.kinds`` if it declares them, else found by installing it
    once on a scratch server); None when they cannot be known."""
    if bundle.name in _BUNDLE_KINDS:
        return _BUNDLE_KINDS[bundle.name]
    declared = getattr(bundle, "kinds", None)
    result: frozenset[str] | None
    if declared:
        result = frozenset(declared)
    else:
        try:
            from fakeapi.host import Host
            from fakeapi.server.apiserver import APIServer

            api = APIServer()
            before = {id(k) for k in api.kinds.all()}
            bundle.install(Host(api, seed=0), {})
            names: set[str] = set()
            for k in api.kinds.all():
                if id(k) not in before:
                    names.update(_kind_names(k))
            result = frozenset(names)
        except Exception:  # no host yet, or the bundle needs settings: kinds not known statically
            result = None
    _BUNDLE_KINDS[bundle.name] = result
    return result


def _crd_kind_names(obj: Any) -> set[str]:
    if not isinstance(obj, dict) or obj.get("kind") != "CustomResourceDefinition":
        return set()
    spec = obj.get("spec")
    names = (spec.get("names") if isinstance(spec, dict) else None) or {}  # (issue 24: any shape, no crash)
    if not isinstance(names, dict):
        return set()
    out = {str(names[k]) for k in ("kind", "plural", "singular") if names.get(k)}
    if names.get("kind"):
        out.add(str(names["kind"]).lower())
    out.update(str(s) for s in names.get("shortNames") or [])
    return out


def _marker_problems(value: Any, path: JsonPath, out: list[tuple[JsonPath, bool, str]]) -> None:
    """Check the markers inside an expectation value."""
    if isinstance(value, list):
        for i, v in enumerate(value):
            _marker_problems(v, (*path, i), out)
        return
    if not isinstance(value, dict):
        return
    dollar = [k for k in value if k.startswith("$")]
    if dollar and len(dollar) != len(value):
        plain = [k for k in value if not k.startswith("$")]
        out.append((path, False, f"a marker map takes only `$` keys; found {', '.join(f'`{k}`' for k in plain)} "
                                 f"beside {', '.join(f'`{k}`' for k in dollar)}"))
        return
    for k, v in value.items():
        sub = (*path, k)
        if not k.startswith("$"):
            _marker_problems(v, sub, out)
            continue
        if k not in fs.MARKERS:
            hint = did_you_mean(k, fs.MARKERS) or " (markers: " + ", ".join(fs.MARKERS) + ")"
            out.append((sub, True, f"unknown marker `{k}`{hint}"))
        elif k in ("$absent", "$present") and not isinstance(v, bool):
            out.append((sub, False, f"`{k}` takes true or false"))
        elif k == "$regex":
            if not isinstance(v, str):
                out.append((sub, False, "`$regex` takes a string"))
            else:
                why = regex_problem(v)  # (issue 24: compiled with bounds, every failure a clean problem)
                if why is not None:
                    out.append((sub, False, why))
        elif k == "$len" and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            out.append((sub, False, "`$len` takes a non-negative integer"))
        elif k in ("$gte", "$lte") and (isinstance(v, bool) or not isinstance(v, (int, float, str))):
            out.append((sub, False, f"`{k}` takes a number, a quantity or a time"))
        elif k == "$contains":
            if not isinstance(v, (list, str)):
                out.append((sub, False, "`$contains` takes a list of items (or a substring)"))
            else:
                _marker_problems(v, sub, out)
        elif k == "$not":
            _marker_problems(v, sub, out)
        # $capture / $captured names and placement: captures.case_capture_problems


@dataclass
class _Ctx:
    bundles: list[Bundle]
    kinds: set[str] | None
    controllers: set[str] | None
    out: list[tuple[JsonPath, bool, str]]


def _check_kind(ctx: _Ctx, kind: Any, path: JsonPath, what: str) -> None:
    if ctx.kinds is None or not isinstance(kind, str):
        return
    name = kind.rpartition("/")[2]
    if name in ctx.kinds or name.lower() in ctx.kinds:
        return
    pretty = sorted(k for k in ctx.kinds if k[:1].isupper())
    hint = did_you_mean(name, pretty) or " (known kinds here: " + ", ".join(pretty) + ")"
    ctx.out.append((path, False, f"unknown kind `{name}` in {what}{hint}"))


def _check_target(ctx: _Ctx, target: Any, path: JsonPath, what: str) -> None:
    if not isinstance(target, dict):
        return
    _check_kind(ctx, target.get("kind"), (*path, "kind"), what)
    if "where" in target:
        _marker_problems(target["where"], (*path, "where"), ctx.out)


def _check_operation(ctx: _Ctx, op: dict[str, Any], path: JsonPath, hosted: dict[str, Bundle]) -> None:
    keys = [k for k in op if k not in fs.OPERATION_MODIFIERS]
    if len(keys) != 1:
        found = ", ".join(f"`{k}`" for k in keys) or "none"
        ctx.out.append((path, False, f"an operation needs exactly one operation key; found {found}"))
        return
    name = keys[0]
    arg = op[name]
    sub = (*path, name)
    is_bundle_op = "." in name and name not in fs.CORE_OPERATIONS
    if "as" in op and name not in fs.API_OPERATIONS:
        ctx.out.append(((*path, "as"), True, f"`as` applies to API operations ({', '.join(fs.API_OPERATIONS)}), "
                                             f"not to `{name}`"))
    if "error" in op and name not in fs.API_OPERATIONS and not is_bundle_op:
        ctx.out.append(((*path, "error"), True, f"`error` applies to API and bundle operations, not to `{name}`"))
    if "error" in op:
        _marker_problems(op["error"], (*path, "error"), ctx.out)
    actor = op.get("as")
    if isinstance(actor, str) and actor != "user" and name in fs.API_OPERATIONS and ctx.bundles \
            and ctx.controllers is not None and actor not in ctx.controllers:
        hint = did_you_mean(actor, sorted(ctx.controllers)) or (
            " (controllers here: " + (", ".join(sorted(ctx.controllers)) or "none") + ")")
        ctx.out.append(((*path, "as"), False, f"unknown controller `{actor}` in `as`{hint}"))
    if is_bundle_op:
        prefix = name.partition(".")[0]
        bundle = hosted.get(prefix)
        if bundle is None:
            ctx.out.append((path, True, f"operation `{name}` needs bundle `{prefix}` in `bundles`"
                                        + (did_you_mean(name, _all_ops(hosted)) if hosted else "")))
            return
        if name not in bundle.operations:
            ops = sorted(bundle.operations)
            hint = did_you_mean(name, ops) or (" (operations of " + prefix + ": " + (", ".join(ops) or "none") + ")")
            ctx.out.append((sub, True, f"unknown operation `{name}`{hint}"))
            return
        op_schema = bundle.operation_schemas.get(name)
        if op_schema is not None:
            ctx.out.extend(bundle_schema_problems(op_schema, arg, sub))
        if isinstance(arg, dict) and "kind" in arg:
            _check_target(ctx, arg, sub, f"`{name}`")
        return
    has_error = "error" in op
    if name in ("patch", "status", "delete") and not has_error:
        _check_target(ctx, arg, sub, f"a `{name}` target")
    elif name == "kubelet.exit" and isinstance(arg, dict):
        _check_target(ctx, {"kind": "Pod", **arg}, sub, "a `kubelet.exit` target")
    elif name == "crash" and isinstance(arg, str) and arg != "all" and ctx.controllers is not None \
            and arg not in ctx.controllers:
        hint = did_you_mean(arg, sorted(ctx.controllers)) or (
            " (controllers here: " + (", ".join(sorted(ctx.controllers)) or "none") + ", or all)")
        ctx.out.append((sub, False, f"unknown controller `{arg}` to crash{hint}"))
    elif name == "fault" and isinstance(arg, dict):
        effects = [k for k in ("error", "crash", "stale") if k in arg]
        if len(effects) != 1:
            found = ", ".join(f"`{k}`" for k in effects) or "none"
            ctx.out.append((sub, False, f"a fault rule needs exactly one of `error`, `crash`, `stale`; found {found}"))
        on = arg.get("on") or {}
        if isinstance(on, dict) and isinstance(on.get("kind"), str):
            _check_kind(ctx, on["kind"], (*sub, "on", "kind"), "a fault rule")


def _all_ops(hosted: dict[str, Bundle]) -> list[str]:
    return [o for b in hosted.values() for o in b.operations]


def _check_assertion(ctx: _Ctx, a: dict[str, Any], path: JsonPath) -> None:
    for key, arg in a.items():
        sub = (*path, key)
        if not isinstance(arg, dict):
            continue
        if key == "object":
            _check_kind(ctx, arg.get("kind"), (*sub, "kind"), "an `object` expectation")
            _marker_problems(arg, sub, ctx.out)
        elif key in ("absent", "count", "each"):
            _check_target(ctx, arg, sub, f"an `{key}` expectation" if key[0] in "aeiou" else f"a `{key}` expectation")
            if key == "each" and "match" in arg:
                _marker_problems(arg["match"], (*sub, "match"), ctx.out)
        elif key == "calls" and "kind" in arg:
            _check_kind(ctx, arg.get("kind"), (*sub, "kind"), "a `calls` expectation")


def _time_problems(data: dict[str, Any]) -> list[tuple[JsonPath, bool, str]]:
    """The clock and the given objects' creationTimestamps must be real dates (the schema checks their shape)."""
    found: list[tuple[JsonPath, bool, str]] = []
    places: list[tuple[JsonPath, Any]] = [(("clock",), data.get("clock"))]
    for i, obj in enumerate(data.get("given") or []):
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        if isinstance(meta, dict):
            places.append((("given", i, "metadata", "creationTimestamp"), meta.get("creationTimestamp")))
    for path, value in places:
        if isinstance(value, str):
            why = time_problem(value)
            if why is not None:
                found.append((path, False, why))
    return found


def _check_case_extras(ctx: _Ctx, data: dict[str, Any]) -> None:
    """Settle forms, and the kinds and API versions of objects in ``given`` and in creates (issue 23)."""
    from fakeapi.harness.names import api_version_problem, builtin_api_versions, crd_api_versions
    from fakeapi.harness.settle import settle_problems

    if "given_settle" in data:
        ctx.out.extend(settle_problems(data["given_settle"], ("given_settle",)))
    for si, s in enumerate(data.get("steps") or []):
        if isinstance(s, dict) and "settle" in s:
            ctx.out.extend(settle_problems(s["settle"], ("steps", si, "settle")))
    objects: list[tuple[JsonPath, Any, str]] = [(("given", i), o, "given") for i, o in enumerate(data.get("given") or [])]
    for si, s in enumerate(data.get("steps") or []):
        for oi, op in enumerate(s.get("do") or []):
            for key in ("create", "apply", "update"):
                if isinstance(op, dict) and key in op and "error" not in op:
                    objects.append((("steps", si, "do", oi, key), op[key], ("a" if key == "create" else "an") + f" `{key}`"))
    _check_services(ctx, data)
    served = dict(builtin_api_versions())
    for _, obj, _ in objects:
        crd = crd_api_versions(obj)
        if crd is not None:
            served[crd[0]] = crd[1]
    for path, obj, what in objects:
        if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str):
            continue
        before = len(ctx.out)
        _check_kind(ctx, obj["kind"], (*path, "kind"), what)
        if len(ctx.out) == before and isinstance(obj.get("apiVersion"), str):
            msg = api_version_problem(obj["kind"], obj["apiVersion"], served)
            if msg:
                ctx.out.append(((*path, "apiVersion"), False, f"{msg} in {what}"))


def _check_services(ctx: _Ctx, data: dict[str, Any]) -> None:
    """``on: {service, call}`` of fault rules against the services the hosted bundles declare."""
    declared: dict[str, tuple[str, ...]] = {}
    for b in ctx.bundles:
        declared.update(getattr(b, "services", None) or {})
    if not declared or len(ctx.bundles) != len(data.get("bundles") or []):
        return
    for si, s in enumerate(data.get("steps") or []):
        for oi, op in enumerate(s.get("do") or []):
            on = (op.get("fault") or {}).get("on") if isinstance(op, dict) and isinstance(op.get("fault"), dict) else None
            if not isinstance(on, dict) or not isinstance(on.get("service"), str):
                continue
            path: JsonPath = ("steps", si, "do", oi, "fault", "on")
            service = on["service"]
            if service not in declared:
                hint = did_you_mean(service, sorted(declared)) or " (services here: " + ", ".join(sorted(declared)) + ")"
                ctx.out.append(((*path, "service"), False, f"unknown service `{service}`{hint}"))
            elif isinstance(on.get("call"), str) and declared[service] and on["call"] not in declared[service]:
                calls = sorted(declared[service])
                hint = did_you_mean(on["call"], calls) or f" (calls of {service}: " + ", ".join(calls) + ")"
                ctx.out.append(((*path, "call"), False, f"unknown call `{on['call']}` of service `{service}`{hint}"))


def check_case(data: dict[str, Any]) -> list[tuple[JsonPath, bool, str]]:
    """The checks the schema cannot make: bundles, operations, invariants, kinds, markers, fault rules."""
    out: list[tuple[JsonPath, bool, str]] = []
    out.extend(_time_problems(data))  # (issue 24: clock values are real dates)
    hosted: dict[str, Bundle] = {}
    known_bundles: list[str] | None = None
    for i, name in enumerate(data.get("bundles") or []):
        try:
            b = get_bundle(name)
        except Exception as e:  # an installed bundle that fails to import
            out.append((("bundles", i), False, f"bundle `{name}` failed to load: {type(e).__name__}: {e}"))
            continue
        if b is None:
            if known_bundles is None:
                known_bundles = available_bundles()
            hint = did_you_mean(name, known_bundles) or (
                " (installed bundles: " + (", ".join(known_bundles) or "none") + ")")
            out.append((("bundles", i), False, f"unknown bundle `{name}`{hint}"))
            continue
        hosted[name] = b
    for name, settings in (data.get("services") or {}).items():
        b = hosted.get(name)
        if b is None:
            if name not in (data.get("bundles") or []):
                out.append((("services", name), True, f"`services.{name}` is for a bundle the case does not host"
                                                     + did_you_mean(name, list(hosted))))
            continue
        if b.settings_schema is not None:
            out.extend(bundle_schema_problems(b.settings_schema, settings, ("services", name)))
    all_invariants = [n for b in hosted.values() for n in b.invariants]
    for i, inv in enumerate(data.get("invariants") or []):
        if inv not in all_invariants and len(hosted) == len(data.get("bundles") or []):
            hint = did_you_mean(inv, all_invariants) or (
                " (invariants here: " + (", ".join(all_invariants) or "none") + ")")
            out.append((("invariants", i), False, f"unknown invariant `{inv}`{hint}"))

    # kinds known statically: built-in ones, CRDs in the case, the bundles' kinds
    static = set(_BUILTIN_KINDS)
    for obj in data.get("given") or []:
        static.update(_crd_kind_names(obj))
    for s in data.get("steps") or []:
        for op in s.get("do") or []:
            for key in ("create", "apply", "update"):
                static.update(_crd_kind_names(op.get(key)))
    kinds: set[str] | None = static
    controllers: set[str] | None = set()
    for b in hosted.values():
        bk = bundle_kinds(b)
        if bk is None:
            kinds = None
        elif kinds is not None:
            kinds.update(bk)
        if not b.controllers:
            controllers = None
        elif controllers is not None:
            controllers.update(b.controllers)
    if len(hosted) != len(data.get("bundles") or []):
        kinds = None
        controllers = None
    ctx = _Ctx(list(hosted.values()), kinds, controllers, out)
    _check_case_extras(ctx, data)  # issue 23: settle forms, kinds in given and creates (fakeapi/harness/names.py)
    for si, s in enumerate(data.get("steps") or []):
        for oi, op in enumerate(s.get("do") or []):
            _check_operation(ctx, op, ("steps", si, "do", oi), hosted)
        for ai, a in enumerate(s.get("expect") or []):
            _check_assertion(ctx, a, ("steps", si, "expect", ai))
    for ai, a in enumerate(data.get("expect") or []):
        _check_assertion(ctx, a, ("expect", ai))
    out.extend(case_capture_problems(data))
    out.extend(controller_selection_problems(data, hosted, controllers))
    return out


# ---------------------------------------------------------------------------- loading
