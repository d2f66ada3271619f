"""Controller selection: a case's ``controllers: [name, ...]`` runs only those of its bundles' controllers.

Upstream controller tests often start one reconciler against a real API
server (envtest) and play the other controllers' part by hand. A case does
the same with ``controllers: [ephemeralrunnerset]``: every bundle is still
installed (its kinds, simulators, operations and invariants stay), but only
the named controllers reconcile; the others are stopped and removed before
``given`` is stored, so they make no call at all.

The loader rejects unknown names (with the nearest valid one), duplicates, a
``controllers`` key in a case that hosts no bundle, and ``crash:`` of a
controller the case does not run.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

Problems = list[tuple[tuple[str | int, ...], bool, str]]


def _hint(name: str, options: Iterable[str]) -> str:
    opts = sorted(options)
    close = difflib.get_close_matches(name, opts, n=1, cutoff=0.6)
    if close:
        return f" (did you mean `{close[0]}`?)"
    return " (controllers of this case's bundles: " + (", ".join(opts) or "none") + ")"


def controller_selection_problems(data: dict[str, Any], hosted: dict[str, Any],
                                  controllers: set[str] | None) -> Problems:
    """Static checks of a case's ``controllers`` key (``controllers``: every controller of its bundles,
    None when that cannot be known)."""
    if "controllers" not in data:
        return []
    out: Problems = []
    wanted = data.get("controllers")
    if not isinstance(wanted, list):
        return out  # the schema reports the type
    if not (data.get("bundles") or []):
        return [(("controllers",), True, "`controllers` selects among the controllers of the case's bundles, "
                                         "and the case hosts no bundle")]
    seen: set[str] = set()
    for i, name in enumerate(wanted):
        if not isinstance(name, str):
            continue
        if name in seen:
            out.append((("controllers", i), False, f"controller `{name}` is listed twice"))
        seen.add(name)
        if controllers is not None and name not in controllers:
            out.append((("controllers", i), False, f"unknown controller `{name}`" + _hint(name, controllers)))
    for si, step in enumerate(data.get("steps") or []):
        if not isinstance(step, dict):
            continue
        for oi, op in enumerate(step.get("do") or []):
            target = op.get("crash") if isinstance(op, dict) else None
            if isinstance(target, str) and target != "all" and target not in seen \
                    and (controllers is None or target in controllers):
                out.append((("steps", si, "do", oi, "crash"), False,
                            f"`crash: {target}`: the case runs only {', '.join(sorted(seen)) or 'no controller'} "
                            "(see `controllers`)"))
    return out


def select_controllers(host: Any, wanted: Iterable[str]) -> list[str]:
    """Stop and remove every hosted controller not in ``wanted``; returns the names in ``wanted`` the host
    does not have (the caller reports them)."""
    keep = list(wanted)
    missing = [n for n in keep if n not in host.controllers]
    for name in [n for n in host.controllers if n not in keep]:
        ctrl = host.controllers.pop(name)
        ctrl.stop()
    return missing
