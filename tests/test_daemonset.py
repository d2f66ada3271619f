"""apps/v1 DaemonSets: defaults, validation (the update strategy's rules), an immutable selector, status counts."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from support import assert_rejected, field_causes, make_api


def _ds(name: str = "agent", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": "ns"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
                 "template": {"metadata": {"labels": {"app": "agent"}},
                              "spec": {"containers": [{"name": "a", "image": "fluent-bit:3"}]}}},
    }
    body["spec"].update(spec)
    return body



def test_a_daemon_set_is_defaulted() -> None:
    api = make_api()
    out = api.create(_ds())
    spec = out["spec"]
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert spec["revisionHistoryLimit"] == 10 and spec["template"]["spec"]["restartPolicy"] == "Always"
    assert out["metadata"]["generation"] == 1
    assert out["status"] == {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
                             "numberReady": 0}


@pytest.mark.parametrize(("spec", "causes"), [
    ({"updateStrategy": {"rollingUpdate": {"maxUnavailable": 1, "maxSurge": 1}}},
     [("spec.updateStrategy.rollingUpdate.maxSurge", "Invalid value: 1: may not be set when maxUnavailable is "
                                                      "non-zero")]),
    ({"updateStrategy": {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}},
     [("spec.updateStrategy.rollingUpdate.maxUnavailable", "Required value: cannot be 0 when maxSurge is 0")]),
    ({"updateStrategy": {"type": "Sometimes"}},
     [("spec.updateStrategy", 'Unsupported value: "Sometimes": supported values: "RollingUpdate", "OnDelete"')]),
    ({"selector": {"matchLabels": {"app": "other"}}},
     [("spec.template.metadata.labels", 'Invalid value: map[string]string{"app":"agent"}: `selector` does not '
                                        "match template `labels`")]),
])
def test_invalid_daemon_sets(spec: dict[str, Any], causes: list[tuple[str, str]]) -> None:
    api = make_api()
    err = assert_rejected(api, lambda: api.create(_ds(**spec)), 422, "Invalid")
    assert field_causes(err) == causes


def test_the_selector_is_immutable_and_the_template_is_not() -> None:
    api = make_api()
    stored = api.create(_ds())
    out = api.patch("DaemonSet", "agent", {"spec": {"template": {"spec": {"containers": [
        {"name": "a", "image": "fluent-bit:4"}]}}}}, namespace="ns", patch_type="strategic")
    assert out["metadata"]["generation"] == 2
    changed = copy.deepcopy(stored)
    changed["metadata"].pop("resourceVersion")
    changed["spec"]["selector"]["matchLabels"]["tier"] = "node"
    changed["spec"]["template"]["metadata"]["labels"]["tier"] = "node"
    err = assert_rejected(api, lambda: api.update(changed), 422, "Invalid")
    assert [f for f, _ in field_causes(err)] == ["spec.selector"]


def test_a_negative_status_count_is_refused() -> None:
    api = make_api()
    api.create(_ds())
    err = assert_rejected(api, lambda: api.patch("DaemonSet", "agent", {"status": {"numberReady": -1}}, namespace="ns",
                                                 subresource="status"), 422, "Invalid")
    assert field_causes(err) == [("status.numberReady", "Invalid value: -1: must be greater than or equal to 0")]
