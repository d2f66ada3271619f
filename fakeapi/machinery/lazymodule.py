"""A module imported when first used: the cold start's lever (issue 22).

``import fakeapi`` and the first ``APIServer()`` load every built-in kind's strategy, but a server
that never sees a Deployment never runs apps' validation, and without a bytecode cache each module
imported is compiled from source first. So a strategy module names its group's validation and
defaults modules with :func:`lazy_module`: the name stands for the module until something reads
an attribute through it, which imports the module and puts it in the name's place, so later reads
are those of a plain module global.

(``importlib.util.LazyLoader`` does the same for a whole module, but on Python 3.11 a second thread
reading the module while the first loads it sees it half-initialised; here the import is
:func:`importlib.import_module`'s, under the import system's own module lock.)
"""

from __future__ import annotations

import importlib
import sys
from typing import Any


class LazyModule:
    """Stands for the module ``target`` in the globals of module ``owner`` under ``attr`` until its
    first attribute is read."""

    __slots__ = ("_attr", "_owner", "_target")

    def __init__(self, owner: str, attr: str, target: str) -> None:
        self._owner = owner
        self._attr = attr
        self._target = target

    def __getattr__(self, name: str) -> Any:
        """Import the module, put it in the owner's globals in place of this stand-in, read ``name``."""
        module = importlib.import_module(self._target)
        owner = sys.modules.get(self._owner)
        if owner is not None and getattr(owner, self._attr, None) is self:
            setattr(owner, self._attr, module)
        return getattr(module, name)

    def __repr__(self) -> str:
        return f"<module {self._target!r}, imported on first use>"


def lazy_module(owner: str, target: str, attr: str = "") -> Any:
    """A stand-in for module ``target`` (dotted name) to bind at module level in module ``owner``
    (pass ``__name__``) under ``attr`` (by default the target's last name): ``validation =
    lazy_module(__name__, "fakeapi.registry.apps.validation")``. Bind the real import under
    ``if TYPE_CHECKING:`` beside it, so type checkers and the layering test see the dependency."""
    return LazyModule(owner, attr or target.rpartition(".")[2], target)


def lazy_exports(package: str, homes: dict[str, str], names: list[str]) -> tuple[Any, Any]:
    """A package's ``__getattr__`` and ``__dir__`` for public names imported from their home module on
    first use (``homes``: name -> module), each then kept in the package's globals: a process that
    needs one corner of the package does not load the rest."""
    space = sys.modules[package].__dict__

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        space[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*space, *names})

    getattr_.__doc__ = f"The public names of {package}, each imported from its module on first use."
    dir_.__doc__ = "The module's names, the lazily imported public ones included."
    return getattr_, dir_
