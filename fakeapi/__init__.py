"""fakeapi: a faithful in-memory Kubernetes API server and a deterministic controller host."""

from __future__ import annotations

from .clock import Clock, parse_duration
from .errors import (
    ApiError,
    is_already_exists,
    is_bad_request,
    is_conflict,
    is_expired,
    is_forbidden,
    is_invalid,
    is_not_found,
)
from .faults import ControllerCrash, FaultRule

__all__ = [
    "ApiError",
    "Clock",
    "ControllerCrash",
    "FaultRule",
    "is_already_exists",
    "is_bad_request",
    "is_conflict",
    "is_expired",
    "is_forbidden",
    "is_invalid",
    "is_not_found",
    "parse_duration",
]
