"""The allocations the stored Services hold, indexed: cluster IPs and node ports, counted.

The Service table keeps an :class:`AllocationIndex` (:class:`fakeapi.server.store.Table`), so
a Service's create or update reads what is in use (:mod:`fakeapi.registry.core.serviceallocation`)
without going through every stored Service. Kept apart from the allocator so the store need not
import it (or ``ipaddress``) before a Service is written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, Generic, TypeVar

#: A headless Service's cluster IP.
NONE = "None"

T = TypeVar("T")


def held_by(svc: dict[str, Any]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The cluster IPs and node ports (the health check's included) one stored Service holds."""
    spec = svc.get("spec") or {}
    ips = tuple(ip for ip in spec.get("clusterIPs") or () if isinstance(ip, str) and ip != NONE)
    ports = [p["nodePort"] for p in spec.get("ports") or ()
             if isinstance(p, dict) and isinstance(p.get("nodePort"), int) and p["nodePort"]]
    if isinstance(spec.get("healthCheckNodePort"), int) and spec["healthCheckNodePort"]:
        ports.append(spec["healthCheckNodePort"])
    return ips, tuple(ports)


class Held(Generic[T]):
    """The values in use, as a set to test and add to: counted holders, less some, plus some.

    A value is in use while some holder not left out still holds it (two Services may hold one
    node port: a TCP and a UDP entry), or once added; ``discard`` and ``-`` take values out
    whoever holds them. Reading it costs what the request asks, not the number of Services.
    """

    __slots__ = ("_added", "_counts", "_less", "_removed")

    def __init__(self, counts: Counter[T], less: Iterable[T] = (), added: Iterable[T] = ()) -> None:
        self._counts = counts
        #: How many holders of each value are left out (a plain dict: no Counter built per request).
        self._less: dict[T, int] = {}
        for v in less:
            self._less[v] = self._less.get(v, 0) + 1
        self._added: set[T] = set(added)
        self._removed: set[T] = set()

    def __contains__(self, value: object) -> bool:
        if value in self._added:
            return True
        if value in self._removed:
            return False
        held = self._counts.get(value, 0)  # type: ignore[arg-type]
        return held > 0 and held > self._less.get(value, 0)  # type: ignore[arg-type]

    def add(self, value: T) -> None:
        """Mark ``value`` in use."""
        self._removed.discard(value)
        self._added.add(value)

    def discard(self, value: T) -> None:
        """Mark ``value`` free, whoever holds it."""
        self._added.discard(value)
        self._removed.add(value)

    def __sub__(self, values: Iterable[T]) -> Held[T]:
        out: Held[T] = Held(self._counts)
        out._less, out._added, out._removed = dict(self._less), set(self._added), set(self._removed)
        for v in values:
            out.discard(v)
        return out

    def as_set(self) -> set[T]:
        """Every value in use (O(values): for tests and comparisons)."""
        held = {v for v, n in self._counts.items() if n > self._less.get(v, 0)}
        return (held | self._added) - self._removed


class AllocationIndex:
    """The cluster IPs and node ports the stored Services hold, kept by the Service table.

    The table adds and removes each entry as it is stored or removed (a rolled back request
    restores its entries the same way), so a create reads what is in use without scanning
    every Service.
    """

    __slots__ = ("by_key", "ips", "ports")

    def __init__(self) -> None:
        self.ips: Counter[str] = Counter()
        self.ports: Counter[int] = Counter()
        self.by_key: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {}

    def add(self, key: str, svc: dict[str, Any]) -> None:
        """The Service at ``key`` is stored (replacing what was there)."""
        self.remove(key)
        held = held_by(svc)
        if held[0] or held[1]:
            self.by_key[key] = held
            ips, ports = self.ips, self.ports  # (plain loops: Counter.update's Mapping check costs more)
            for ip in held[0]:
                ips[ip] = ips.get(ip, 0) + 1
            for port in held[1]:
                ports[port] = ports.get(port, 0) + 1

    def remove(self, key: str) -> None:
        """The Service at ``key`` is gone."""
        held = self.by_key.pop(key, None)
        if held is not None:
            ips, ports = self.ips, self.ports
            for ip in held[0]:
                n = ips.get(ip, 0) - 1
                if n > 0:
                    ips[ip] = n
                else:
                    ips.pop(ip, None)
            for port in held[1]:
                m = ports.get(port, 0) - 1
                if m > 0:
                    ports[port] = m
                else:
                    ports.pop(port, None)

    def in_use(self, except_key: str | None = None, reserved: Iterable[str] = ()) -> tuple[Held[str], Held[int]]:
        """What is in use, the Service at ``except_key`` left out (an update's own allocations),
        ``reserved`` added."""
        return self.ips_in_use(except_key, reserved), self.ports_in_use(except_key)

    def ips_in_use(self, except_key: str | None = None, reserved: Iterable[str] = ()) -> Held[str]:
        """The cluster IPs of :meth:`in_use`."""
        own = self.by_key.get(except_key) if except_key is not None else None
        return Held(self.ips, own[0] if own is not None else (), reserved)

    def ports_in_use(self, except_key: str | None = None) -> Held[int]:
        """The node ports of :meth:`in_use`."""
        own = self.by_key.get(except_key) if except_key is not None else None
        return Held(self.ports, own[1] if own is not None else ())
