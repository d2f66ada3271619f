"""Wires the fixture harness into this repository's own test run.

An installed fakeapi registers its pytest plugin through the ``pytest11``
entry point, and ``fakeapi_fixtures`` in pyproject.toml makes every YAML file
under ``fixtures/`` a fixture file. When the package is only on the path (a
source checkout that was not pip-installed), load the plugin from here so
``pytest`` still collects the fixtures.
"""

from __future__ import annotations

from importlib.metadata import entry_points

if not any(ep.value == "fakeapi.harness.plugin" for ep in entry_points(group="pytest11")):
    pytest_plugins = ["fakeapi.harness.plugin"]
