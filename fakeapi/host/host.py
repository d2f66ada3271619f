"""The controller host: controllers and actors on one virtual clock, run deterministically.

A :class:`Host` runs, in one thread and in a reproducible order, what a
controller manager and a cluster run concurrently:

1. deliver every pending watch event to the controllers' informers (which
   update their caches and, through the event handlers, the work queues);
2. run the first actor (garbage collector, kubelet, simulators) that is due;
3. otherwise reconcile one key: among every controller's keys that are ready
   now, the one that became ready first, ties broken by a seeded draw;
4. when nothing is due now, move the clock to the next requeue or actor time.

:meth:`Host.run_until_idle` repeats that until nothing is due (or fails with
:class:`~fakeapi.host.hotloop.HotLoopError` when the reconcile budget is spent
with work still due); :meth:`Host.run_for` does it for a stretch of virtual
time; :meth:`Host.step` does one unit. The same inputs and seed give the same
trace on every run.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from fakeapi.codec.snapshots import SnapshotMutated
from fakeapi.host.builder import (
    ControllerBuilder,
    ControllerSpec,
    EnqueueForObject,
    EnqueueForOwner,
    EnqueueFromMap,
    ReconcileFn,
    Request,
    Result,
    WatchSpec,
)
from fakeapi.host.client import Client
from fakeapi.host.hotloop import HotLoopError, describe
from fakeapi.host.informer import CacheReader, Informer
from fakeapi.host.kubelet import Kubelet
from fakeapi.host.workqueue import Order, WorkQueue
from fakeapi.machinery import errors
from fakeapi.registry.kinds import Kind
from fakeapi.server.clock import Clock, format_duration
from fakeapi.server.faults import ControllerCrash
from fakeapi.server.trace import ApiCall, Entry, ReconcileRecord

Obj = dict[str, Any]


class Actor(Protocol):
    """Something that acts on the cluster on the virtual clock (garbage collector, kubelet, simulators)."""

    name: str

    def next_due(self) -> datetime | None:
        """When the actor next has work (now or earlier: at once); None when it has none."""

    def run(self) -> bool:
        """Do the work that is due; True if anything was done."""


class GarbageCollectorActor:
    """The server's garbage collector as an actor: due whenever it has work pending."""

    def __init__(self, gc: Any, clock: Clock) -> None:
        self.gc = gc
        self.clock = clock
        self.name = str(getattr(gc, "name", "garbage-collector"))

    def next_due(self) -> datetime | None:
        """Now when the collector has pending work, else None."""
        return self.clock.now() if self.gc.pending() else None

    def run(self) -> bool:
        """Run the collector once."""
        return bool(self.gc.run())


class Context:
    """What a reconcile function gets besides the request: clients, the clock, the host."""

    def __init__(self, controller: Controller) -> None:
        host = controller.host
        #: The controller's name (its actor name in the trace and in fault rules).
        self.controller = controller.name
        self.host = host
        self.clock = host.clock
        shared = controller.spec.unsafe_disable_deep_copy
        #: Reads from the controller's informer cache (but the kinds of ``disable_cache_for``);
        #: writes through the Go codec.
        self.client = Client(host.api, controller.name, go_codec=True, reader=controller.reader,
                             unsafe_disable_deep_copy=shared, uncached=controller.uncached)
        #: Reads from the server (never stale), like the manager's ``GetAPIReader()``.
        self.api_reader = Client(host.api, controller.name, go_codec=True, unsafe_disable_deep_copy=shared)

    def now(self) -> datetime:
        """The virtual time."""
        return self.clock.now()

    def log(self, text: str) -> None:
        """Add a note to the trace, under the controller's name."""
        self.host.api.trace.note(self.clock.now(), self.controller, text)


class Controller:
    """One hosted controller: its declaration plus the state a crash wipes (queue, caches, back-off)."""

    def __init__(self, host: Host, spec: ControllerSpec) -> None:
        self.host = host
        self.spec = spec
        self.name = spec.name
        assert spec.reconcile is not None
        self.reconcile_fn: ReconcileFn = spec.reconcile
        api = host.api
        self.primary: Kind = api.kinds.require(spec.primary.kind, spec.primary.api_version)
        self._watched: list[tuple[Kind, WatchSpec]] = [
            (api.kinds.require(w.kind, w.api_version), w) for w in spec.watches
        ]
        self.restarts = 0
        self.queue: WorkQueue[Request] = WorkQueue(host.clock, host.rng)
        self.informers: dict[tuple[str, str], Informer] = {}
        #: ``informers``' values in order (what the host's delivery walks after every step).
        self.informer_list: tuple[Informer, ...] = ()
        self._handlers: dict[tuple[str, str], list[Any]] = {}
        #: The (group, kind) pairs of ``spec.disable_cache_for``: the client reads them from the server.
        self.uncached: frozenset[tuple[str, str]] = frozenset(
            (k.group, k.kind) for k in (api.kinds.require(name) for name in spec.disable_cache_for))
        self.reader = CacheReader(api, self.name, self.informer,
                                  unsafe_disable_deep_copy=spec.unsafe_disable_deep_copy)
        self.ctx = Context(self)

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> None:
        """Start from nothing: a new queue, new informers listing every watched kind."""
        host = self.host
        self.queue = WorkQueue(host.clock, host.rng)
        self.informers = {}
        self.informer_list = ()
        self._handlers = {}
        filters = self.spec.event_filters
        for kind, w in self._watched:
            preds = (*filters, *w.predicates)
            handler: Any
            if w.mode == "for":
                handler = EnqueueForObject(self.queue, preds, kind.namespaced)
            elif w.mode == "owns":
                handler = EnqueueForOwner(self.queue, preds, self.primary.group, self.primary.kind,
                                          self.primary.namespaced)
            else:
                assert w.map_fn is not None
                handler = EnqueueFromMap(self.queue, preds, w.map_fn)
            self._handlers.setdefault((kind.api_version, kind.kind), []).append(handler)
        self.reader = CacheReader(host.api, self.name, self.informer,
                                  unsafe_disable_deep_copy=self.spec.unsafe_disable_deep_copy)
        self.ctx = Context(self)
        for kind, _ in self._watched:
            key = (kind.api_version, kind.kind)
            if key not in self.informers:
                inf = Informer(host.api, kind, f"{self.name}/informer")
                inf.handlers.extend(self._handlers[key])
                self.informers[key] = inf
                self.informer_list = tuple(self.informers.values())
                # A failed list is retried when events are delivered, as the reflector retries.
                with contextlib.suppress(errors.ApiError, ControllerCrash):
                    inf.start()

    def stop(self) -> None:
        """Close every watch (the controller's memory is dropped by the next :meth:`start`)."""
        for inf in self.informers.values():
            inf.stop()

    def restart(self) -> None:
        """Crash and come back: lose queue, caches and back-off; list everything again."""
        self.stop()
        self.restarts += 1
        self.start()

    def informer(self, kind: Kind) -> Informer:
        """The informer of ``kind``; started (and synced) on first use, as controller-runtime's cache does."""
        key = (kind.api_version, kind.kind)
        inf = self.informers.get(key)
        if inf is not None:
            if not inf.synced:
                inf.start()
            return inf
        inf = Informer(self.host.api, kind, f"{self.name}/informer")
        trace = self.host.api.trace
        current, trace.current_reconcile = trace.current_reconcile, None  # not the reconcile's own calls
        try:
            inf.start()
        finally:
            trace.current_reconcile = current
        self.informers[key] = inf
        self.informer_list = tuple(self.informers.values())
        return inf

    def generic(self, obj: Obj) -> None:
        """Send a generic event for ``obj`` (as controller-runtime's channel source) to its kind's handlers."""
        kind = self.host.api.kinds.require(str(obj.get("kind", "")), obj.get("apiVersion"))
        for h in self._handlers.get((kind.api_version, kind.kind), ()):
            h.on_generic(obj)

    # -- work -----------------------------------------------------------------------------

    def deliver(self) -> int:
        """Deliver pending watch events of every informer; returns how many."""
        n = 0
        for inf in self.informer_list:
            w = inf.watch
            # Informer.pending and Watch.has_events, inline (checked for every informer after every write)
            if inf.synced and (w is None or not (w._pending or w.pos < w.log.offset + len(w.log.events))):
                continue
            n += inf.deliver()
        return n


@dataclass
class RunStats:
    """What one run did."""

    started: datetime
    ended: datetime
    reconciles: int = 0
    errors: int = 0
    crashes: int = 0
    actor_runs: int = 0
    events: int = 0
    #: True when a budget stopped the run with work still due (only without raising).
    budget_spent: bool = False

    @property
    def elapsed(self) -> timedelta:
        """Virtual time the run covered."""
        return self.ended - self.started


class _BudgetSpent(Exception):
    pass


class Host:
    """Hosts controllers and actors on one API server and its virtual clock."""

    def __init__(self, api: Any, *, seed: int = 0, garbage_collector: bool = True, kubelet: bool = True) -> None:
        self.api = api
        self.clock: Clock = api.clock
        self.seed = seed
        self.rng = random.Random(seed)
        self.controllers: dict[str, Controller] = {}
        self.actors: list[Actor] = []
        #: Called after every reconcile with its record (the harness checks invariants here).
        self.after_reconcile: list[Callable[[ReconcileRecord], None]] = []
        #: The last exception each controller's reconcile raised (shown by hot-loop reports).
        self.last_errors: dict[str, BaseException] = {}
        self.kubelet: Kubelet | None = None
        self._delivered_rv = -1
        self._idle_actors: dict[str, tuple[int, datetime]] = {}
        if garbage_collector and getattr(api, "gc", None) is not None:
            self.add_actor(GarbageCollectorActor(api.gc, self.clock))
        if kubelet and api.kinds.find("Pod", "v1") is not None:
            self.kubelet = Kubelet(api)
            self.add_actor(self.kubelet)

    # -- registration ---------------------------------------------------------------------

    def controller(self, name: str) -> ControllerBuilder[Controller]:
        """Declare a controller: ``.for_(kind)...complete(reconcile_fn)``."""
        return ControllerBuilder(self._add_controller, name)

    def _add_controller(self, spec: ControllerSpec) -> Controller:
        if spec.name in self.controllers:
            raise ValueError(f"controller with name {spec.name!r} already exists")
        ctrl = Controller(self, spec)
        self.controllers[spec.name] = ctrl
        ctrl.start()
        return ctrl

    def add_actor(self, actor: Actor) -> None:
        """Add an actor; actors due at the same time run in the order they were added."""
        self.actors.append(actor)

    def crash(self, name: str) -> None:
        """Crash a controller (or ``"all"``): it loses queue, caches and back-off and lists everything again."""
        names = list(self.controllers) if name == "all" else [name]
        for n in names:
            ctrl = self.controllers.get(n)
            if ctrl is None:
                raise KeyError(f"no controller named {n!r} (have: {', '.join(self.controllers) or 'none'})")
            self.api.trace.note(self.clock.now(), n, "crashed; restarting from a fresh list")
            ctrl.restart()

    # -- delivering -----------------------------------------------------------------------

    def deliver(self) -> int:
        """Deliver every pending watch event to the informers (and so to the queues); returns how many."""
        rv = self.api.resource_version
        if rv == self._delivered_rv:
            return 0
        n = 0
        for ctrl in self.controllers.values():
            for inf in ctrl.informer_list:  # (Controller.deliver, inline: after every step)
                w = inf.watch
                if inf.synced and (w is None or not (w._pending or w.pos < w.log.offset + len(w.log.events))):
                    continue
                n += inf.deliver()
        self._delivered_rv = rv
        return n

    # -- scheduling -----------------------------------------------------------------------

    def _due_actor(self, now: datetime) -> Actor | None:
        rv = self.api.resource_version
        for actor in self.actors:
            t = actor.next_due()
            if t is None or t > now:
                continue
            idle = self._idle_actors.get(actor.name)
            if idle is not None and idle == (rv, now):
                continue  # it found nothing to do and nothing changed since
            return actor
        return None

    def wake(self, name: str | None = None) -> None:
        """Tell the host an actor (or every actor) may have work although the API did not change.

        The host skips an actor that found nothing to do until the store or the clock moves;
        a simulator whose own state changed (a job queued on a simulated service) calls this.
        """
        if name is None:
            self._idle_actors.clear()
        else:
            self._idle_actors.pop(name, None)

    def _due_controller(self) -> Controller | None:
        best: Controller | None = None
        best_order: Order | None = None
        now = self.clock._now  # (Clock.now, inline)
        for ctrl in self.controllers.values():
            q = ctrl.queue  # (WorkQueue.peek, inline: every step)
            waiting = q._waiting_heap
            if waiting and waiting[0][0] <= now:
                q._promote()
            ready = q._ready
            if ready:
                h = ready[0]
                o = (h[0], h[1], h[2])
                if best_order is None or o < best_order:
                    best, best_order = ctrl, o
        return best

    def next_wakeup(self) -> datetime | None:
        """The next time something is due later than now (a delayed requeue or an actor), or None."""
        now = self.clock.now()
        times: list[datetime] = []
        for ctrl in self.controllers.values():
            t = ctrl.queue.next_wakeup()
            if t is not None:
                times.append(t)
        for actor in self.actors:
            t = actor.next_due()
            if t is not None and t > now:
                times.append(t)
        return min(times) if times else None

    def _work(self, stats: RunStats, budget: int | None, actor_budget: int | None) -> bool:
        """Deliver events, then run one due actor or reconcile one due key. False when nothing is due now."""
        stats.events += self.deliver()
        now = self.clock._now  # (Clock.now, inline: every step)
        actor = self._due_actor(now)
        if actor is not None:
            if actor_budget is not None and stats.actor_runs >= actor_budget:
                raise _BudgetSpent
            if actor.run():
                stats.actor_runs += 1
                self._idle_actors.pop(actor.name, None)
            else:
                self._idle_actors[actor.name] = (self.api.resource_version, now)
            return True
        ctrl = self._due_controller()
        if ctrl is None:
            return False
        if budget is not None and stats.reconciles >= budget:
            raise _BudgetSpent
        self._reconcile(ctrl, stats)
        return True

    def _reconcile(self, ctrl: Controller, stats: RunStats) -> None:
        req = ctrl.queue.get()
        assert req is not None
        queue = ctrl.queue
        trace = self.api.trace
        clock = self.clock
        rec = trace.start_reconcile(ctrl.name, req.namespace, req.name, clock._now)  # (Clock.now, inline)
        stats.reconciles += 1
        try:
            result = ctrl.reconcile_fn(ctrl.ctx, req)
        except ControllerCrash as crash:
            trace.end_reconcile(rec, self.clock.now(), "crash", str(crash))
            stats.crashes += 1
            trace.note(self.clock.now(), ctrl.name,
                       f"crashed {crash.when} {crash.call}".rstrip() + "; restarting from a fresh list")
            ctrl.restart()
        except SnapshotMutated:
            raise  # a bug in the controller or in fakeapi, not an error the controller returned
        except Exception as exc:  # a returned error in Go terms (or a recovered panic)
            msg = exc.message if isinstance(exc, errors.ApiError) else f"{type(exc).__name__}: {exc}"
            trace.end_reconcile(rec, self.clock.now(), f"error: {msg}", msg)
            stats.errors += 1
            self.last_errors[ctrl.name] = exc
            queue.add_rate_limited(req)
            queue.done(req)
        else:
            if result is not None and result.requeue_after is not None and result.requeue_after > timedelta(0):
                outcome = f"requeue after {format_duration(result.requeue_after)}"
                queue.forget(req)
                queue.add_after(req, result.requeue_after)
            elif result is not None and result.requeue:
                outcome = "requeue"
                queue.add_rate_limited(req)
            else:
                outcome = "done"
                queue.forget(req)
            trace.end_reconcile(rec, clock._now, outcome)
            queue.done(req)
        for hook in self.after_reconcile:
            hook(rec)

    # -- running --------------------------------------------------------------------------

    def step(self) -> bool:
        """One unit of work: an actor run or a reconcile, moving the clock to the next due time if
        nothing is due now. False when nothing is due at all."""
        stats = RunStats(self.clock.now(), self.clock.now())
        if self._work(stats, None, None):
            return True
        t = self.next_wakeup()
        if t is None:
            return False
        self.clock.set(t)
        return self._work(stats, None, None) or True

    def run_until_idle(self, max_reconciles: int = 10_000, *, raise_on_budget: bool = True) -> RunStats:
        """Run until nothing is due, moving the clock to each next requeue or actor time.

        When ``max_reconciles`` reconciles are done and another is due, raise
        :class:`HotLoopError` with the repeating part of the trace (or, with
        ``raise_on_budget=False``, stop and return stats with ``budget_spent``).
        """
        return self._run(max_reconciles, None, raise_on_budget)

    def run_for(self, duration: timedelta | str | float, max_reconciles: int = 10_000, *,
                raise_on_budget: bool = True) -> RunStats:
        """Run with the clock for ``duration``: everything due until then, then set the clock to that end."""
        from fakeapi.server.clock import parse_duration

        d = duration if isinstance(duration, timedelta) else parse_duration(duration)
        return self._run(max_reconciles, self.clock.now() + d, raise_on_budget)

    def _run(self, max_reconciles: int, until: datetime | None, raise_on_budget: bool) -> RunStats:
        stats = RunStats(self.clock.now(), self.clock.now())
        actor_budget = max(10 * max_reconciles, 10_000)
        try:
            while True:
                while self._work(stats, max_reconciles, actor_budget):
                    pass
                t = self.next_wakeup()
                if t is None or (until is not None and t > until):
                    break
                self.clock.set(t)
            if until is not None and self.clock.now() < until:
                self.clock.set(until)
                while self._work(stats, max_reconciles, actor_budget):
                    pass
        except _BudgetSpent:
            stats.budget_spent = True
            stats.ended = self.clock.now()
            if raise_on_budget:
                raise self._hot_loop(max_reconciles, stats) from None
            return stats
        stats.ended = self.clock.now()
        return stats

    def _hot_loop(self, budget: int, stats: RunStats) -> HotLoopError:
        due: list[str] = []
        for ctrl in self.controllers.values():
            for req in ctrl.queue.ready():
                due.append(f"{ctrl.name} {req} (now)")
            for req, t in sorted(ctrl.queue.waiting().items(), key=lambda kv: (kv[1], kv[0])):
                due.append(f"{ctrl.name} {req} (at {t.isoformat()})")
        if stats.reconciles < budget:
            due.insert(0, f"actors ran {stats.actor_runs} times")
        return describe(self.api.trace, budget, due[:20], self.last_errors)

    # -- reporting ------------------------------------------------------------------------

    def pending(self) -> list[str]:
        """What is due or scheduled: queued keys, delayed requeues and due actors (for reports)."""
        out: list[str] = []
        now = self.clock.now()
        for ctrl in self.controllers.values():
            out.extend(f"{ctrl.name} {req} (now)" for req in ctrl.queue.ready())
            out.extend(f"{ctrl.name} {req} (at {t.isoformat()})" for req, t in ctrl.queue.waiting().items())
        for actor in self.actors:
            t = actor.next_due()
            if t is not None:
                out.append(f"{actor.name} ({'now' if t <= now else 'at ' + t.isoformat()})")
        return out

    def render_trace(self, tail: int | None = None) -> str:
        """The trace, one line per API call, reconcile or note; calls made by a reconcile are indented."""
        entries: Iterable[Entry] = self.api.trace.entries if tail is None else self.api.trace.entries[-tail:]
        lines = []
        for e in entries:
            if isinstance(e, ApiCall) and e.reconcile is not None:
                lines.append("    " + e.render())
            else:
                lines.append(e.render())
        return "\n".join(lines)


__all__ = ["Actor", "Context", "Controller", "GarbageCollectorActor", "Host", "Request", "Result", "RunStats"]
