"""Running one case: a fresh API server and host, ``given``, the steps, the expectations.

:func:`run_case` is the whole job (docs/FIXTURES.md):

1. a new :class:`~fakeapi.server.apiserver.APIServer` (clock and seed from the case)
   and a new :class:`~fakeapi.host.Host`; each bundle of the case installed
   with its ``services`` settings; invariants hooked after every reconcile;
2. ``given`` objects created as a user would (ownerReference uids filled in
   from the named owners, ``creationTimestamp`` honoured, ``status`` stored
   through the status subresource where the kind has one), then the
   controllers settle;
3. each step: its operations in order (``as``, ``error``), its ``settle``,
   its expectations;
4. the final expectations.

Nothing is shared between runs, so any case can run on any xdist worker.
Everything the harness reads to resolve targets and check expectations is
read straight from the store (:class:`~fakeapi.harness.targets.StateReader`):
those reads are not API calls, so they never show in the trace, in
``calls:`` counts or in fault-rule counts.

``calls: {since: case}`` counts from the moment ``given`` is stored (so the
setup's own creates are not counted; what controllers do in the first settle
is). ``since: step`` (the default) counts from the start of the step; in the
final expectations, from the start of the last step.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from fakeapi.harness.bundles import Bundle, OpContext, get_bundle
from fakeapi.harness.captures import Captures, contains_capture
from fakeapi.harness.loader import Case, JsonPath, dotted
from fakeapi.harness.matcher import Mismatch, kind_shape, match, problem
from fakeapi.harness.names import kind_hint
from fakeapi.harness.selection import select_controllers
from fakeapi.harness.settle import (
    DEFAULT_BUDGET,
    DEFAULT_MAX_REPEATED_ERRORS,
    RepeatedError,
    RepeatedErrorWatch,
    run_settle,
)
from fakeapi.harness.targets import StateReader, TargetError, describe, object_id, resolve
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.jsonutil import fast_copy
from fakeapi.server.clock import Clock, parse_duration
from fakeapi.server.faults import ControllerCrash, FaultRule

Obj = dict[str, Any]

@dataclass
class Variant:
    """A robustness variant: the plain case with a crash or a conflict injected on controller write k."""

    mode: str  # "crash" or "conflict"
    index: int  # 1-based number of the controller write
    rule: dict[str, Any]
    #: The write as the plain run made it (``patch EphemeralRunner/status ci/x by ephemeralrunner``).
    write: str = ""

    @property
    def name(self) -> str:
        """``crash@3`` / ``conflict@3``."""
        return f"{self.mode}@{self.index}"

    def describe(self) -> str:
        """One line for reports."""
        what = "the writing controller crashes right after" if self.mode == "crash" else "409 Conflict on"
        return f"{what} controller write {self.index}" + (f": {self.write}" if self.write else "")


@dataclass
class Failure:
    """One failure of a run, with the phase it happened in (``after step 2 (name)``, ``final expectations``)."""

    phase: str
    mismatch: Mismatch
    #: An expectation (``expect:`` of a step or of the case) did not hold, as opposed to the run going wrong.
    expectation: bool = False


@dataclass
class CaseResult:
    """What running a case gave: failures, the server and host (for reports, recording, timelines), figures."""

    case: Case
    variant: Variant | None = None
    failures: list[Failure] = field(default_factory=list)
    api: Any = None
    host: Any = None
    reconciles: int = 0
    calls: int = 0
    elapsed: timedelta = timedelta(0)
    #: Why the run stopped before the end (an operation failed, a hot loop), or "".
    aborted: str = ""
    #: Trace position when ``given`` was stored.
    case_mark: int = 0
    #: With ``record_objects``: call seq -> (the object before, after) each API write (None: absent).
    objects: dict[int, tuple[Obj | None, Obj | None]] = field(default_factory=dict)
    #: With ``record_objects``: call seq -> what a fault rule did to that call (``error Conflict``, ``crash after``).
    injected: dict[int, str] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """True when nothing failed."""
        return not self.failures and not self.aborted

    def controller_writes(self) -> list[Any]:
        """The API writes made by controllers (from reconciles) during the run, in order."""
        if self.api is None:
            return []
        return [c for c in self.api.trace.calls if c.wrote and c.reconcile is not None]


class _Abort(Exception):
    """Stop the case: a failure was recorded and nothing after it would be meaningful."""


class _UserWriter:
    """Writes as the user: JSON as written, actor ``user``."""

    def __init__(self, api: Any, actor: str = "user") -> None:
        self.api = api
        self.actor = actor

    def create(self, obj: Obj) -> Obj:
        out: Obj = self.api.create(obj, actor=self.actor)
        return out

    def update(self, obj: Obj) -> Obj:
        out: Obj = self.api.update(obj, actor=self.actor)
        return out

    def patch(self, kind: str, name: str, body: Any, *, namespace: str | None, api_version: str | None,
              patch_type: str, subresource: str | None) -> Obj:
        out: Obj = self.api.patch(kind, name, body, namespace=namespace, api_version=api_version,
                                  patch_type=patch_type, subresource=subresource, actor=self.actor)
        return out

    def delete(self, kind: str, name: str, namespace: str | None, *, api_version: str | None,
               propagation_policy: str | None) -> None:
        self.api.delete(kind, name, namespace, api_version=api_version, propagation_policy=propagation_policy,
                        actor=self.actor)


class CaseRun:
    """One run of one case (see the module docstring). Use :func:`run_case`."""

    def __init__(self, case: Case, variant: Variant | None = None, *, check: bool = True,
                 timeline: bool = False, budget: int = DEFAULT_BUDGET, check_calls: bool = True,
                 max_repeated_errors: int | None = None, record_objects: bool = False) -> None:
        self.case = case
        self.variant = variant
        self.check = check
        self.timeline = timeline
        self.budget = budget
        self.check_calls = check_calls
        #: Overrides the case's ``max_repeated_errors`` when set.
        self.max_repeated_errors = max_repeated_errors
        self.record_objects = record_objects
        self.result = CaseResult(case, variant)
        self.api: Any = None
        self.host: Any = None
        self.reader: StateReader | None = None
        self.states: dict[str, Any] = {}
        self.bundles: dict[str, Bundle] = {}
        self.variant_rule: FaultRule | None = None
        self._seen_violations: set[tuple[str, str]] = set()
        self._phase_seen = 0  # trace calls already scanned for phase changes
        self._phases: dict[tuple[str, str, str], str] = {}
        self._settle_false = False
        #: Values remembered by ``$capture`` for the rest of the run.
        self.captures = Captures()

    # -- helpers -----------------------------------------------------------------------------

    def loc(self, path: JsonPath) -> tuple[str, int | None]:
        """``(file, line)`` of a node of the case."""
        return self.case.file, self.case.line_of(path, key=True)

    def locator(self, base: JsonPath) -> Callable[[JsonPath], tuple[str, int | None]]:
        """A matcher locator for expectations rooted at ``base``."""
        return lambda sub: self.loc((*base, *sub))

    def fail(self, phase: str, path: JsonPath, message: str, subject: str = "") -> None:
        """Record a message-only failure at a node of the case."""
        file, line = self.loc(path)
        self.result.failures.append(Failure(phase, problem(message, file, line, subject)))

    def note(self, text: str) -> None:
        """A harness note in the trace (steps, operations)."""
        self.api.trace.note(self.api.clock.now(), "harness", text)

    def _writer(self, actor: str) -> Any:
        if actor == "user":
            return _UserWriter(self.api)
        from fakeapi.host.client import Client

        return Client(self.api, actor=actor, go_codec=True)

    # -- the run -----------------------------------------------------------------------------

    def run(self) -> CaseResult:
        """Run the case; never raises for a case failure (internal errors are reported as failures)."""
        try:
            self._run()
        except _Abort:
            pass
        except RepeatedError as e:  # raised from a reconcile hook outside a settle (a bundle operation)
            self._repeated(e, "run", ())
        except Exception as e:  # a bug in a simulator, a bundle or the harness: report it in full
            tb = traceback.format_exc(limit=12)
            self.result.aborted = f"internal error: {type(e).__name__}: {e}\n{tb}"
        r = self.result
        if self.api is not None:
            r.api, r.host = self.api, self.host
            r.reconciles = len(self.api.trace.reconciles)
            r.calls = len(self.api.trace.calls)
            r.elapsed = self.api.clock.elapsed()
        if self.variant is not None and self.variant_rule is not None and self.variant_rule.fired == 0 \
                and not r.aborted:
            self.fail("robustness", ("robustness",),
                      f"controller write {self.variant.index} ({self.variant.write}) never happened in this run; "
                      "the plain run and this variant diverged before it")
        return r

    def _run(self) -> None:
        from fakeapi.host import Host
        from fakeapi.server.apiserver import APIServer

        case = self.case
        clock = Clock(case.clock) if case.clock else Clock()
        self.api = api = APIServer(clock=clock, seed=case.seed)
        self.host = host = Host(api, seed=case.seed)
        self.reader = StateReader(api)
        if self.record_objects:
            self._record_objects()
        self._phase_seen = len(api.trace.calls)
        if self.variant is not None:
            self.variant_rule = api.faults.add(fast_copy(self.variant.rule))
        services = case.services
        for i, name in enumerate(case.bundles):
            bundle = get_bundle(name)
            if bundle is None:
                self.fail("setup", ("bundles", i), f"unknown bundle `{name}`")
                raise _Abort
            self.bundles[name] = bundle
            self.states[name] = bundle.install(host, fast_copy(services.get(name) or {}))
        self._select_controllers()
        self._hook_invariants()
        limit = self.max_repeated_errors
        if limit is None:
            limit = int(case.data.get("max_repeated_errors", DEFAULT_MAX_REPEATED_ERRORS))
        host.after_reconcile.append(RepeatedErrorWatch(host, limit))
        if self.timeline:
            host.after_reconcile.append(lambda rec: self._scan_phases())
        self._given()
        if self.timeline:
            self._scan_phases()
        self.result.case_mark = api.trace.mark()
        self._settle(case.data.get("given_settle", True), "given",
                     ("given_settle",) if "given_settle" in case.data else ("given",))
        mark = self.result.case_mark
        for step in case.steps:
            base: JsonPath = ("steps", step.index)
            phase = f"after {step.title}"
            mark = api.trace.mark()
            self.note(f"{step.title} begins")
            self._settle_false = step.settle is False
            for j, op in enumerate(step.do):
                self._operation(op, (*base, "do", j), f"in {step.title}")
            self._settle(step.settle, f"in {step.title}", (*base, "settle"))
            if self.check and step.expect:
                self._expectations(step.expect, (*base, "expect"), phase, mark)
        if self.check and case.expect:
            self._expectations(case.expect, ("expect",), "final expectations", mark)
        if self.timeline:
            self._scan_phases()
        api.check_snapshots()

    def _record_objects(self) -> None:
        """Keep a copy of each object after every API write (for the HTML report's before/after)."""
        trace, reader = self.api.trace, self.reader
        assert reader is not None
        original = trace.record_call
        last: dict[tuple[str, str, str], Obj | None] = {}
        objects = self.result.objects
        faults = self.api.faults
        for_call = faults.for_call
        pending: list[tuple[tuple[str, str, str, str, str], Any]] = []

        def fault_for_call(verb: str, kind: str, namespace: str, name: str, subresource: str, actor: str) -> Any:
            rule = for_call(verb, kind, namespace, name, subresource, actor)
            pending.clear()
            if rule is not None:
                pending.append(((verb, kind, namespace or "", name or "", actor), rule))
            return rule

        faults.for_call = fault_for_call

        def record_call(*args: Any, **kwargs: Any) -> Any:
            call = original(*args, **kwargs)
            if pending:
                ((want, rule),) = pending
                pending.clear()
                if want == (call.verb, call.kind, call.namespace, call.name, call.actor):
                    what = f"crash {rule.crash}" if rule.crash else f"error {call.reason or call.code}"
                    self.result.injected[call.seq] = what
            if call.wrote and call.name:
                k = reader.kind(call.kind)
                if k is not None:
                    after = reader.get(k, call.namespace or None, call.name)
                    if after is not None:
                        after.get("metadata", {}).pop("managedFields", None)
                    key = (call.kind, call.namespace, call.name)
                    objects[call.seq] = (last.get(key), after)
                    last[key] = after
            return call

        trace.record_call = record_call

    def _select_controllers(self) -> None:
        """``controllers:``: only the named controllers of the bundles run (:mod:`fakeapi.harness.selection`)."""
        if "controllers" not in self.case.data:
            return
        missing = select_controllers(self.host, self.case.data.get("controllers") or [])
        if missing:
            self.fail("setup", ("controllers",), "unknown controller " + ", ".join(f"`{n}`" for n in missing)
                      + " (hosted: " + (", ".join(self.host.controllers) or "none") + ")")
            raise _Abort

    # -- invariants ----------------------------------------------------------------------------

    def _hook_invariants(self) -> None:
        checks: list[tuple[int, str, Callable[[Any, Any], list[str]], Any]] = []
        for i, name in enumerate(self.case.invariants):
            for bname, bundle in self.bundles.items():
                fn = bundle.invariants.get(name)
                if fn is not None:
                    checks.append((i, name, fn, self.states[bname]))
                    break
            else:
                self.fail("setup", ("invariants", i), f"unknown invariant `{name}`")
                raise _Abort
        if not checks:
            return

        def after(rec: Any) -> None:
            for i, name, fn, state in checks:
                try:
                    violations = fn(self.host, state)
                except Exception as e:  # an invariant that breaks is a failure, not a crash of the harness
                    violations = [f"the check raised {type(e).__name__}: {e}"]
                for msg in violations:
                    if (name, msg) in self._seen_violations:
                        continue
                    self._seen_violations.add((name, msg))
                    self.fail("invariants", ("invariants", i),
                              f"invariant `{name}` violated after reconcile #{rec.seq} {rec.controller} "
                              f"{rec.namespace + '/' if rec.namespace else ''}{rec.name}: {msg}")

        self.host.after_reconcile.append(after)

    # -- given ---------------------------------------------------------------------------------

    def _fill_owner_uids(self, obj: Obj, path: JsonPath) -> None:
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            return
        refs = meta.get("ownerReferences")
        if not isinstance(refs, list):
            return
        assert self.reader is not None
        for i, ref in enumerate(refs):
            if not isinstance(ref, dict) or ref.get("uid"):
                continue
            k = self.reader.kind(str(ref.get("kind", "")), ref.get("apiVersion"))
            if k is None:
                raise TargetError(f"ownerReferences[{i}]: the server serves no kind `{ref.get('kind')}`")
            ns = (meta.get("namespace") or "default") if k.namespaced else None
            owner = self.reader.get(k, ns, str(ref.get("name", "")), copy=False)
            if owner is None:
                where = f"{ns}/" if ns else ""
                raise TargetError(f"ownerReferences[{i}]: no {k.kind} {where}{ref.get('name')} to take the uid from "
                                  "(the owner must exist by then)")
            ref["uid"] = owner["metadata"]["uid"]

    def _given(self) -> None:
        assert self.reader is not None
        for i, original in enumerate(self.case.given):
            path: JsonPath = ("given", i)
            obj = fast_copy(original)
            try:
                self._fill_owner_uids(obj, path)
                status = obj.get("status")
                # (the stored snapshot itself, read-only: an update body is made of it only when needed)
                created = self.api.create(obj, keep_creation_timestamp=True, shared=True)
                k = self.reader.kind(str(obj.get("kind")), obj.get("apiVersion"))
                if status is not None and k is not None and k.status_subresource \
                        and created.get("status") != status:
                    self.api.update({**created, "status": fast_copy(status)}, subresource="status")
            except ApiError as e:
                hint = kind_hint(self.api, str(original.get("kind") or ""), original.get("apiVersion")) \
                    if e.code == 404 else ""
                self.fail("given", (*path, "kind") if hint else path,
                          f"storing {object_id(original)} failed: {e.code} {e.reason}: {e.message}"
                          + (f": {hint}" if hint else ""))
                raise _Abort from None
            except TargetError as e:
                self.fail("given", path, f"storing {object_id(original)}: {e}")
                raise _Abort from None

    # -- settling ------------------------------------------------------------------------------

    def _settle(self, settle: Any, phase: str, path: JsonPath) -> None:
        from fakeapi.host.hotloop import HotLoopError

        try:
            run_settle(self.host, settle, self.budget)
        except HotLoopError as e:
            self.fail(phase, path, f"the controllers did not settle: {e}\n"
                                   "(a controller that polls with requeue_after settles with "
                                   "`settle: {until_idle: true, max: 10m}`; after given, with `given_settle:`)")
            self.result.aborted = "hot loop"
            raise _Abort from None
        except RepeatedError as e:
            self._repeated(e, phase, path)
        finally:
            if self.timeline:
                self._scan_phases()

    def _repeated(self, e: RepeatedError, phase: str, path: JsonPath) -> None:
        """A reconcile failed the same way N times in a row: the case ends here, with its traceback."""
        self.fail(phase, path, e.render())
        self.result.aborted = (f"{e.controller} failed {e.times} times in a row on {e.key} "
                               "(max_repeated_errors)")
        raise _Abort from None

    # -- operations ----------------------------------------------------------------------------

    def _operation(self, op: dict[str, Any], path: JsonPath, phase: str) -> None:
        from fakeapi.host.hotloop import HotLoopError

        name = next(k for k in op if k not in ("as", "error"))
        arg = op[name]
        actor = str(op.get("as") or "user")
        expected_error = op.get("error")
        self.note(f"do {_summary(name, arg)}" + (f" as {actor}" if actor != "user" else ""))
        try:
            self._dispatch(name, arg, actor, path)
        except ApiError as e:
            if expected_error is None:
                hint = ""
                if e.code == 404 and name in ("create", "apply", "update") and isinstance(arg, dict):
                    hint = kind_hint(self.api, str(arg.get("kind") or ""), arg.get("apiVersion"))
                self.fail(phase, (*path, name), f"`{name}` failed: {e.code} {e.reason}: {e.message}"
                          + (f": {hint}" if hint else ""))
                self.result.aborted = f"`{name}` at {self.case.file}:{self.case.line_of(path, key=True)} failed"
                raise _Abort from None
            for m in match(expected_error, e.status, locate=self.locator((*path, "error")), path="error",
                           captures=self.captures):
                self.result.failures.append(Failure(phase, m))
            return
        except (TargetError, ValueError, KeyError) as e:
            text = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
            self.fail(phase, (*path, name), f"`{name}`: {text}")
            self.result.aborted = f"`{name}` at {self.case.file}:{self.case.line_of(path, key=True)} could not run"
            raise _Abort from None
        except ControllerCrash as e:
            self.fail(phase, (*path, name), f"`{name}` hit a crash fault rule ({e}); crash rules act on reconciles")
            raise _Abort from None
        except HotLoopError as e:
            self.fail(phase, (*path, name), f"the controllers did not settle: {e}")
            self.result.aborted = "hot loop"
            raise _Abort from None
        except RepeatedError as e:
            self._repeated(e, phase, (*path, name))
        finally:
            if self.timeline:
                self._scan_phases()
        if expected_error is not None:
            self.fail(phase, (*path, "error"),
                      f"expected `{name}` to fail with {_compact(expected_error)}, but it succeeded")

    def _resolve(self, target: dict[str, Any], default_pick: str | int = "one", copy: bool = True) -> list[Obj]:
        assert self.reader is not None
        return resolve(self.reader, target, default_pick=default_pick, copy=copy, captures=self.captures)

    def _dispatch(self, name: str, arg: Any, actor: str, path: JsonPath) -> None:
        api = self.api
        if name in ("create", "apply", "update"):
            obj = fast_copy(arg)
            self._fill_owner_uids(obj, (*path, name))
            w = self._writer(actor)
            if name == "create":
                w.create(obj)
            elif name == "apply":
                self._apply(w, obj)
            else:
                meta = obj.setdefault("metadata", {})
                if "resourceVersion" not in meta:
                    assert self.reader is not None
                    k = self.reader.require_kind(str(obj.get("kind", "")), obj.get("apiVersion"))
                    cur = self.reader.get(k, meta.get("namespace"), str(meta.get("name", "")), copy=False)
                    if cur is not None:
                        meta["resourceVersion"] = cur["metadata"]["resourceVersion"]
                elif meta["resourceVersion"] == "":
                    del meta["resourceVersion"]
                w.update(obj)
        elif name == "server_side_apply":
            obj = fast_copy(arg["object"])
            self._fill_owner_uids(obj, (*path, name, "object"))
            assert self.reader is not None
            k = self.reader.require_kind(str(obj.get("kind", "")), obj.get("apiVersion"))
            meta = obj.get("metadata") or {}
            api.patch(k.kind, str(meta.get("name", "")), obj, api_version=k.api_version,
                      namespace=meta.get("namespace") or ("default" if k.namespaced else None),
                      patch_type="apply", field_manager=str(arg.get("fieldManager") or actor),
                      force=bool(arg.get("force")), subresource=arg.get("subresource"), actor=actor)
        elif name in ("patch", "status", "delete"):
            w = self._writer(actor)
            for obj in self._resolve(arg, copy=False):
                k = obj["kind"]
                meta = obj["metadata"]
                av = obj["apiVersion"]
                if name == "delete":
                    w.delete(k, meta["name"], meta.get("namespace"), api_version=av,
                             propagation_policy=arg.get("propagationPolicy"))
                elif name == "status":
                    w.patch(k, meta["name"], {"status": fast_copy(arg["status"])}, namespace=meta.get("namespace"),
                            api_version=av, patch_type="merge", subresource="status")
                else:
                    w.patch(k, meta["name"], fast_copy(arg["patch"]), namespace=meta.get("namespace"),
                            api_version=av, patch_type=str(arg.get("type") or "merge"),
                            subresource=arg.get("subresource"))
        elif name == "advance":
            d = parse_duration(str(arg))
            if self._settle_false:
                api.clock.advance(d)
            else:
                self.host.run_for(d, max_reconciles=self.budget)
        elif name == "crash":
            self.host.crash(str(arg))
        elif name == "fault":
            api.faults.add(fast_copy(arg))
        elif name == "clear_faults":
            api.faults.clear()
            rule = self.variant_rule
            if rule is not None and not rule.exhausted:
                api.faults.rules.insert(0, rule)  # the robustness variant's own rule survives
        elif name == "kubelet.exit":
            kubelet = getattr(self.host, "kubelet", None)
            if kubelet is None:
                raise ValueError("this host runs no kubelet")
            target = {"kind": "Pod", **{k: v for k, v in arg.items() if k not in ("container", "code")}}
            for pod in self._resolve(target, copy=False):
                kubelet.exit(pod["metadata"].get("namespace", ""), pod["metadata"]["name"], str(arg["container"]),
                             int(arg["code"]))
        else:
            prefix = name.partition(".")[0]
            bundle = self.bundles.get(prefix)
            if bundle is None or name not in bundle.operations:
                raise ValueError(f"unknown operation `{name}`")
            ctx = OpContext(self.host, self.states[prefix], lambda t: self._resolve(t))
            bundle.operations[name](ctx, fast_copy(arg))
            self.host.wake()  # the operation may have changed a simulator's own state

    def _apply(self, w: Any, obj: Obj) -> None:
        assert self.reader is not None
        obj.pop("status", None)
        k = self.reader.require_kind(str(obj.get("kind", "")), obj.get("apiVersion"))
        meta = obj.get("metadata") or {}
        ns = meta.get("namespace") or ("default" if k.namespaced else None)
        if self.reader.get(k, ns, str(meta.get("name", "")), copy=False) is None:
            w.create(obj)
        else:
            w.patch(k.kind, str(meta.get("name", "")), obj, namespace=ns, api_version=k.api_version,
                    patch_type="merge", subresource=None)

    # -- expectations --------------------------------------------------------------------------

    def _expectations(self, items: list[dict[str, Any]], base: JsonPath, phase: str, mark: int) -> None:
        failures = self.result.failures
        before = len(failures)
        try:
            self._check_expectations(items, base, phase, mark)
        finally:
            for f in failures[before:]:
                f.expectation = True

    def _check_expectations(self, items: list[dict[str, Any]], base: JsonPath, phase: str, mark: int) -> None:
        for i, a in enumerate(items):
            path = (*base, i)
            key = next(iter(a))
            arg = a[key]
            try:
                if key == "object":
                    self._expect_object(arg, (*path, "object"), phase)
                elif key == "absent":
                    self._expect_absent(arg, (*path, "absent"), phase)
                elif key == "count":
                    self._expect_count(arg, (*path, "count"), phase)
                elif key == "each":
                    self._expect_each(arg, (*path, "each"), phase)
                elif key == "calls" and self.check_calls:
                    self._expect_calls(arg, (*path, "calls"), phase, mark)
            except TargetError as e:
                self.fail(phase, (*path, key), str(e))

    def _expect_object(self, exp: Obj, path: JsonPath, phase: str) -> None:
        assert self.reader is not None
        k = self.reader.require_kind(str(exp.get("kind", "")), exp.get("apiVersion"))
        meta = exp.get("metadata") or {}
        name = str(meta.get("name", ""))
        ns = (meta.get("namespace") or "default") if k.namespaced else None
        subject = f"{k.kind} {ns}/{name}" if ns else f"{k.kind} {name}"
        actual = self.reader.get(k, ns, name, copy=False)
        if actual is None:
            self.fail(phase, path, f"{subject} does not exist")
            return
        for m in match(exp, actual, shape=kind_shape(k), locate=self.locator(path), subject=subject,
                       captures=self.captures):
            self.result.failures.append(Failure(phase, m))

    def _expect_absent(self, target: Obj, path: JsonPath, phase: str) -> None:
        found = self._resolve(target, default_pick="all", copy=False)
        if found:
            names = ", ".join(object_id(o) for o in found[:10])
            self.fail(phase, path, f"expected no {describe(target)}, found {len(found)}: {names}")

    def _expect_count(self, arg: Obj, path: JsonPath, phase: str) -> None:
        found = self._resolve(arg, default_pick="all", copy=False)
        problem_text = _count_problem(len(found), arg)
        if problem_text:
            names = ", ".join(object_id(o) for o in found[:10]) + (" ..." if len(found) > 10 else "")
            self.fail(phase, path, f"{problem_text} of {describe(arg)}" + (f": {names}" if found else ""))

    def _expect_each(self, arg: Obj, path: JsonPath, phase: str) -> None:
        found = self._resolve(arg, default_pick="all", copy=False)
        if not found:
            if not arg.get("allow_none"):
                self.fail(phase, path, f"expected at least one {describe(arg)}, found none "
                                       "(add allow_none: true to allow that)")
            return
        assert self.reader is not None
        k = self.reader.require_kind(str(arg["kind"]), arg.get("apiVersion"))
        shape = kind_shape(k)
        if len(found) > 1 and contains_capture(arg["match"]):
            names = ", ".join(object_id(o) for o in found[:10])
            self.fail(phase, path, f"`$capture` needs exactly one {describe(arg)}, found {len(found)}: {names} "
                                   "(narrow the target, or add pick: one, oldest, newest or an index)")
            return
        for obj in found:
            for m in match(arg["match"], obj, shape=shape, locate=self.locator((*path, "match")),
                           subject=object_id(obj), captures=self.captures):
                self.result.failures.append(Failure(phase, m))

    def _expect_calls(self, arg: Obj, path: JsonPath, phase: str, step_mark: int) -> None:
        since = self.result.case_mark if arg.get("since") == "case" else step_mark
        kind_name: str | None = None
        if arg.get("kind") is not None:
            assert self.reader is not None
            k = self.reader.kind(str(arg["kind"]))
            kind_name = k.kind if k is not None else str(arg["kind"])
        found = []
        for c in self.api.trace.calls_since(since):
            if kind_name is not None and c.kind != kind_name:
                continue
            if any(key in arg and getattr(c, attr) != arg[key] for key, attr in _CALL_KEYS):
                continue
            found.append(c)
        problem_text = _count_problem(len(found), arg)
        if problem_text:
            shown = "".join("\n      " + c.render() for c in found[:10]) + ("\n      ..." if len(found) > 10 else "")
            crit = {k: v for k, v in arg.items() if k not in ("equals", "min", "max")}
            self.fail(phase, path, f"{problem_text} calls matching {_compact(crit)}{shown}")

    # -- timeline ------------------------------------------------------------------------------

    def _scan_phases(self) -> None:
        """Note each object's ``status.phase`` change since the last scan (timeline mode)."""
        assert self.reader is not None
        calls = self.api.trace.calls
        seen = self._phase_seen
        if len(calls) == seen:
            return
        touched: list[tuple[str, str, str]] = []
        for c in calls[seen:]:
            key = (c.kind, c.namespace, c.name)
            if c.wrote and key not in touched:
                touched.append(key)
        self._phase_seen = len(calls)
        for kind, ns, name in touched:
            k = self.reader.kind(kind)
            if k is None:
                continue
            obj = self.reader.get(k, ns or None, name, copy=False)
            if obj is None:
                phase = "(deleted)"
            else:
                status = obj.get("status")
                phase = str(status.get("phase")) if isinstance(status, dict) and status.get("phase") else ""
            old = self._phases.get((kind, ns, name))
            if phase != (old or "") and (phase or old is not None):
                self._phases[(kind, ns, name)] = phase
                if phase or old:
                    target = f"{ns}/{name}" if ns else name
                    self.api.trace.note(self.api.clock.now(), "phase",
                                        f"{kind} {target}: {old or '(none)'} -> {phase or '(none)'}")


_CALL_KEYS = (("actor", "actor"), ("verb", "verb"), ("namespace", "namespace"), ("name", "name"),
              ("subresource", "subresource"), ("code", "code"), ("reason", "reason"))


def _count_problem(n: int, arg: Obj) -> str:
    """``expected 2, got 3`` when ``n`` breaks the ``equals``/``min``/``max`` of ``arg``, else ""."""
    if "equals" in arg and n != arg["equals"]:
        return f"expected {arg['equals']}, got {n}"
    if "min" in arg and n < arg["min"]:
        return f"expected at least {arg['min']}, got {n}"
    if "max" in arg and n > arg["max"]:
        return f"expected at most {arg['max']}, got {n}"
    return ""


def _compact(v: Any) -> str:
    import json

    return json.dumps(v, separators=(", ", ": "), ensure_ascii=False, default=str)


def _summary(name: str, arg: Any) -> str:
    if isinstance(arg, dict):
        if "kind" in arg and "metadata" in arg:
            return f"{name} {object_id(arg)}"
        if "kind" in arg:
            return f"{name} {describe(arg)}"
    if isinstance(arg, (str, int, float)) or arg is None:
        return f"{name} {arg}"
    return f"{name} {_compact(arg)[:120]}"


def run_case(case: Case, variant: Variant | None = None, *, check: bool = True, timeline: bool = False,
             budget: int = DEFAULT_BUDGET, check_calls: bool | None = None,
             max_repeated_errors: int | None = None, record_objects: bool = False) -> CaseResult:
    """Run one case (or one robustness variant of it) on a fresh server and host.

    ``check=False`` skips the expectations (recording). ``timeline=True``
    adds each object's phase changes to the trace. ``check_calls`` defaults to
    True for plain runs and False for variants (crashes and conflicts add calls).
    ``max_repeated_errors`` overrides the case's (see :mod:`fakeapi.harness.settle`).
    ``record_objects=True`` keeps each written object after every API write
    (``result.objects``, for the HTML report).
    """
    if check_calls is None:
        check_calls = variant is None
    return CaseRun(case, variant, check=check, timeline=timeline, budget=budget, check_calls=check_calls,
                   max_repeated_errors=max_repeated_errors, record_objects=record_objects).run()


__all__ = ["DEFAULT_BUDGET", "CaseResult", "CaseRun", "Failure", "Variant", "dotted", "run_case"]
