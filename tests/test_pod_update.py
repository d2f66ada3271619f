"""A Pod's spec is immutable but for a few fields (``ValidatePodUpdate``)."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi import APIServer
from fakeapi.machinery.errors import ApiError
from fakeapi.registry.core.validation import POD_UPDATABLE_FIELDS

FORBIDDEN = f"spec: Forbidden: pod updates may not change fields other than {POD_UPDATABLE_FIELDS}"


def _api(**spec: Any) -> APIServer:
    api = APIServer()
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "busybox:1"}], **spec}}
    api.create(body)
    return api


# (case, the pod's spec fields at create, the patch type, the patch's spec, the error's start or None: allowed)
CASES: list[tuple[str, dict[str, Any], str, dict[str, Any], str | None]] = [
    ("an image, merged by name", {}, "strategic", {"containers": [{"name": "c", "image": "busybox:2"}]}, None),
    ("an image, the list replaced (the same defaults)", {}, "merge",
     {"containers": [{"name": "c", "image": "busybox:2"}]}, None),
    # the list replaced: imagePullPolicy is defaulted again, to Always for an untagged image (was IfNotPresent)
    ("an image, the list replaced (another imagePullPolicy)", {}, "merge",
     {"containers": [{"name": "c", "image": "busybox"}]}, FORBIDDEN + "\n  spec.containers"),
    ("an env var", {}, "strategic", {"containers": [{"name": "c", "env": [{"name": "A", "value": "1"}]}]},
     FORBIDDEN + "\n  spec.containers"),
    ("the restart policy", {}, "merge", {"restartPolicy": "Never"}, FORBIDDEN + "\n  spec.restartPolicy"),
    ("the node (a binding's job)", {}, "merge", {"nodeName": "n1"}, FORBIDDEN + "\n  spec.nodeName"),
    ("a container added", {}, "strategic", {"containers": [{"name": "d", "image": "busybox:1"}]},
     "spec.containers: Forbidden: pod updates may not add or remove containers"),
    ("an image with spaces", {}, "strategic", {"containers": [{"name": "c", "image": " busybox:2"}]},
     'spec.containers[0].image: Invalid value: " busybox:2": must not have leading or trailing whitespace'),
    ("activeDeadlineSeconds set", {}, "merge", {"activeDeadlineSeconds": 30}, None),
    ("activeDeadlineSeconds lowered", {"activeDeadlineSeconds": 30}, "merge", {"activeDeadlineSeconds": 10}, None),
    ("activeDeadlineSeconds raised", {"activeDeadlineSeconds": 30}, "merge", {"activeDeadlineSeconds": 60},
     "spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value"),
    ("activeDeadlineSeconds removed", {"activeDeadlineSeconds": 30}, "merge", {"activeDeadlineSeconds": None},
     "spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value"),
    ("activeDeadlineSeconds out of range", {}, "merge", {"activeDeadlineSeconds": 3_000_000_000},
     "spec.activeDeadlineSeconds: Invalid value: 3000000000: must be between 0 and 2147483647, inclusive"),
    ("a toleration added", {"tolerations": [{"key": "k", "operator": "Exists"}]}, "merge",
     {"tolerations": [{"key": "k", "operator": "Exists"}, {"key": "j", "operator": "Exists"}]}, None),
    ("a toleration's seconds changed", {"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute",
                                                        "tolerationSeconds": 5}]}, "merge",
     {"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 9}]}, None),
    ("a toleration removed", {"tolerations": [{"key": "k", "operator": "Exists"}]}, "merge", {"tolerations": None},
     "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"),
    ("a scheduling gate removed", {"schedulingGates": [{"name": "g1"}, {"name": "g2"}]}, "merge",
     {"schedulingGates": [{"name": "g1"}]}, None),
    ("a scheduling gate added", {"schedulingGates": [{"name": "g1"}]}, "merge",
     {"schedulingGates": [{"name": "g1"}, {"name": "g2"}]},
     "spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'g2'"),
    ("a gated pod's node selector", {"schedulingGates": [{"name": "g1"}]}, "merge", {"nodeSelector": {"zone": "a"}},
     None),
    ("an ungated pod's node selector", {}, "merge", {"nodeSelector": {"zone": "a"}},
     FORBIDDEN + "\n  spec.nodeSelector"),
]


@pytest.mark.parametrize(("case", "spec", "patch_type", "patch", "error"), CASES, ids=[c[0] for c in CASES])
def test_pod_spec_updates(case: str, spec: dict[str, Any], patch_type: str, patch: dict[str, Any],
                          error: str | None) -> None:
    api = _api(**spec)
    before = api.get("Pod", "p", "default")
    if error is None:
        api.patch("Pod", "p", {"spec": patch}, namespace="default", patch_type=patch_type)
        return
    with pytest.raises(ApiError) as err:
        api.patch("Pod", "p", {"spec": patch}, namespace="default", patch_type=patch_type)
    assert err.value.code == 422 and err.value.reason == "Invalid"
    assert err.value.message == f'Pod "p" is invalid: {error}'
    assert api.get("Pod", "p", "default") == before


def test_a_put_of_what_was_read_with_a_new_image_is_allowed_and_metadata_stays_free() -> None:
    api = _api()
    pod = api.get("Pod", "p", "default")
    pod["spec"]["containers"][0]["image"] = "busybox:2"
    pod["metadata"]["labels"] = {"a": "b"}
    out = api.update(pod)
    assert out["spec"]["containers"][0]["image"] == "busybox:2" and out["metadata"]["labels"] == {"a": "b"}
    pod = api.get("Pod", "p", "default")
    pod["spec"]["hostname"] = "h"
    with pytest.raises(ApiError, match="pod updates may not change fields other than"):
        api.update(pod)


def test_binding_still_sets_the_node() -> None:
    api = _api()
    api.bind_pod("p", "default", "n1")
    assert api.get("Pod", "p", "default")["spec"]["nodeName"] == "n1"
