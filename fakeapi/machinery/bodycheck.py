"""Whole-body sanity checks: what a request body may hold before anything is committed.

A body reaching kube-apiserver is JSON (or YAML converted to JSON): it can hold
only objects with string keys, arrays, strings, finite numbers, booleans and
null. A Python caller of the in-process server can hand over anything, and a
value JSON cannot hold (a set, bytes, a complex number, a Decimal, a datetime,
NaN or an infinity, a string with a lone surrogate) would be stored and break
every later read, list and watch that encodes it. :func:`body_problem` finds
the first such value, with its path, in one iterative walk (no recursion, so no
``RecursionError`` however deep the body), and bounds the nesting depth.

The limits:

* :data:`MAX_DEPTH` levels of nesting, kube-apiserver's: Go's JSON scanner
  (``encoding/json`` and its fork ``sigs.k8s.io/json``, scanner.go
  ``maxNestingDepth = 10000``) refuses a value nested deeper with the syntax
  error ``invalid character '{' exceeded max depth``, which :func:`loads` gives
  for JSON text. fakeapi's recursive algorithms (patches, schema validation,
  field ownership, Python's own ``json``) run on the Python stack at about one
  frame a level: a body nested deeper than :data:`ROOM_FROM` levels first raises
  the interpreter's recursion limit far enough for :data:`MAX_DEPTH`
  (:func:`ensure_room`; once, and never lowered again), so such a body is
  handled as kube-apiserver handles it, never a ``RecursionError``. Real objects
  nest a few dozen levels and leave the limit alone.
* :data:`MAX_REQUEST_BYTES`, kube-apiserver's request body limit
  (``MaxRequestBodyBytes``, 3 MiB): 413 ``Request entity too large: limit is 3145728``.
* :data:`MAX_OBJECT_BYTES`, etcd's request size limit (``--max-request-bytes``,
  1.5 MiB), which kube-apiserver reports as a 500 ``etcdserver: request is too large``.
  fakeapi measures the object's compact JSON (etcd holds protobuf for built-in
  kinds, JSON for custom ones: within a few percent for most objects).
"""

from __future__ import annotations

import json
import math
import re
import sys
import threading
from typing import Any, NoReturn

import orjson

from fakeapi.machinery import errors

#: The deepest nesting of objects and arrays a body may have: Go's ``maxNestingDepth``.
MAX_DEPTH = 10000
#: A body nested deeper than this raises the recursion limit (:func:`ensure_room`).
ROOM_FROM = 200
#: Python frames a level of nesting may take in fakeapi's recursive walks (measured: about one;
#: Python's ``json`` and ``==`` one each), with room to spare.
FRAMES_PER_LEVEL = 4
#: Frames beyond a walk of :data:`MAX_DEPTH` levels: the caller's stack and the server's own.
_ROOM_SLACK = 5000
_room_lock = threading.Lock()
#: The levels ``metadata.managedFields`` may nest beyond :data:`MAX_DEPTH`: its ``fieldsV1`` mirror the
#: object's fields three levels down (list, entry, fieldsV1), so an object at the bound keeps them.
MANAGED_FIELDS_SLACK = 8
#: kube-apiserver's ``MaxRequestBodyBytes`` (k8s.io/apiserver/pkg/server/config.go).
MAX_REQUEST_BYTES = 3 * 1024 * 1024
#: etcd's default ``--max-request-bytes`` (1.5 MiB), the bound on a stored object.
MAX_OBJECT_BYTES = 1572864
#: What etcd answers for a write over :data:`MAX_OBJECT_BYTES` (kube-apiserver passes it on as a 500).
OBJECT_TOO_LARGE = "etcdserver: request is too large"

_SCALARS = (str, int, float, bool, type(None))


class BodyProblem(ValueError):
    """A value a JSON body cannot hold, or a body nested too deep; ``path`` says where."""

    def __init__(self, message: str, path: tuple[str | int, ...]) -> None:
        where = dotted(path)
        super().__init__(f"{message} (at {where})" if where else message)
        self.message = message
        self.path = path


def dotted(path: tuple[str | int, ...]) -> str:
    """``spec.containers[0].name`` for ``("spec", "containers", 0, "name")``."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _go_float(v: float) -> str:
    """How Go's ``strconv.FormatFloat(v, 'g', -1, 64)`` writes a non-finite float."""
    if math.isnan(v):
        return "NaN"
    return "+Inf" if v > 0 else "-Inf"


def _type_name(v: Any) -> str:
    t = type(v)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def string_problem(s: str) -> str | None:
    """Why ``s`` is not valid Unicode text (a lone surrogate), else None."""
    if s.isascii():
        return None
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        return f"invalid Unicode: lone surrogate {s[e.start]!a} in a string"
    return None


def body_problem(value: Any, *, max_depth: int = MAX_DEPTH) -> BodyProblem | None:
    """The first thing wrong with ``value`` as a JSON body, or None when it is a JSON value within bounds.

    Checked: only dict (string keys), list, str, int, float, bool and None; strings are valid
    Unicode; floats are finite; nesting is at most ``max_depth`` containers deep.
    """
    return _scan(value, max_depth)[0]


def ensure_room() -> None:
    """Let this process recurse through a value :data:`MAX_DEPTH` levels deep: raise the interpreter's
    recursion limit to the frames in use plus :data:`FRAMES_PER_LEVEL` per level (never lowers it).

    Called for a body nested deeper than :data:`ROOM_FROM` levels (what is stored can be read back
    later, so the limit stays raised). Python 3.11 and later run Python-to-Python calls without the
    C stack, and the C recursions a deep value meets (``json``, ``==``) take a few hundred bytes a
    level, within any thread's stack at this depth.
    """
    frame: Any = sys._getframe()
    in_use = 0
    while frame is not None:
        in_use += 1
        frame = frame.f_back
    need = in_use + MAX_DEPTH * FRAMES_PER_LEVEL + _ROOM_SLACK
    with _room_lock:
        if sys.getrecursionlimit() < need:
            sys.setrecursionlimit(need)


#: A JSON string (to skip when counting brackets).
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")


def text_depth_problem(text: str | bytes) -> str | None:
    """Go's scanner error for JSON ``text`` nested deeper than :data:`MAX_DEPTH` (``invalid character
    '[' exceeded max depth``, the bracket that goes past), or None. One iterative pass."""
    s = text if isinstance(text, str) else text.decode("utf-8", "replace")
    depth = 0
    for m in _BRACKET.finditer(_JSON_STRING.sub("", s)):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return f"invalid character '{c}' exceeded max depth"
        else:
            depth -= 1
    return None


def loads(text: str | bytes, **kw: Any) -> Any:
    """``json.loads`` with kube-apiserver's nesting bound and never a ``RecursionError``.

    Text with more opening brackets than :data:`MAX_DEPTH` is scanned for Go's bound first: past it,
    a :class:`BodyProblem` (a ``ValueError``) in Go's words. Text nested deeper than Python's
    recursion limit allows is decoded with room (:func:`ensure_room`). Other errors are ``json.loads``'s.
    """
    opening = (text.count("{") + text.count("[")) if isinstance(text, str) else (text.count(b"{") + text.count(b"["))
    if opening > MAX_DEPTH:
        problem = text_depth_problem(text)
        if problem is not None:
            raise BodyProblem(problem, ())
    try:
        return json.loads(text, **kw)
    except RecursionError:
        pass
    ensure_room()
    return json.loads(text, **kw)


def _path(link: Any) -> tuple[str | int, ...]:
    out: list[str | int] = []
    while link is not None:
        link, key = link
        out.append(key)
    return tuple(reversed(out))


def _scan(value: Any, max_depth: int) -> tuple[BodyProblem | None, int]:
    """:func:`body_problem`, and a lower bound of the size of ``value``'s JSON in bytes (when it has none).

    One iterative walk; the path of each container is a (parent, key) link, made a tuple only for an error.
    """
    chars = 0
    stack: list[tuple[Any, int, Any]] = [(value, 0, None)]
    pop, push = stack.pop, stack.append
    room = min(ROOM_FROM, max_depth)  # (past it: the bound, or room to recurse made once)
    while stack:
        v, depth, link = pop()
        if isinstance(v, (dict, list)):
            if depth >= room:
                if depth >= max_depth:
                    return BodyProblem(f"exceeded max depth of {max_depth}", _path(link)), chars
                ensure_room()
                room = max_depth
            chars += 2
            if isinstance(v, dict):
                for k, item in v.items():
                    if type(k) is not str and not isinstance(k, str):
                        return BodyProblem(f"json: unsupported type: a map key of type {_type_name(k)}",
                                           _path(link)), chars
                    chars += len(k) + 3
                    if not k.isascii() and (why := string_problem(k)) is not None:
                        return BodyProblem(why + " (a map key)", _path(link)), chars
                    ti = type(item)
                    if ti is str:
                        chars += len(item) + 2
                        if not item.isascii() and (why := string_problem(item)) is not None:
                            return BodyProblem(why, _path((link, k))), chars
                    elif ti is int or ti is bool or item is None:
                        chars += 1
                    elif k == "managedFields" and depth == 1 and link == (None, "metadata"):
                        push((item, depth + 1 - MANAGED_FIELDS_SLACK, (link, k)))
                    else:
                        push((item, depth + 1, (link, k)))
            else:
                for i, item in enumerate(v):
                    ti = type(item)
                    if ti is str:
                        chars += len(item) + 2
                        if not item.isascii() and (why := string_problem(item)) is not None:
                            return BodyProblem(why, _path((link, i))), chars
                    elif ti is int or ti is bool or item is None:
                        chars += 1
                    else:
                        push((item, depth + 1, (link, i)))
            continue
        chars += 1
        if isinstance(v, float):
            if not math.isfinite(v):
                return BodyProblem(f"json: unsupported value: {_go_float(v)}", _path(link)), chars
            continue
        if isinstance(v, str):
            chars += len(v) + 1
            why = string_problem(v)
            if why is not None:
                return BodyProblem(why, _path(link)), chars
            continue
        if isinstance(v, _SCALARS):
            continue
        return BodyProblem(f"json: unsupported type: {_type_name(v)}", _path(link)), chars
    return None, chars


def encoded_size(value: Any) -> int:
    """The size in bytes of ``value`` as compact UTF-8 JSON (``value`` must be a JSON value)."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def too_large(value: Any, limit: int = MAX_OBJECT_BYTES) -> bool:
    """Is ``value``'s compact JSON over ``limit`` bytes? Cheap for small objects: the exact size is
    computed only when a lower bound (the characters of its strings) comes near the limit."""
    chars = 0
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            chars += len(v) + 2
        elif isinstance(v, dict):
            for k, item in v.items():
                chars += len(k) + 3
                stack.append(item)
        elif isinstance(v, list):
            chars += 1
            stack.extend(v)
        else:
            chars += 1
        if chars > limit:
            return True
    if chars * 24 < limit:  # (each counted unit is at most 24 bytes: a number, or a character escaped)
        return False
    return encoded_size(value) > limit


def check_body(value: Any, *, max_depth: int = MAX_DEPTH, json_only: bool = False) -> int:
    """Raise the 400 ``BadRequest`` of :func:`body_problem` for a body JSON cannot hold (or nested too deep).

    Returns a lower bound of the body's size as JSON (bytes). A small body :func:`_plain_size` settles
    answers its orjson size instead of the walk's count: both are under :data:`SMALL_BODY`, the size below
    which the patch path (:func:`check_patched`) takes the same decision whatever the number.
    ``json_only``: the caller knows that ``value`` holds JSON values alone (what a Go client marshals):
    see :func:`_plain_size`.
    """
    size = _plain_size(value, max_depth, json_only)
    if size is not None and size < SMALL_BODY:
        return size
    problem, chars = _scan(value, max_depth)
    if problem is not None:
        raise errors.bad_request(str(problem))
    return chars


def check_object(value: Any, *, json_only: bool = False) -> None:
    """:func:`check_body`, then the stored-object size: etcd's 500 ``etcdserver: request is too large``.

    Most bodies are settled at C speed by :func:`_plain_size`; the others (and every faulty one) take
    the walk, which finds the first problem and its path. ``json_only``: as for :func:`check_body`.
    """
    if _plain_size(value, MAX_DEPTH, json_only) is not None:
        return
    problem, chars = _scan(value, MAX_DEPTH)
    if problem is not None:
        raise errors.bad_request(str(problem))
    # (chars bounds the JSON from below; each counted unit is at most 24 bytes: a number, an escape)
    if chars > MAX_OBJECT_BYTES or (chars * 24 >= MAX_OBJECT_BYTES and encoded_size(value) > MAX_OBJECT_BYTES):
        raise errors.internal(OBJECT_TOO_LARGE)


#: orjson hands every subclass of a builtin type, every dataclass and every date or time to ``default``
#: (:func:`_refuse`), instead of serialising them: the walk decides about those.
_PASSTHROUGH = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def _refuse(value: Any) -> NoReturn:
    raise TypeError


def _plain_size(value: Any, max_depth: int, json_only: bool = False) -> int | None:
    """The size of ``value`` as orjson writes it, when that settles that ``value`` is a JSON value
    :func:`check_object` accepts without walking it in Python; else None (walk it).

    Settled when orjson serialises it (dicts with ``str`` keys, lists, tuples, valid ``str``, ints within
    64 bits, floats, bools, None; a few other types it writes in its own way), the text read back equals
    ``value`` (so it held only dicts, lists, ``str``, ints, finite floats, bools and None: a tuple, NaN, an
    infinity, a UUID or an enum member reads back as something else), it has fewer brackets than
    :data:`ROOM_FROM` and ``max_depth`` (so it nests less deep: :func:`_scan` would neither fail nor call
    :func:`ensure_room`), and it is under half of :data:`MAX_OBJECT_BYTES` (the exact size is at most twice
    orjson's: only a float can take more characters in Python's ``json``, two at most). The size is a lower
    bound of the exact one.

    ``json_only``: the caller knows that ``value`` holds nothing but dicts, lists, ``str``, ints, finite floats,
    bools and None (a body a Go client marshals: JSON itself; the server checks that trust with
    ``FAKEAPI_CHECK_SNAPSHOTS=1``, :func:`is_json_only`), so the text is not read back to compare (the
    other conditions are checked all the same).
    """
    try:
        data = orjson.dumps(value, default=_refuse, option=_PASSTHROUGH)
    except TypeError:  # (orjson.JSONEncodeError is one)
        return None
    size = len(data)
    if size * 2 >= MAX_OBJECT_BYTES:
        return None
    room = min(ROOM_FROM, max_depth)
    # (issue 22: a level of nesting takes two bytes at least, its brackets, so a text of fewer than 2 * room
    # bytes nests fewer than room levels deep: most bodies are not counted)
    if size >= 2 * room and data.count(b"{") + data.count(b"[") >= room:
        return None
    return size if json_only or orjson.loads(data) == value else None


def is_json_only(value: Any) -> bool | None:
    """Does ``value`` hold JSON values alone, as orjson writes and reads them back (what ``json_only`` trusts)?
    None: orjson cannot write it (a value it refuses, an int past 64 bits, a lone surrogate, nesting past its
    bound), so it takes the walk whatever the trust."""
    try:
        data = orjson.dumps(value, default=_refuse, option=_PASSTHROUGH)
    except TypeError:
        return None
    return bool(orjson.loads(data) == value)


#: A body smaller than this (bytes) is small for :func:`check_patched` and :func:`check_merge_patched`:
#: the patched object's size is not measured (``patch_chars * 24 * 16 < MAX_OBJECT_BYTES``).
SMALL_BODY = MAX_OBJECT_BYTES // (24 * 16)


def check_patched(result: Any, base: Any, patch_chars: int, *, json_only: bool = False) -> None:
    """:func:`check_object` for a patch's result that shares what it left as it was with ``base`` (the stored
    object, checked when it was stored): only the values that are not ``base``'s own are walked.

    ``patch_chars`` is what :func:`check_body` said of the patch (checked before it was applied). The
    size is measured when the patch could make a difference (it is over 1/16 of the limit), else the
    result is taken as the stored object's size: a small patch to an object already near etcd's limit
    goes through. ``json_only``: the parts not ``base``'s hold JSON values alone (as for :func:`check_body`).
    """
    stack: list[tuple[Any, Any, int]] = [(result, base, 0)]
    while stack:
        v, b, depth = stack.pop()
        if isinstance(v, dict) and isinstance(b, dict):
            if depth >= MAX_DEPTH:
                raise errors.bad_request(f"exceeded max depth of {MAX_DEPTH}")
            for k, item in v.items():
                was = b.get(k, _MISSING)
                if item is was:
                    continue  # (stored, and checked when it was)
                if isinstance(item, dict) and isinstance(was, dict):
                    stack.append((item, was, depth + 1))
                elif type(k) is str and k.isascii() and (
                        (type(item) is str and item.isascii()) or type(item) is int or type(item) is bool or item is None):
                    continue  # (what _scan would find fine: an ASCII key to an ASCII string, an int, a bool, null)
                else:
                    slack = MANAGED_FIELDS_SLACK if k == "managedFields" and depth == 1 else 0
                    _check_part({k: item}, MAX_DEPTH - depth + slack, json_only)
        elif v is not b:
            _check_part(v, MAX_DEPTH - depth, json_only)
    if patch_chars >= SMALL_BODY and encoded_size(result) > MAX_OBJECT_BYTES:
        raise errors.internal(OBJECT_TOO_LARGE)


_MISSING: Any = object()


def _check_part(value: Any, max_depth: int, json_only: bool = False) -> None:
    """The walk's 400 for a part of a patched object that is not the stored object's; a part
    :func:`_plain_size` settles (most: a list of conditions, a changed status) is not walked."""
    if _plain_size(value, max_depth, json_only) is not None:
        return
    problem, _ = _scan(value, max_depth)
    if problem is not None:
        raise errors.bad_request(str(problem))


def check_merge_patched(result: Any, patch_chars: int) -> None:
    """:func:`check_patched` for the result of a JSON merge patch (RFC 7386): only the size is measured.

    A merge patch puts each of its values at the path it has in the patch (merged into the stored
    map there, or replacing what was there), so every value of the result is the stored object's
    own (checked when it was stored) or a part of the patch at the same depth, which
    :func:`check_body` checked (``patch_chars``: what it said of the patch). Nothing is left to walk.
    """
    if patch_chars >= SMALL_BODY and encoded_size(result) > MAX_OBJECT_BYTES:
        raise errors.internal(OBJECT_TOO_LARGE)


def _replace_in(s: str) -> str:
    return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace") if string_problem(s) else s


def replace_lone_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) replaced by U+FFFD, as Go's JSON
    decoder reads an unpaired ``\\ud800`` escape. Containers are changed in place; returns the value."""
    if isinstance(value, str):
        return _replace_in(value)
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            for k in list(v):
                item = v[k]
                if isinstance(item, str):
                    item = _replace_in(item)
                elif isinstance(item, (dict, list)):
                    stack.append(item)
                nk = _replace_in(k)
                if nk is not k:
                    del v[k]
                v[nk] = item
        elif isinstance(v, list):
            for i, item in enumerate(v):
                if isinstance(item, str):
                    v[i] = _replace_in(item)
                elif isinstance(item, (dict, list)):
                    stack.append(item)
    return value
