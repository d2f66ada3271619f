"""Loading bundles from modules: ``fakeapi run -p MODULE``, ``pytest -p MODULE``, ``FAKEAPI_PLUGINS``.

A project that is not installed (no ``fakeapi.bundles`` entry point yet, or
a bundle kept in a test folder) names the module that defines its bundle.
Importing the module registers every :class:`~fakeapi.harness.bundles.Bundle`
it holds at module level (and any it registers itself with
``register_bundle``), as pytest's ``-p`` imports a plugin module.
``FAKEAPI_PLUGINS`` (comma-separated module names, like ``PYTEST_PLUGINS``)
does the same for every run, in pytest and in ``fakeapi run``.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

from fakeapi.harness.bundles import Bundle, register_bundle

ENV = "FAKEAPI_PLUGINS"


class PluginError(Exception):
    """A plugin module that cannot be imported, or that holds no bundle."""


def register_module_bundles(module: ModuleType) -> list[Bundle]:
    """Register the bundles a module holds at module level; returns them."""
    found = [v for v in vars(module).values() if isinstance(v, Bundle)]
    for b in found:
        register_bundle(b)
    return found


def load_plugin(name: str) -> list[Bundle]:
    """Import module ``name`` and register its bundles (a :class:`PluginError` when it cannot be imported)."""
    from fakeapi.harness.bundles import _REGISTRY

    before = set(_REGISTRY)
    try:
        module = importlib.import_module(name)
    except ImportError as e:
        raise PluginError(f"cannot import plugin module `{name}`: {e} (is its folder on PYTHONPATH, or the project "
                          "installed?)") from None
    except Exception as e:  # the module itself fails
        raise PluginError(f"plugin module `{name}` failed to import: {type(e).__name__}: {e}") from None
    bundles = register_module_bundles(module)
    registered = [_REGISTRY[n] for n in sorted(set(_REGISTRY) - before) if _REGISTRY[n] not in bundles]
    if not bundles and not registered:
        raise PluginError(f"plugin module `{name}` defines no Bundle (define one at module level, or call "
                          "register_bundle() when it is imported)")
    return bundles + registered


def env_plugins() -> list[str]:
    """The module names in ``FAKEAPI_PLUGINS``."""
    return [m.strip() for m in os.environ.get(ENV, "").split(",") if m.strip()]


__all__ = ["ENV", "PluginError", "env_plugins", "load_plugin", "register_module_bundles"]
