"""Building the objects the controllers create, from the objects they own them by.

The counterpart of ARC's ``resourcebuilder.go``: pure functions from JSON
objects (as read through the Go codec) to new JSON objects. Nothing here
talks to the API.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

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


def listener_name(ars: Mapping[str, Any]) -> str:
    """``<ARS name>-listener``."""
    return f"{meta(ars).get('name', '')}{c.LISTENER_SUFFIX}"


def build_runner_spec(ars: Mapping[str, Any]) -> Obj:
    """The EphemeralRunnerSpec an ARS asks for: config, scale set id and its pod template inlined."""
    s = spec(ars)
    template = s.get("template") or {}
    out: Obj = {
        "githubConfigUrl": s.get("githubConfigUrl", ""),
        "githubConfigSecret": s.get("githubConfigSecret", ""),
        "runnerScaleSetId": scale_set_id(ars),
        "metadata": fast_copy(template.get("metadata") or {}),
        "spec": fast_copy(template.get("spec") or {}),
    }
    return out


def ers_labels_annotations(ars: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """The labels and annotations an ERS gets: ``ephemeralRunnerSetMetadata``, then the controller's own."""
    labels, annotations = _resource_meta(spec(ars).get("ephemeralRunnerSetMetadata"))
    m = meta(ars)
    labels.update(
        {
            c.LABEL_PART_OF: c.VALUE_PART_OF,
            c.LABEL_COMPONENT: c.COMPONENT_RUNNER_SET,
            c.LABEL_SCALE_SET_NAME: str(m.get("name", "")),
            c.LABEL_SCALE_SET_NAMESPACE: str(m.get("namespace", "")),
        }
    )
    group = (m.get("annotations") or {}).get(c.ANNOTATION_RUNNER_GROUP_NAME)
    if group:
        annotations[c.ANNOTATION_RUNNER_GROUP_NAME] = str(group)
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
    """A new runner of a set: its runner spec, its runner metadata, then the controller's label and
    the revision and patch-id annotations (which win on a clash), controlled by the set."""
    m = meta(ers)
    s = spec(ers)
    labels, annotations = _resource_meta(s.get("ephemeralRunnerMetadata"))
    labels[c.LABEL_COMPONENT] = c.COMPONENT_RUNNER
    annotations[c.ANNOTATION_ACTIONABLE_REVISION] = str(int(s.get("actionableRevision") or 0))
    annotations[c.ANNOTATION_PATCH_ID] = str(int(s.get("patchID") or 0))
    return {
        "apiVersion": c.API_VERSION,
        "kind": c.KIND_ER,
        "metadata": {
            "generateName": f"{m.get('name', '')}-runner-",
            "namespace": m.get("namespace", ""),
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [owner_reference(ers)],
        },
        "spec": fast_copy(s.get("ephemeralRunnerSpec") or {}),
    }


def build_listener(ars: Mapping[str, Any], ers: Mapping[str, Any], namespace: str) -> Obj:
    """The AutoscalingListener of an ARS, in the controller namespace, with back references."""
    m = meta(ars)
    s = spec(ars)
    labels, annotations = _resource_meta(s.get("autoscalingListener"))
    labels.update(
        {
            c.LABEL_PART_OF: c.VALUE_PART_OF,
            c.LABEL_COMPONENT: c.COMPONENT_LISTENER,
            c.LABEL_SCALE_SET_NAME: str(m.get("name", "")),
            c.LABEL_SCALE_SET_NAMESPACE: str(m.get("namespace", "")),
        }
    )
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


def build_jit_secret(er: Mapping[str, Any], runner_id: int, runner_name: str, jit_token: str) -> Obj:
    """The JIT config Secret of a runner (same name), owned by it."""
    m = meta(er)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": m.get("name", ""),
            "namespace": m.get("namespace", ""),
            "ownerReferences": [owner_reference(er)],
        },
        "data": {
            SECRET_JIT_TOKEN: _b64(jit_token),
            SECRET_RUNNER_ID: _b64(str(runner_id)),
            SECRET_RUNNER_NAME: _b64(runner_name),
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


def build_runner_pod(er: Mapping[str, Any], secret_name: str) -> Obj:
    """The runner Pod of an EphemeralRunner (same name), from its inlined template, owned by it.

    Labels and annotations: the runner's, then the template's; the ``runner``
    container gets the JIT config from the secret (ARC ``newEphemeralRunnerPod``).
    """
    m = meta(er)
    s = spec(er)
    tmeta = s.get("metadata") or {}
    labels: dict[str, str] = dict(m.get("labels") or {})
    labels.update(tmeta.get("labels") or {})
    labels[c.LABEL_EPHEMERAL_RUNNER] = "True"
    annotations: dict[str, str] = dict(m.get("annotations") or {})
    annotations.update(tmeta.get("annotations") or {})
    pod_spec: Obj = fast_copy(s.get("spec") or {})
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
            container = {**container, "env": env}
        containers.append(container)
    pod_spec["containers"] = containers
    # The gha-runner-scale-set chart's default: an ephemeral runner's pod never restarts its containers.
    pod_spec.setdefault("restartPolicy", "Never")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": m.get("name", ""),
            "namespace": m.get("namespace", ""),
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [owner_reference(er)],
        },
        "spec": pod_spec,
    }


def runner_image(obj: Mapping[str, Any]) -> str:
    """The image of the ``runner`` container of a Pod (or of a runner's inlined pod spec)."""
    for container in spec(obj).get("containers") or spec(spec(obj)).get("containers") or []:
        if container.get("name") == c.RUNNER_CONTAINER:
            return str(container.get("image", ""))
    return ""
