"""Fixtures shared by the server tests (helpers live in tests/support.py)."""

from __future__ import annotations

import pytest
from support import make_api

from fakeapi.server import APIServer


@pytest.fixture
def api() -> APIServer:
    """A server with namespace ``ns`` and the Widget CRD (status subresource on)."""
    return make_api()


@pytest.fixture
def api_nostatus() -> APIServer:
    """A server with namespace ``ns`` and the Widget CRD without the status subresource."""
    return make_api(status=False)
