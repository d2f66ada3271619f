"""The errors of applying a patch, each with the HTTP code kube-apiserver answers it with.

Kept apart from :mod:`fakeapi.machinery.patches` so that module can be compiled (``FAKEAPI_MYPYC=1``)
while these stay ordinary Python exception classes with class attributes.
"""

from __future__ import annotations

MAX_JSON_PATCH_OPERATIONS = 10_000
GENERIC_INVALID_MESSAGE = "the server rejected our request due to an error in our request"


class PatchError(Exception):
    """A patch that cannot be applied; ``str(err)`` is the message."""

    code = 500

    @property
    def message(self) -> str:
        """The message text."""
        return str(self)


class PatchFormatError(PatchError):
    """The patch cannot be decoded or is malformed: 400 BadRequest with this message."""

    code = 400


class PatchApplyError(PatchError):
    """Applying the patch failed: 422 Invalid with the generic message (``detail`` is the library's text)."""

    code = 422

    def __init__(self, detail: str = "") -> None:
        super().__init__(GENERIC_INVALID_MESSAGE)
        self.detail = detail


class PatchTooLargeError(PatchError):
    """More than 10,000 JSON Patch operations: 413 RequestEntityTooLarge with this message."""

    code = 413


class PatchInternalError(PatchError):
    """A strategic-merge error kube-apiserver surfaces as a plain 500 (no reason) with this message."""

    code = 500
