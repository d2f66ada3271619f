"""Building the objects the controllers create, from the objects they own them by.

The counterpart of ARC's ``resourcebuilder.go``: pure functions from JSON
objects (as read through the Go codec) to new JSON objects. Nothing here
talks to the API.
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import orjson
from fnv_hash_fast import fnv1a_32

from fakeapi.machinery.jsonutil import fast_copy

from . import constants as c
from .revision import parse_int64

Obj = dict[str, Any]

#: The env vars ARC adds to the runner container.
ENV_JIT_CONFIG = "ACTIONS_RUNNER_INPUT_JITCONFIG"
ENV_EXTRA_USER_AGENT = "GITHUB_ACTIONS_RUNNER_EXTRA_USER_AGENT"
USER_AGENT = "actions-runner-controller/0.0.0"
#: Keys of the JIT config secret.
SECRET_JIT_TOKEN = "jitToken"
SECRET_RUNNER_ID = "runnerId"
SECRET_RUNNER_NAME = "runnerName"
SECRET_SCALE_SET_ID = "scaleSetId"
#: Set to 1, a runner whose version the service deprecated exits with code 7 (without it, it never does).
ENV_DEPRECATED_EXIT_CODE = "ACTIONS_RUNNER_RETURN_VERSION_DEPRECATED_EXIT_CODE"
MAX_INT32 = 2**31 - 1


def meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``metadata`` (empty when absent)."""
    return obj.get("metadata") or {}


def spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``spec`` (empty when absent)."""
    return obj.get("spec") or {}


def status(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``status`` (empty when absent)."""
    return obj.get("status") or {}


def owner_reference(owner: Mapping[str, Any]) -> Obj:
    """A controller owner reference to ``owner`` (``ctrl.SetControllerReference``)."""
    m = meta(owner)
    return {
        "apiVersion": owner.get("apiVersion", c.API_VERSION),
        "kind": owner.get("kind", ""),
        "name": m.get("name", ""),
        "uid": m.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


#: The empty map an absent ``metadata`` or ``status`` reads as (read-only: shared by every caller).
EMPTY: Mapping[str, Any] = MappingProxyType({})


def controller_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The controller owner reference of an object, if any (``metav1.GetControllerOf``)."""
    for ref in (obj.get("metadata") or EMPTY).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller"):
            return ref
    return None


def is_controlled_by(obj: Mapping[str, Any], kind: str, name: str) -> bool:
    """True when the object's controller owner reference names ``kind``/``name``."""
    ref = controller_of(obj)
    return ref is not None and ref.get("kind") == kind and ref.get("name") == name


def scale_set_id(ars: Mapping[str, Any]) -> int:
    """The ``runner-scale-set-id`` annotation (Go ``strconv.Atoi``; 0 when missing or invalid)."""
    n = parse_int64((meta(ars).get("annotations") or {}).get(c.ANNOTATION_RUNNER_SCALE_SET_ID))
    return n if n is not None else 0


def scale_set_name(ars: Mapping[str, Any]) -> str:
    """The scale set name: ``spec.runnerScaleSetName``, defaulting to the ARS name."""
    return str(spec(ars).get("runnerScaleSetName") or meta(ars).get("name", ""))


def _resource_meta(value: Any) -> tuple[dict[str, str], dict[str, str]]:
    if not isinstance(value, dict):
        return {}, {}
    return dict(value.get("labels") or {}), dict(value.get("annotations") or {})


#: ``k8s.io/apimachinery/pkg/util/rand`` alphabet (no vowels, no confusable digits).
_SAFE_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def _fnv32a(data: bytes) -> int:
    """Go's ``hash/fnv.New32a`` sum of ``data`` (the fnv-hash-fast library's C FNV-1a: a pure
    Python loop over the pod template hash's ~1 KB texts cost about 9% of an ARC lifecycle)."""
    return fnv1a_32(data)


def safe_encode_string(text: str) -> str:
    """``rand.SafeEncodeString``: each character mapped onto the safe alphabet."""
    if text.isascii():  # (the hashes' decimal digits: one str.translate, the same mapping as below)
        return text.translate(_SAFE_ASCII)
    return "".join(_SAFE_ALPHANUMS[ord(ch) % len(_SAFE_ALPHANUMS)] for ch in text)


#: :func:`safe_encode_string`'s mapping of the ASCII characters, as a ``str.translate`` table.
_SAFE_ASCII = {i: _SAFE_ALPHANUMS[i % len(_SAFE_ALPHANUMS)] for i in range(128)}


@functools.lru_cache(maxsize=256)  # (a pure function of a text; issue 22: every ARS reconcile hashes the same few)
def fnv_hash_string(name: str) -> str:
    """ARC ``hash.FNVHashString``: FNV-1a (32 bit) of the string, its decimal value safe-encoded."""
    return safe_encode_string(str(_fnv32a(name.encode())))


def hash_suffix(namespace: str, runner_group: str, config_url: str) -> str:
    """ARC ``hashSuffix``: the first 8 characters of the FNV hash of ``namespace@group@url``."""
    return fnv_hash_string(f"{namespace}@{runner_group}@{config_url}")[:8]


def listener_name(ars: Mapping[str, Any]) -> str:
    """ARC ``scaleSetListenerName``: ``<ARS name>-<hash of namespace, runner group, config URL>-listener``."""
    m, s = meta(ars), spec(ars)
    suffix = hash_suffix(str(m.get("namespace", "")), str(s.get("runnerGroup") or ""),
                         str(s.get("githubConfigUrl") or ""))
    return f"{m.get('name', '')}-{suffix}{c.LISTENER_SUFFIX}"


class InvalidConfigURL(ValueError):
    """A ``githubConfigUrl`` that names no enterprise, organization or repository."""


@functools.lru_cache(maxsize=256)  # (a pure function of the URL; issue 22: parsed on every ARS reconcile)
def github_config_scope(url: str) -> tuple[str, str, str]:
    """``(enterprise, organization, repository)`` of a config URL (ARC ``ParseGitHubConfigFromURL``).

    One path segment is an organization; two are ``enterprises/<name>`` or
    ``<org>/<repo>``; anything else is :class:`InvalidConfigURL`.
    """
    from urllib.parse import urlsplit

    try:
        path = urlsplit(url.strip("/")).path
    except ValueError as e:
        raise InvalidConfigURL(f"{url!r}: {e}") from None
    parts = path.strip("/").split("/")
    if len(parts) == 1 and parts[0]:
        return "", parts[0], ""
    if len(parts) == 2:
        if parts[0].lower() == "enterprises":
            return parts[1], "", ""
        return "", parts[0], parts[1]
    raise InvalidConfigURL(f"{url!r}: invalid config URL, should point to an enterprise, org, or repository")


_TRIM_SUFFIX = "-trim"


def trim_label_value(value: str) -> str:
    """ARC ``trimLabelValue``: over 63 characters -> cut with a ``-trim`` suffix; else ``-_.`` trimmed."""
    if len(value) > 63:
        return value[: 63 - len(_TRIM_SUFFIX)] + _TRIM_SUFFIX
    return value.strip("-_.")


def apply_github_url_labels(url: str, labels: dict[str, str]) -> None:
    """ARC ``applyGitHubURLLabels``: the enterprise, organization and repository labels of a config URL."""
    enterprise, org, repo = github_config_scope(url)
    if enterprise:
        labels[c.LABEL_GITHUB_ENTERPRISE] = trim_label_value(enterprise)
    if org:
        labels[c.LABEL_GITHUB_ORGANIZATION] = trim_label_value(org)
    if repo:
        labels[c.LABEL_GITHUB_REPOSITORY] = trim_label_value(repo)


#: ARC's ``--exclude-label-propagation-prefixes`` (empty by default, as the chart leaves it).
EXCLUDE_LABEL_PROPAGATION_PREFIXES: tuple[str, ...] = ()


def filter_and_merge_labels(base: Mapping[str, str] | None, overwrite: Mapping[str, str] | None,
                            exclude: tuple[str, ...] = EXCLUDE_LABEL_PROPAGATION_PREFIXES) -> dict[str, str]:
    """ARC ``filterAndMergeLabels``: ``base`` then ``overwrite`` (which wins), excluded prefixes dropped."""
    out: dict[str, str] = {}
    for src in (base or {}, overwrite or {}):
        for k, v in src.items():
            if not any(k.startswith(p) for p in exclude):
                out[k] = v
    return out


def merge_annotations(base: Mapping[str, str] | None, overwrite: Mapping[str, str] | None) -> dict[str, str]:
    """ARC ``mergeAnnotations``: ``base`` then ``overwrite`` (which wins)."""
    return {**(base or {}), **(overwrite or {})}


def build_runner_spec(ars: Mapping[str, Any]) -> Obj:
    """The EphemeralRunnerSpec an ARS asks for (ARC ``newEphemeralRunnerSet``): config, scale set id,
    ``ephemeralRunnerConfigSecretMetadata`` (the labels and annotations of each runner's JIT secret)
    when set, and its pod template inlined. (Proxy, TLS and Vault settings are out of scope.)"""
    s = spec(ars)
    template = s.get("template") or {}
    out: Obj = {
        "githubConfigUrl": s.get("githubConfigUrl", ""),
        "githubConfigSecret": s.get("githubConfigSecret", ""),
        "runnerScaleSetId": scale_set_id(ars),
        "metadata": fast_copy(template.get("metadata") or {}),
        "spec": fast_copy(template.get("spec") or {}),
    }
    secret_meta = s.get("ephemeralRunnerConfigSecretMetadata")
    if secret_meta is not None:  # a Go pointer: nil is left out, {} is kept
        out["ephemeralRunnerConfigSecretMetadata"] = fast_copy(secret_meta)
    return out


def ers_labels_annotations(ars: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """The labels and annotations an ERS gets (ARC ``newEphemeralRunnerSet``): the ARS's labels, the
    controller's own and the GitHub URL labels, then ``ephemeralRunnerSetMetadata`` under them; the
    runner group and scale set name annotations. (The version label is out of scope.)"""
    m = meta(ars)
    labels = filter_and_merge_labels(m.get("labels"), {
        c.LABEL_PART_OF: c.VALUE_PART_OF,
        c.LABEL_COMPONENT: c.COMPONENT_RUNNER_SET,
        c.LABEL_SCALE_SET_NAME: str(m.get("name", "")),
        c.LABEL_SCALE_SET_NAMESPACE: str(m.get("namespace", "")),
    })
    apply_github_url_labels(str(spec(ars).get("githubConfigUrl") or ""), labels)
    ars_annotations = m.get("annotations") or {}
    annotations = {
        c.ANNOTATION_RUNNER_GROUP_NAME: str(ars_annotations.get(c.ANNOTATION_RUNNER_GROUP_NAME, "")),
        c.ANNOTATION_RUNNER_SCALE_SET_NAME: str(ars_annotations.get(c.ANNOTATION_RUNNER_SCALE_SET_NAME, "")),
    }
    extra = spec(ars).get("ephemeralRunnerSetMetadata")
    if isinstance(extra, dict):
        labels = filter_and_merge_labels(extra.get("labels"), labels)
        annotations = merge_annotations(extra.get("annotations"), annotations)
    return labels, annotations


def build_ephemeral_runner_set(ars: Mapping[str, Any]) -> Obj:
    """The EphemeralRunnerSet of an ARS: same name and namespace, controlled by it, revision 0."""
    m = meta(ars)
    labels, annotations = ers_labels_annotations(ars)
    ers_spec: Obj = {
        "replicas": 0,
        "patchID": 0,
        "actionableRevision": 0,
        "ephemeralRunnerSpec": build_runner_spec(ars),
    }
    runner_meta = spec(ars).get("ephemeralRunnerMetadata")
    if runner_meta is not None:
        ers_spec["ephemeralRunnerMetadata"] = fast_copy(runner_meta)
    return {
        "apiVersion": c.API_VERSION,
        "kind": c.KIND_ERS,
        "metadata": {
            "name": m.get("name", ""),
            "namespace": m.get("namespace", ""),
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [owner_reference(ars)],
        },
        "spec": ers_spec,
    }


def build_ephemeral_runner(ers: Mapping[str, Any]) -> Obj:
    """A new runner of a set (ARC ``newEphemeralRunner``): the set's labels and annotations, the
    ``runner`` component label, the revision and patch-id annotations, then ``ephemeralRunnerMetadata``
    under them (the set's values win a clash); both runner finalizers; controlled by the set."""
    m = meta(ers)
    s = spec(ers)
    labels: dict[str, str] = dict(m.get("labels") or {})
    labels[c.LABEL_COMPONENT] = c.COMPONENT_RUNNER
    annotations: dict[str, str] = dict(m.get("annotations") or {})
    annotations[c.ANNOTATION_PATCH_ID] = str(int(s.get("patchID") or 0))
    annotations[c.ANNOTATION_ACTIONABLE_REVISION] = str(int(s.get("actionableRevision") or 0))
    extra = s.get("ephemeralRunnerMetadata")
    if isinstance(extra, dict):
        labels = filter_and_merge_labels(extra.get("labels"), labels)
        annotations = merge_annotations(extra.get("annotations"), annotations)
    return {
        "apiVersion": c.API_VERSION,
        "kind": c.KIND_ER,
        "metadata": {
            "generateName": f"{m.get('name', '')}-runner-",
            "namespace": m.get("namespace", ""),
            "labels": labels,
            "annotations": annotations,
            "finalizers": [c.FINALIZER_ER, c.FINALIZER_ER_REGISTRATION],
            "ownerReferences": [owner_reference(ers)],
        },
        "spec": fast_copy(s.get("ephemeralRunnerSpec") or {}),
    }


#: ARS spec field -> AutoscalingListener spec field, copied as they are (upstream ``newAutoscalingListener``).
_LISTENER_METADATA_FIELDS = (
    ("listenerServiceAccountMetadata", "serviceAccountMetadata"),
    ("listenerRoleMetadata", "roleMetadata"),
    ("listenerRoleBindingMetadata", "roleBindingMetadata"),
    ("listenerConfigSecretMetadata", "configSecretMetadata"),
)


def build_listener(ars: Mapping[str, Any], ers: Mapping[str, Any], namespace: str) -> Obj:
    """The AutoscalingListener of an ARS (ARC ``newAutoscalingListener``), in the controller namespace,
    with back references; labels: the ARS's, the controller's, the GitHub URL labels, then
    ``autoscalingListener`` metadata under them."""
    m = meta(ars)
    s = spec(ars)
    labels = filter_and_merge_labels(m.get("labels"), {
        c.LABEL_SCALE_SET_NAMESPACE: str(m.get("namespace", "")),
        c.LABEL_SCALE_SET_NAME: str(m.get("name", "")),
        c.LABEL_PART_OF: c.VALUE_PART_OF,
        c.LABEL_COMPONENT: c.COMPONENT_LISTENER,
    })
    apply_github_url_labels(str(s.get("githubConfigUrl") or ""), labels)
    annotations: dict[str, str] = {}
    extra = s.get("autoscalingListener")
    if isinstance(extra, dict):
        labels = filter_and_merge_labels(extra.get("labels"), labels)
        annotations = merge_annotations(extra.get("annotations"), annotations)
    min_runners = s.get("minRunners")
    max_runners = s.get("maxRunners")
    al_spec: Obj = {
        "githubConfigUrl": s.get("githubConfigUrl", ""),
        "githubConfigSecret": s.get("githubConfigSecret", ""),
        "runnerScaleSetId": scale_set_id(ars),
        "autoscalingRunnerSetNamespace": m.get("namespace", ""),
        "autoscalingRunnerSetName": m.get("name", ""),
        "ephemeralRunnerSetName": meta(ers).get("name", ""),
        "minRunners": int(min_runners) if isinstance(min_runners, int) else 0,
        "maxRunners": int(max_runners) if isinstance(max_runners, int) else MAX_INT32,
        "image": c.DEFAULT_LISTENER_IMAGE,
    }
    if s.get("listenerTemplate") is not None:
        al_spec["template"] = fast_copy(s["listenerTemplate"])
    # The metadata for the listener's service account, role, role binding and config secret rides on
    # its spec (upstream newAutoscalingListener); the objects themselves are the AutoscalingListener
    # controller's, which this model simulates, so here it only takes part in the spec comparison.
    for ars_key, listener_key in _LISTENER_METADATA_FIELDS:
        if s.get(ars_key) is not None:  # Go pointers: nil is left out, {} is kept
            al_spec[listener_key] = fast_copy(s[ars_key])
    return {
        "apiVersion": c.API_VERSION,
        "kind": c.KIND_AL,
        "metadata": {
            "name": listener_name(ars),
            "namespace": namespace,
            "labels": labels,
            "annotations": annotations,
        },
        "spec": al_spec,
    }


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def build_jit_secret(er: Mapping[str, Any], runner_id: int, runner_name: str, jit_token: str,
                     scale_set: int = 0) -> Obj:
    """The JIT config Secret of a runner (ARC ``newEphemeralRunnerJitSecret``): same name, owned by it,
    keys ``jitToken``, ``runnerName``, ``runnerId``, ``scaleSetId``; labels (filtered) and annotations
    from the runner spec's ``ephemeralRunnerConfigSecretMetadata``."""
    m = meta(er)
    secret_meta: Obj = {"name": m.get("name", ""), "namespace": m.get("namespace", "")}
    extra = spec(er).get("ephemeralRunnerConfigSecretMetadata")
    if isinstance(extra, dict):
        if extra.get("labels"):
            secret_meta["labels"] = filter_and_merge_labels(extra.get("labels"), None)
        if extra.get("annotations"):
            secret_meta["annotations"] = dict(extra["annotations"])
    secret_meta["ownerReferences"] = [owner_reference(er)]
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": secret_meta,
        "data": {
            SECRET_JIT_TOKEN: _b64(jit_token),
            SECRET_RUNNER_NAME: _b64(runner_name),
            SECRET_RUNNER_ID: _b64(str(runner_id)),
            SECRET_SCALE_SET_ID: _b64(str(scale_set)),
        },
    }


def secret_runner_id(secret: Mapping[str, Any]) -> int:
    """The runner id stored in a JIT config Secret (0 when absent or invalid)."""
    raw = (secret.get("data") or {}).get(SECRET_RUNNER_ID)
    if not isinstance(raw, str):
        return 0
    try:
        text = base64.b64decode(raw).decode()
    except (ValueError, UnicodeDecodeError):
        return 0
    n = parse_int64(text)
    return n if n is not None and n > 0 else 0


def secret_runner_name(secret: Mapping[str, Any]) -> str:
    """The runner name stored in a JIT config Secret ("" when absent)."""
    raw = (secret.get("data") or {}).get(SECRET_RUNNER_NAME)
    if not isinstance(raw, str):
        return ""
    try:
        return base64.b64decode(raw).decode()
    except (ValueError, UnicodeDecodeError):
        return ""


def pod_template_hash(labels: Mapping[str, str], annotations: Mapping[str, str], runner_spec: Any,
                      secret_data: Any, *, shared_spec: bool = False) -> str:
    """The ``pod-template-hash`` label value: an FNV-1a hash of the pod's labels (without
    ``runner-template-hash``), annotations, the runner spec and the secret data, safe-encoded.

    ARC (``hash.FNVHashStringObjects``) feeds the Go values through a spew
    printer; this hashes their canonical JSON instead, so the value has the same
    form and changes with the same inputs, but is not bit-identical to ARC's.

    ``shared_spec``: ``runner_spec`` is a shared decoded form, never mutated (read with
    ``unsafe_disable_deep_copy``), so its text is remembered by identity (see :func:`_spec_text`).
    """
    filtered = {k: v for k, v in labels.items() if k != c.LABEL_RUNNER_TEMPLATE_HASH}
    annotations = dict(annotations)
    text = _parts_text(filtered, annotations, runner_spec, secret_data) if shared_spec else None
    if text is None:
        text = hash_text([filtered, annotations, runner_spec, secret_data])
    return safe_encode_string(str(_fnv32a(text)))


def _parts_text(filtered: dict[str, Any], annotations: dict[str, Any], runner_spec: Any,
                secret_data: Any) -> bytes | None:
    """:func:`hash_text` of ``[filtered, annotations, runner_spec, secret_data]`` made of each part's
    text (orjson writes a list as ``[`` its items' texts joined by ``,`` ``]``, no spaces), the
    runner spec's remembered by :func:`_spec_text`; None where :func:`hash_text` would not take
    orjson's way for a part (it then decides for the whole list).

    The runners of a set share their decoded spec (the decode cache decodes a spec it saw before
    by content once): its text is made once per set and revision, not once per pod (issue 22).
    """
    spec_text = _spec_text(runner_spec)
    if spec_text is None or not (_plain_json(filtered) and _plain_json(annotations) and _plain_json(secret_data)):
        return None
    try:
        return b"".join((b"[", orjson.dumps(filtered, option=orjson.OPT_SORT_KEYS), b",",
                         orjson.dumps(annotations, option=orjson.OPT_SORT_KEYS), b",", spec_text, b",",
                         orjson.dumps(secret_data, option=orjson.OPT_SORT_KEYS), b"]"))
    except TypeError:
        return None


#: :func:`_spec_text`'s memo: id of a shared runner spec -> (the spec, its sorted orjson text or None).
_SPEC_TEXTS: dict[int, tuple[Any, bytes | None]] = {}
_SPEC_TEXTS_MAX = 64


def _spec_text(runner_spec: Any) -> bytes | None:
    """The sorted-keys orjson text of a runner spec that is never mutated, or None where
    :func:`hash_text` would not write it with orjson (not plain JSON, or orjson refuses it);
    remembered by identity (the entry holds the spec, so its id is not reused while it is kept)."""
    hit = _SPEC_TEXTS.get(id(runner_spec))
    if hit is not None and hit[0] is runner_spec:
        return hit[1]
    text: bytes | None = None
    if _plain_json(runner_spec):
        try:
            text = orjson.dumps(runner_spec, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            text = None
    if len(_SPEC_TEXTS) >= _SPEC_TEXTS_MAX:
        _SPEC_TEXTS.clear()
    _SPEC_TEXTS[id(runner_spec)] = (runner_spec, text)
    return text


def hash_text(value: Any) -> bytes:
    """The UTF-8 bytes of ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``.

    For a value made only of dicts, lists, tuples, strings, ints, booleans and None (exactly those
    types: no floats, which the two write differently, ``1e-05`` and ``0.00001``), orjson with
    sorted keys writes the same text: strings escaped alike, keys in code point order (issue 22:
    the json module's encoder was 1% of a lifecycle). Anything else, a key that is not a string
    or an int beyond 64 bits (orjson's TypeError) goes the json module's way.
    """
    if _plain_json(value):
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            pass
    return _HASH_ENCODER.encode(value).encode()


def _plain_json(value: Any) -> bool:
    """Whether ``value`` holds only dicts, lists, tuples, strings, ints, booleans and None (those exact types)."""
    t = type(value)
    if t is dict:
        items = value.values()
    elif t is list or t is tuple:
        items = value
    else:
        return t is str or t is int or t is bool or value is None
    for v in items:  # (the leaves inline: a pod spec is mostly strings)
        t = type(v)
        if t is str or t is int or t is bool or v is None:
            continue
        if not ((t is dict or t is list or t is tuple) and _plain_json(v)):
            return False
    return True


#: What ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` builds on every
#: call (its arguments are not the defaults, so it makes a new encoder each time), made once: the
#: same encoder, so the same text.
_HASH_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def build_runner_pod(er: Mapping[str, Any], secret: Mapping[str, Any] | str, *, shared: bool = False) -> Obj:
    """The runner Pod of an EphemeralRunner (ARC ``newEphemeralRunnerPod``): same name, owned by it.

    Labels and annotations: the runner's, then the template's, then
    ``actions-ephemeral-runner: "True"`` and ``pod-template-hash``. The pod spec
    is the template's (an unset restartPolicy becomes ``Never``, see below); the ``runner`` container gets the JIT config from
    the secret, the user agent and ``ACTIONS_RUNNER_RETURN_VERSION_DEPRECATED_EXIT_CODE=1``.

    ``shared``: ``er`` is a shared decoded form, never mutated (see :func:`pod_template_hash`).
    """
    secret_obj = _secret_object(secret)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": runner_pod_metadata(er, secret_obj, shared=shared),
        "spec": runner_pod_spec(spec(er).get("spec"), str(meta(secret_obj).get("name", ""))),
    }


def _secret_object(secret: Mapping[str, Any] | str) -> Mapping[str, Any]:
    """The JIT secret :func:`build_runner_pod` was given (a name stands for a secret without data)."""
    return secret if isinstance(secret, Mapping) else {"metadata": {"name": secret}}


def runner_pod_metadata(er: Mapping[str, Any], secret: Mapping[str, Any], *, shared: bool = False) -> Obj:
    """The metadata of :func:`build_runner_pod`'s pod (``secret``: the JIT secret object)."""
    m = meta(er)
    s = spec(er)
    tmeta = s.get("metadata") or {}
    annotations: dict[str, str] = dict(m.get("annotations") or {})
    annotations.update(tmeta.get("annotations") or {})
    labels: dict[str, str] = dict(m.get("labels") or {})
    labels.update(tmeta.get("labels") or {})
    labels[c.LABEL_EPHEMERAL_RUNNER] = "True"
    labels[c.LABEL_POD_TEMPLATE_HASH] = pod_template_hash(labels, annotations, s, secret.get("data") or {},
                                                          shared_spec=shared)
    return {
        "name": m.get("name", ""),
        "namespace": m.get("namespace", ""),
        "labels": labels,
        "annotations": annotations,
        "ownerReferences": [owner_reference(er)],
    }


def runner_pod_spec(template_spec: Mapping[str, Any] | None, secret_name: str) -> Obj:
    """The spec of :func:`build_runner_pod`'s pod: a copy of the runner spec's pod spec, the ``runner``
    container's env extended with the JIT config (from secret ``secret_name``) and the ARC settings."""
    pod_spec: Obj = fast_copy(template_spec or {})
    containers = []
    for container in pod_spec.get("containers") or []:
        if container.get("name") == c.RUNNER_CONTAINER:
            env = list(container.get("env") or [])
            env.append(
                {
                    "name": ENV_JIT_CONFIG,
                    "valueFrom": {"secretKeyRef": {"name": secret_name, "key": SECRET_JIT_TOKEN}},
                }
            )
            env.append({"name": ENV_EXTRA_USER_AGENT, "value": USER_AGENT})
            env.append({"name": ENV_DEPRECATED_EXIT_CODE, "value": "1"})
            container = {**container, "env": env}
        containers.append(container)
    pod_spec["containers"] = containers
    # Divergence from upstream newEphemeralRunnerPod, which copies the template's restartPolicy as it
    # is: an unset one becomes Never here, the gha-runner-scale-set chart's value. With the server's
    # default (Always) a runner that exits is restarted in place and never finishes, and the project's
    # contract example (an ARS written without the chart) relies on runner exits ending the pod. A
    # template that sets restartPolicy keeps it.
    pod_spec.setdefault("restartPolicy", "Never")
    return pod_spec


#: The secret name :func:`encoded_runner_pod_spec` encodes a template's spec with (no Kubernetes name
#: has a NUL), then replaces by each pod's.
_SECRET_NAME_MARK = "\x00arc-jit-secret\x00"
#: id of a runner spec's pod spec -> (that pod spec, the Go type, its encoded runner pod spec with the
#: mark as secret name, (container, env entry) where the mark is), or the last two None: not taken.
_ENCODED_SPECS: dict[int, tuple[Any, Any, Obj | None, tuple[int, int] | None]] = {}
_ENCODED_SPECS_MAX = 64


def encoded_runner_pod_spec(template_spec: Mapping[str, Any] | None, secret_name: str, spec_type: Any) -> Obj | None:
    """``go_roundtrip(runner_pod_spec(template_spec, secret_name), spec_type)`` for a ``template_spec``
    that is never mutated (a shared decoded form): the caller's own copy. None where this does not
    answer (the caller encodes :func:`runner_pod_spec` itself): an empty secret name (omitempty
    drops it), a template whose encoding carries the mark anywhere but in the one JIT config entry,
    or one that does not encode.

    The runners of a set share their decoded spec, so its pod spec is encoded once per set and
    revision, with a mark for the secret name; each pod gets a copy with its secret's name put
    where the mark is (a non-empty string encodes as itself). Issue 22: the Go encoding of every
    runner pod's spec, all the same but for that name.
    """
    if type(secret_name) is not str or not secret_name:
        return None
    hit = _ENCODED_SPECS.get(id(template_spec))
    if hit is None or hit[0] is not template_spec or hit[1] is not spec_type:
        hit = _encode_marked(template_spec, spec_type)
        if len(_ENCODED_SPECS) >= _ENCODED_SPECS_MAX:
            _ENCODED_SPECS.clear()
        _ENCODED_SPECS[id(template_spec)] = hit
    encoded, where = hit[2], hit[3]
    if encoded is None or where is None:
        return None
    out: Obj = fast_copy(encoded)
    out["containers"][where[0]]["env"][where[1]]["valueFrom"]["secretKeyRef"]["name"] = secret_name
    return out


def _encode_marked(template_spec: Any, spec_type: Any) -> tuple[Any, Any, Obj | None, tuple[int, int] | None]:
    """The memo entry of :func:`encoded_runner_pod_spec` for a template's pod spec."""
    from fakeapi.codec.gomodel import go_roundtrip

    try:
        encoded = go_roundtrip(runner_pod_spec(template_spec, _SECRET_NAME_MARK), spec_type)
        text = orjson.dumps(encoded)
    except (ValueError, TypeError):  # (GoDecodeError is a ValueError): the caller's encoding raises it
        return template_spec, spec_type, None, None
    if type(encoded) is not dict or text.count(orjson.dumps(_SECRET_NAME_MARK)[1:-1]) != 1:
        return template_spec, spec_type, None, None
    for ci, container in enumerate(encoded.get("containers") or ()):
        for ei, entry in enumerate(container.get("env") or ()):
            ref = ((entry.get("valueFrom") or {}).get("secretKeyRef") or {})
            if entry.get("name") == ENV_JIT_CONFIG and ref.get("name") == _SECRET_NAME_MARK:
                return template_spec, spec_type, encoded, (ci, ei)
    return template_spec, spec_type, None, None


def runner_image(obj: Mapping[str, Any]) -> str:
    """The image of the ``runner`` container of a Pod (or of a runner's inlined pod spec)."""
    for container in spec(obj).get("containers") or spec(spec(obj)).get("containers") or []:
        if container.get("name") == c.RUNNER_CONTAINER:
            return str(container.get("image", ""))
    return ""
