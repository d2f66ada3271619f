"""The one error type of fakeapi: an exception carrying a ``metav1.Status`` body.

Every failure the server produces is an :class:`ApiError` whose ``status`` is
exactly the JSON body kube-apiserver would send (same code, reason, message
and details), so that code written against client-go's ``apierrors`` helpers
reads the same here. The constructors below build the bodies of the error
catalogue in docs/APISERVER.md "Errors".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# Cause types (metav1.CauseType) used in details.causes[].reason.
FIELD_VALUE_REQUIRED = "FieldValueRequired"
FIELD_VALUE_INVALID = "FieldValueInvalid"
FIELD_VALUE_TYPE_INVALID = "FieldValueTypeInvalid"
FIELD_VALUE_NOT_SUPPORTED = "FieldValueNotSupported"
FIELD_VALUE_FORBIDDEN = "FieldValueForbidden"
FIELD_VALUE_DUPLICATE = "FieldValueDuplicate"
FIELD_VALUE_TOO_LONG = "FieldValueTooLong"
FIELD_VALUE_TOO_MANY = "FieldValueTooMany"
FIELD_VALUE_TOO_SHORT = "FieldValueTooShort"
FIELD_VALUE_TOO_FEW = "FieldValueTooFew"
FIELD_VALUE_NOT_FOUND = "FieldValueNotFound"

# HTTP code of each reason, for reasons given without a code (fault rules).
REASON_CODES: dict[str, int] = {
    "BadRequest": 400,
    "Unauthorized": 401,
    "Forbidden": 403,
    "NotFound": 404,
    "MethodNotAllowed": 405,
    "NotAcceptable": 406,
    "Conflict": 409,
    "AlreadyExists": 409,
    "Gone": 410,
    "Expired": 410,
    "RequestEntityTooLarge": 413,
    "UnsupportedMediaType": 415,
    "Invalid": 422,
    "TooManyRequests": 429,
    "InternalError": 500,
    "ServiceUnavailable": 503,
    "Timeout": 504,
    "ServerTimeout": 500,
}

REASON_MESSAGES: dict[str, str] = {
    "TooManyRequests": "the server has received too many requests and has asked us to try again later",
    "ServerTimeout": "the server cannot complete the requested operation at this time, try again later",
    "InternalError": "Internal error occurred: injected fault",
    "ServiceUnavailable": "the server is currently unable to handle the request",
    "Timeout": "the server was unable to return a response in the time allotted, but may still be processing the request",
}


@dataclass(frozen=True)
class Cause:
    """One entry of ``details.causes``: a field error (``field.Error`` in Go)."""

    reason: str
    message: str
    field: str = ""

    def to_dict(self) -> dict[str, str]:
        """The JSON form of the cause, as kube-apiserver sends it."""
        out = {"reason": self.reason, "message": self.message}
        if self.field:
            out["field"] = self.field
        return out

    def error_text(self) -> str:
        """``field: message``, the form joined into an Invalid error's message."""
        return f"{self.field}: {self.message}" if self.field else self.message


class GoValue(str):
    """A field error's BadValue already rendered as Go prints it (``%#v``, or a ``String()`` method):
    ``ErrorBody`` shows it as it is. (Here, not in the compiled metavalidation: mypyc cannot subclass str.)"""


class ApiError(Exception):
    """A failed API request: carries the ``metav1.Status`` body the server sends."""

    def __init__(self, status: dict[str, Any], warnings: list[str] | None = None) -> None:
        super().__init__(status.get("message", ""))
        self.status = status
        self.warnings = warnings or []

    @property
    def code(self) -> int:
        """The HTTP status code (``status.code``)."""
        return int(self.status.get("code", 500))

    @property
    def reason(self) -> str:
        """``status.reason``; empty for unknown (500) errors."""
        return str(self.status.get("reason", ""))

    @property
    def message(self) -> str:
        """``status.message``."""
        return str(self.status.get("message", ""))

    @property
    def details(self) -> dict[str, Any]:
        """``status.details`` (empty dict when absent)."""
        d = self.status.get("details")
        return d if isinstance(d, dict) else {}

    @property
    def causes(self) -> list[dict[str, Any]]:
        """``status.details.causes`` (empty list when absent)."""
        return list(self.details.get("causes") or [])

    def __repr__(self) -> str:
        return f"ApiError({self.code}, {self.reason!r}, {self.message!r})"

    def __str__(self) -> str:
        return self.message


def status_body(
    code: int,
    reason: str,
    message: str,
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Build a failure ``metav1.Status`` body (``reason`` omitted when empty)."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
    }
    if reason:
        body["reason"] = reason
    if details:
        body["details"] = details
    body["code"] = code
    return body


def _details(name: str, group: str, kind: str, **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if name:
        d["name"] = name
    if group:
        d["group"] = group
    if kind:
        d["kind"] = kind
    d.update({k: v for k, v in extra.items() if v not in (None, "", [])})
    return d


def qualified(resource: str, group: str) -> str:
    """``widgets.example.com`` / ``configmaps``: resource (or Kind) plus group."""
    return f"{resource}.{group}" if group else resource


# --- constructors, in the order of the catalogue (reference §5) ------------------


def not_found(group: str, resource: str, name: str) -> ApiError:
    """404 ``R "name" not found``."""
    return ApiError(
        status_body(
            404,
            "NotFound",
            f'{qualified(resource, group)} "{name}" not found',
            _details(name, group, resource),
        )
    )


def namespace_not_found(namespace: str) -> ApiError:
    """404 for a create in a namespace that does not exist."""
    return not_found("", "namespaces", namespace)


def resource_not_found() -> ApiError:
    """404 for a wrong path or scope: no details."""
    return ApiError(status_body(404, "NotFound", "the server could not find the requested resource"))


def already_exists(group: str, resource: str, name: str, *, generated: bool = False, deleting: bool = False) -> ApiError:
    """409 AlreadyExists (optionally the generateName-exhausted form)."""
    msg = f'{qualified(resource, group)} "{name}" already exists'
    if deleting:
        msg = "object is being deleted: " + msg
    details = _details(name, group, resource)
    if generated:
        msg += ", the server was not able to generate a unique name for the object"
        details["retryAfterSeconds"] = 1
    return ApiError(status_body(409, "AlreadyExists", msg, details))


OPTIMISTIC_LOCK_MSG = "the object has been modified; please apply your changes to the latest version and try again"


def conflict(group: str, resource: str, name: str, detail: str = OPTIMISTIC_LOCK_MSG) -> ApiError:
    """409 Conflict ``Operation cannot be fulfilled on R "name": detail``."""
    return ApiError(
        status_body(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": {detail}',
            _details(name, group, resource),
        )
    )


def invalid(group: str, kind: str, name: str, causes: list[Cause]) -> ApiError:
    """422 Invalid built from field errors: ``K "name" is invalid: <errs>``."""
    texts: list[str] = []
    for c in causes:
        t = c.error_text()
        if t not in texts:
            texts.append(t)
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return ApiError(
        status_body(
            422,
            "Invalid",
            f'{qualified(kind, group)} "{name}" is invalid: {joined}',
            _details(name, group, kind, causes=[c.to_dict() for c in causes]),
        )
    )


def generic_invalid(message: str = "the server rejected our request due to an error in our request") -> ApiError:
    """422 Invalid with no details (JSON Patch application failures)."""
    return ApiError(status_body(422, "Invalid", message))


def options_invalid(options_kind: str, causes: list[Cause]) -> ApiError:
    """422 for bad ListOptions / DeleteOptions / PatchOptions (group meta.k8s.io)."""
    return invalid("meta.k8s.io", options_kind, "", causes)


def bad_request(message: str) -> ApiError:
    """400 BadRequest with the given message."""
    return ApiError(status_body(400, "BadRequest", message))


def unsupported_media_type(accepted: list[str]) -> ApiError:
    """415 for a patch type the resource does not accept."""
    return ApiError(
        status_body(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: " + ", ".join(accepted),
        )
    )


def forbidden(group: str, resource: str, name: str, detail: str, causes: list[Cause] | None = None) -> ApiError:
    """403 ``R "name" is forbidden: detail``."""
    return ApiError(
        status_body(
            403,
            "Forbidden",
            f'{qualified(resource, group)} "{name}" is forbidden: {detail}',
            _details(name, group, resource, causes=[c.to_dict() for c in causes or []]),
        )
    )


def namespace_terminating(group: str, resource: str, name: str, namespace: str) -> ApiError:
    """403 for a create in a namespace that is being deleted."""
    return forbidden(
        group,
        resource,
        name,
        f"unable to create new content in namespace {namespace} because it is being terminated",
        [Cause("NamespaceTerminating", f"namespace {namespace} is being terminated", "metadata.namespace")],
    )


def expired(message: str) -> ApiError:
    """410 Expired (too old resourceVersion)."""
    return ApiError(status_body(410, "Expired", message))


def too_large_resource_version(requested: int, current: int) -> ApiError:
    """504 Timeout for a resourceVersion ahead of the server."""
    return ApiError(
        status_body(
            504,
            "Timeout",
            f"Too large resource version: {requested}, current: {current}",
            {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
             "retryAfterSeconds": 1},
        )
    )


def internal(message: str) -> ApiError:
    """500 with no reason: a non-Status error surfaced by the server."""
    return ApiError(status_body(500, "", message))


def from_reason(reason: str, *, group: str = "", resource: str = "", name: str = "", message: str | None = None,
                code: int | None = None) -> ApiError:
    """An error for a reason named by a fault rule, shaped like the real one where known."""
    if message is None:
        if reason == "NotFound" and resource:
            return not_found(group, resource, name)
        if reason == "AlreadyExists" and resource:
            return already_exists(group, resource, name)
        if reason == "Conflict" and resource:
            return conflict(group, resource, name)
        if reason == "Forbidden" and resource:
            return forbidden(group, resource, name, "injected fault")
        if reason == "Invalid" and resource:
            return invalid(group, resource, name, [Cause(FIELD_VALUE_INVALID, "Invalid value: injected fault", "spec")])
        message = REASON_MESSAGES.get(reason, f"injected {reason} fault")
    return ApiError(status_body(code if code is not None else REASON_CODES.get(reason, 500), reason, message,
                                _details(name, group, resource)))


def render_value(value: Any) -> str:
    """Render a value inside a field error as Go's field.Error does.

    Ints, floats and bools unquoted; strings quoted; anything else JSON-encoded.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) and not value.is_integer() else str(int(value))
    if isinstance(value, str):
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


# --- the client-go style predicates -------------------------------------------------


def _reason_or_code(err: BaseException, reason: str, code: int) -> bool:
    if not isinstance(err, ApiError):
        return False
    known = err.reason in REASON_CODES
    return err.reason == reason if known else err.code == code


def is_not_found(err: BaseException) -> bool:
    """True for a 404 NotFound (``apierrors.IsNotFound``)."""
    return _reason_or_code(err, "NotFound", 404)


def is_conflict(err: BaseException) -> bool:
    """True for a 409 Conflict (``apierrors.IsConflict``)."""
    return _reason_or_code(err, "Conflict", 409)


def is_already_exists(err: BaseException) -> bool:
    """True for a 409 AlreadyExists."""
    return isinstance(err, ApiError) and err.reason == "AlreadyExists"


def is_invalid(err: BaseException) -> bool:
    """True for a 422 Invalid."""
    return _reason_or_code(err, "Invalid", 422)


def is_forbidden(err: BaseException) -> bool:
    """True for a 403 Forbidden."""
    return _reason_or_code(err, "Forbidden", 403)


def is_bad_request(err: BaseException) -> bool:
    """True for a 400 BadRequest."""
    return _reason_or_code(err, "BadRequest", 400)


def is_expired(err: BaseException) -> bool:
    """True for a 410 Expired / Gone (``apierrors.IsResourceExpired`` / ``IsGone``)."""
    return isinstance(err, ApiError) and (err.reason in ("Expired", "Gone") or err.code == 410)


def is_too_many_requests(err: BaseException) -> bool:
    """True for a 429 TooManyRequests."""
    return _reason_or_code(err, "TooManyRequests", 429)
