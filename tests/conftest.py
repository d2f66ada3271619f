"""Fixtures shared by the server tests (helpers live in tests/support.py)."""

from __future__ import annotations

import pytest
from support import make_api

from fakeapi.server.apiserver import APIServer


@pytest.fixture
def api() -> APIServer:
    """A server with namespace ``ns`` and the Widget CRD (status subresource on)."""
    return make_api()


@pytest.fixture
def api_nostatus() -> APIServer:
    """A server with namespace ``ns`` and the Widget CRD without the status subresource."""
    return make_api(status=False)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Start the slowest test first (the compiled build: about a minute when it is not cached), so
    that with ``pytest -n auto`` one worker builds while the others run everything else; run the
    tests that use the build (``after_build``) last, when it is done (the sort is stable, and the
    same on every worker, as xdist requires)."""
    items.sort(key=lambda item: 0 if item.get_closest_marker("slow_first") else
               2 if item.get_closest_marker("after_build") else 1)
