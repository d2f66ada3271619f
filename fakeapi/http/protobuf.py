"""``application/vnd.kubernetes.protobuf``: the protobuf wire form of the built-in kinds.

What client-go's typed clients (``kubectl create namespace``, ``kubectl create
configmap``...) send and ask for. The message layouts are the upstream
``generated.proto`` files, compiled into ``k8s_protos.binpb`` by
:mod:`fakeapi.http.protobuf_generate` and loaded with the ``protobuf`` runtime;
the conversion to and from the JSON form walks the message descriptors.

The wire rules (``k8s.io/apimachinery/pkg/runtime/serializer/protobuf``):

* an object is the 4 bytes ``k8s\\x00`` followed by a ``runtime.Unknown``
  whose ``typeMeta`` names apiVersion and kind and whose ``raw`` is the
  object's message;
* a watch stream (``;stream=watch``) is a sequence of frames, each a 4-byte
  big-endian length and a ``meta.v1.WatchEvent`` whose ``object.raw`` is an
  object encoded as above.

The Go types with their own JSON form are converted as Go marshals them:
``metav1.Time`` / ``MicroTime`` (RFC 3339 / microseconds), ``resource.Quantity``
(its string), ``intstr.IntOrString`` (a number or a string), ``runtime.RawExtension``
and ``metav1.FieldsV1`` (embedded JSON), ``metav1.Duration`` (a Go duration),
``ExtraValue`` (a list); ``[]byte`` is base64 in JSON.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from fakeapi.machinery import errors

MAGIC = b"k8s\x00"
MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
WATCH_MEDIA_TYPE = "application/vnd.kubernetes.protobuf;stream=watch"
DESCRIPTORS = Path(__file__).with_name("k8s_protos.binpb")

_META = "k8s.io.apimachinery.pkg.apis.meta.v1."
TIME = _META + "Time"
MICRO_TIME = _META + "MicroTime"
FIELDS_V1 = _META + "FieldsV1"
DURATION = _META + "Duration"
QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
RAW_EXTENSION = "k8s.io.apimachinery.pkg.runtime.RawExtension"
UNKNOWN = "k8s.io.apimachinery.pkg.runtime.Unknown"
LIST_WRAPPERS = ("k8s.io.api.authentication.v1.ExtraValue", "k8s.io.api.authorization.v1.ExtraValue")

#: API groups whose package is not ``k8s.io.api.<first label>.<version>``.
_PACKAGES = {"apiregistration.k8s.io": "k8s.io.kube-aggregator.pkg.apis.apiregistration",
             "meta.k8s.io": "k8s.io.apimachinery.pkg.apis.meta"}


@lru_cache(maxsize=1)
def _pool() -> Any:
    from google.protobuf import descriptor_pb2, descriptor_pool

    fds = descriptor_pb2.FileDescriptorSet.FromString(DESCRIPTORS.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    return pool


@lru_cache(maxsize=1024)
def _descriptor(full_name: str) -> Any:
    try:
        return _pool().FindMessageTypeByName(full_name)
    except KeyError:
        return None


def _repeated(f: Any) -> bool:
    """A repeated field (``is_repeated`` in protobuf 6+, where ``label`` is gone; ``label`` before)."""
    flag = getattr(f, "is_repeated", None)
    return bool(flag) if flag is not None else f.label == 3  # (LABEL_REPEATED)


@lru_cache(maxsize=4096)
def _inline(desc: Any) -> frozenset[str]:
    """The fields of a message that Go embeds with ``json:",inline"`` (``IngressRule.ingressRuleValue``,
    ``Volume.volumeSource``, ``Probe.handler``...): message fields the OpenAPI definition of the same
    type has no property for (their fields are its properties)."""
    from google.protobuf.descriptor import FieldDescriptor as F

    from fakeapi.machinery.openapi import definitions

    try:
        props = definitions()["io.k8s." + desc.full_name[len("k8s.io."):]].get("properties") or {}
    except KeyError:
        return frozenset()
    return frozenset(f.name for f in desc.fields if f.type == F.TYPE_MESSAGE and not _repeated(f)
                     and f.name not in props and any(g.name in props for g in f.message_type.fields))


def _new(desc: Any) -> Any:
    from google.protobuf import message_factory

    return message_factory.GetMessageClass(desc)()


def message_for(api_version: str, kind: str) -> Any:
    """The message descriptor of ``apiVersion``/``kind`` (``v1``/``Status`` is meta's), or None."""
    group, _, version = api_version.rpartition("/")
    if not group and kind in ("Status", "DeleteOptions", "WatchEvent", "APIResourceList", "Table"):
        return _descriptor(_META + kind)
    package = _PACKAGES.get(group) or "k8s.io.api." + (group.split(".")[0] if group else "core")
    return _descriptor(f"{package}.{version}.{kind}")


def accepts(accept: str) -> bool:
    """Does the Accept header prefer protobuf (listed before any JSON type)?"""
    for part in accept.split(","):
        media = part.split(";", 1)[0].strip().lower()
        if media == MEDIA_TYPE:
            return True
        if media in ("application/json", "*/*", "application/yaml", "application/*"):
            return False
    return False


# ----------------------------------------------------------------- JSON -> message


def _bad(what: str) -> errors.ApiError:
    return errors.bad_request(f"unable to convert the object to protobuf: {what}")


def _fill(msg: Any, value: Any, path: str) -> None:
    """Set ``msg`` (a message instance) from its JSON form ``value``."""
    desc = msg.DESCRIPTOR
    name = desc.full_name
    if name in (TIME, MICRO_TIME):
        if not isinstance(value, str):
            raise _bad(f"{path}: a time must be a string")
        from fakeapi.server.clock import parse_time

        try:
            t = parse_time(value)
        except ValueError as e:
            raise _bad(f"{path}: {e}") from e
        msg.seconds = int(t.timestamp())
        msg.nanos = t.microsecond * 1000
        return
    if name == QUANTITY:
        msg.string = str(value)
        return
    if name == INT_OR_STRING:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise _bad(f"{path}: an int or a string")
        if isinstance(value, int):
            msg.type, msg.intVal = 0, value
        else:
            msg.type, msg.strVal = 1, value
        return
    if name == RAW_EXTENSION:
        msg.raw = json.dumps(value, separators=(",", ":")).encode()
        return
    if name == FIELDS_V1:
        msg.Raw = json.dumps(value, separators=(",", ":")).encode()
        return
    if name == DURATION:
        from fakeapi.server.clock import parse_duration

        try:
            msg.duration = round(parse_duration(str(value)).total_seconds() * 1e9)
        except ValueError as e:
            raise _bad(f"{path}: {e}") from e
        return
    if name in LIST_WRAPPERS:
        if not isinstance(value, list):
            raise _bad(f"{path}: a list")
        msg.items.extend(str(v) for v in value)
        return
    if not isinstance(value, dict):
        raise _bad(f"{path}: an object")
    msg.SetInParent()
    fields = desc.fields_by_name
    inline = _inline(desc)
    for key, v in value.items():
        f = fields.get(key)
        if f is None or v is None or key in inline:
            continue  # (unknown fields are dropped, as Go's decoder drops them)
        _set_field(msg, f, v, f"{path}.{key}")
    for key in inline:  # an embedded struct's fields are the object's own
        f = fields[key]
        if any(k in f.message_type.fields_by_name or _inline(f.message_type) for k in value):
            _fill(getattr(msg, key), value, path)


def _scalar(f: Any, v: Any, path: str) -> Any:
    from google.protobuf.descriptor import FieldDescriptor as F

    t = f.type
    if t == F.TYPE_STRING:
        if not isinstance(v, str):
            raise _bad(f"{path}: a string")
        return v
    if t == F.TYPE_BOOL:
        if not isinstance(v, bool):
            raise _bad(f"{path}: a bool")
        return v
    if t == F.TYPE_BYTES:
        if not isinstance(v, str):
            raise _bad(f"{path}: base64 text")
        try:
            return base64.b64decode(v.replace("\r", "").replace("\n", ""), validate=True)
        except (binascii.Error, ValueError) as e:
            raise _bad(f"{path}: {e}") from e
    if t in (F.TYPE_DOUBLE, F.TYPE_FLOAT):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise _bad(f"{path}: a number")
        return float(v)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        raise _bad(f"{path}: an integer")
    return int(v)


def _set_field(msg: Any, f: Any, v: Any, path: str) -> None:
    from google.protobuf.descriptor import FieldDescriptor as F

    is_message = f.type == F.TYPE_MESSAGE
    if is_message and f.message_type.GetOptions().map_entry:
        if not isinstance(v, dict):
            raise _bad(f"{path}: an object")
        target = getattr(msg, f.name)
        vf = f.message_type.fields_by_name["value"]
        for k, x in v.items():
            if x is None:
                continue
            if vf.type == F.TYPE_MESSAGE:
                _fill(target[k], x, f"{path}[{k}]")
            else:
                target[k] = _scalar(vf, x, f"{path}[{k}]")
        return
    if _repeated(f):
        if not isinstance(v, list):
            raise _bad(f"{path}: a list")
        target = getattr(msg, f.name)
        for i, x in enumerate(v):
            if is_message:
                _fill(target.add(), x, f"{path}[{i}]")
            else:
                target.append(_scalar(f, x, f"{path}[{i}]"))
        return
    if is_message:
        _fill(getattr(msg, f.name), v, path)
    else:
        setattr(msg, f.name, _scalar(f, v, path))


# ----------------------------------------------------------------- message -> JSON


def _time(seconds: int, nanos: int, micro: bool) -> str:
    t = datetime.fromtimestamp(seconds, UTC).replace(microsecond=nanos // 1000)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ") if micro else t.strftime("%Y-%m-%dT%H:%M:%SZ")


def to_json(msg: Any) -> Any:
    """The JSON form of a message (only its set fields, as Go's omitempty leaves them)."""
    from google.protobuf.descriptor import FieldDescriptor as F

    name = msg.DESCRIPTOR.full_name
    if name in (TIME, MICRO_TIME):
        return _time(msg.seconds, msg.nanos, name == MICRO_TIME)
    if name == QUANTITY:
        return msg.string
    if name == INT_OR_STRING:
        return msg.strVal if msg.type == 1 else msg.intVal
    if name in (RAW_EXTENSION, FIELDS_V1):
        raw = msg.raw if name == RAW_EXTENSION else msg.Raw
        try:
            return json.loads(raw) if raw else None
        except ValueError as e:
            raise errors.bad_request(f"embedded JSON does not parse: {e}") from e
    if name == DURATION:
        from datetime import timedelta

        from fakeapi.server.clock import format_duration

        return format_duration(timedelta(microseconds=msg.duration / 1000))
    if name in LIST_WRAPPERS:
        return list(msg.items)
    out: dict[str, Any] = {}
    inline = _inline(msg.DESCRIPTOR)
    for f, v in msg.ListFields():
        if f.name in inline:
            out.update(to_json(v))
        elif f.type == F.TYPE_MESSAGE and f.message_type.GetOptions().map_entry:
            vf = f.message_type.fields_by_name["value"]
            out[f.name] = {k: (to_json(x) if vf.type == F.TYPE_MESSAGE else _json_scalar(vf, x)) for k, x in v.items()}
        elif _repeated(f):
            out[f.name] = [to_json(x) if f.type == F.TYPE_MESSAGE else _json_scalar(f, x) for x in v]
        elif f.type == F.TYPE_MESSAGE:
            out[f.name] = to_json(v)
        else:
            out[f.name] = _json_scalar(f, v)
    return out


def _json_scalar(f: Any, v: Any) -> Any:
    from google.protobuf.descriptor import FieldDescriptor as F

    if f.type == F.TYPE_BYTES:
        return base64.b64encode(v).decode()
    return v


# ----------------------------------------------------------------- the wire


def encode(obj: dict[str, Any]) -> bytes | None:
    """An object's protobuf wire form (envelope included), or None when its kind has no message."""
    api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
    desc = message_for(api_version, kind)
    if desc is None:
        return None
    msg = _new(desc)
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    _fill(msg, body, kind)
    unknown = _new(_descriptor(UNKNOWN))
    unknown.typeMeta.apiVersion = api_version
    unknown.typeMeta.kind = kind
    unknown.raw = msg.SerializeToString()
    return MAGIC + unknown.SerializeToString()


def decode(data: bytes, api_version: str = "", kind: str = "") -> dict[str, Any]:
    """An object from its protobuf wire form; ``api_version``/``kind``: the URL's, when the
    envelope names none. 400 for anything that is not such an object."""
    from google.protobuf.message import DecodeError

    if not data.startswith(MAGIC):
        raise errors.bad_request("provided object is not a protobuf message: it lacks the k8s\\x00 prefix")
    try:
        unknown = _new(_descriptor(UNKNOWN))
        unknown.ParseFromString(data[len(MAGIC):])
        api_version = unknown.typeMeta.apiVersion or api_version
        kind = unknown.typeMeta.kind or kind
        desc = message_for(api_version, kind)
        if desc is None:
            raise errors.bad_request(f"no kind \"{kind}\" is registered for version \"{api_version}\"")
        msg = _new(desc)
        msg.ParseFromString(unknown.raw)
    except DecodeError as e:
        raise errors.bad_request(f"the protobuf body does not decode: {e}") from e
    out: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    out.update(to_json(msg))
    return out


def watch_frame(event_type: str, obj: Any) -> bytes:
    """One frame of a protobuf watch stream: the length, then a WatchEvent holding the encoded object."""
    event = _new(_descriptor(_META + "WatchEvent"))
    event.type = event_type
    encoded = encode(obj) if isinstance(obj, dict) else None
    event.object.raw = encoded if encoded is not None else json.dumps(obj).encode()
    data = event.SerializeToString()
    return struct.pack(">I", len(data)) + data
