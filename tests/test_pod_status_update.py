"""A Pod's status write may not bring a terminated container back (``ValidateContainerStateTransition``)."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi import APIServer
from fakeapi.machinery.errors import ApiError

MESSAGE = "Forbidden: may not be transitioned to non-terminated state"


def _status(name: str, state: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "image": "busybox", "imageID": "", "ready": False, "restartCount": 0, "state": state}


def _pod(policy: str | None, *, init: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeName": "n1", "containers": [{"name": "c", "image": "busybox"}]}
    if policy is not None:
        spec["restartPolicy"] = policy
    if init is not None:
        spec["initContainers"] = init
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": spec}


EXITED_0 = {"terminated": {"exitCode": 0}}
EXITED_1 = {"terminated": {"exitCode": 1}}
RUNNING = {"running": {}}
WAITING = {"waiting": {"reason": "CrashLoopBackOff"}}

# (case, restartPolicy, the statuses field, the old state, the new state, the init containers, forbidden?)
CASES: list[tuple[str, str | None, str, dict[str, Any], dict[str, Any], list[dict[str, Any]] | None, bool]] = [
    ("Never: exited 0, running again", "Never", "containerStatuses", EXITED_0, RUNNING, None, True),
    ("Never: exited 1, waiting", "Never", "containerStatuses", EXITED_1, WAITING, None, True),
    ("Never: exited, still exited with another code", "Never", "containerStatuses", EXITED_0, EXITED_1, None, False),
    ("Never: running, then exited", "Never", "containerStatuses", RUNNING, EXITED_1, None, False),
    ("OnFailure: exited 0, running again", "OnFailure", "containerStatuses", EXITED_0, RUNNING, None, True),
    ("OnFailure: exited 1 may restart", "OnFailure", "containerStatuses", EXITED_1, RUNNING, None, False),
    ("Always: exited 0 may restart", "Always", "containerStatuses", EXITED_0, RUNNING, None, False),
    ("unset policy is Always", None, "containerStatuses", EXITED_0, RUNNING, None, False),
    ("Never: an init container too", "Never", "initContainerStatuses", EXITED_0, RUNNING,
     [{"name": "c", "image": "busybox"}], True),
    ("Never: a sidecar (restartable init container) may restart", "Never", "initContainerStatuses", EXITED_0, RUNNING,
     [{"name": "c", "image": "busybox", "restartPolicy": "Always"}], False),
    ("Always: ephemeral containers never restart", "Always", "ephemeralContainerStatuses", EXITED_0, RUNNING, None,
     True),
]


@pytest.mark.parametrize(("case", "policy", "field", "was", "now", "init", "forbidden"), CASES,
                         ids=[c[0] for c in CASES])
def test_state_transitions(case: str, policy: str | None, field: str, was: dict[str, Any], now: dict[str, Any],
                           init: list[dict[str, Any]] | None, forbidden: bool) -> None:
    api = APIServer()
    kind = api.resolve_kind("Pod")
    old = {**_pod(policy, init=init), "status": {field: [_status("other", RUNNING), _status("c", was)]}}
    new = {**old, "status": {field: [_status("c", now)]}}
    causes = kind.strategy.validate_status_update(new, old)
    if forbidden:
        # the field is the *old* status's index (Go: fldpath.Index(i) over the old statuses)
        assert [(c.field, c.message) for c in causes] == [(f"status.{field}[1].state", MESSAGE)]
    else:
        assert causes == []


def test_the_server_answers_422_on_a_status_write_and_keeps_the_stored_status() -> None:
    api = APIServer()
    api.create(_pod("Never"))
    api.patch("Pod", "p", {"status": {"containerStatuses": [_status("c", EXITED_0)]}}, namespace="default",
              subresource="status")
    for write in (
        lambda: api.patch("Pod", "p", {"status": {"containerStatuses": [_status("c", RUNNING)]}},
                          namespace="default", subresource="status"),
        lambda: api.update({**api.get("Pod", "p", "default"), "status": {"containerStatuses": [_status("c", RUNNING)]}},
                           subresource="status"),
    ):
        with pytest.raises(ApiError) as err:
            write()
        assert err.value.code == 422
        assert err.value.message == f'Pod "p" is invalid: status.containerStatuses[0].state: {MESSAGE}'
    state = api.get("Pod", "p", "default")["status"]["containerStatuses"][0]["state"]
    assert list(state) == ["terminated"] and state["terminated"]["exitCode"] == 0
    # other status fields still change, and a write that leaves the statuses alone is not checked again
    api.patch("Pod", "p", {"status": {"phase": "Succeeded"}}, namespace="default", subresource="status")
    assert api.get("Pod", "p", "default")["status"]["phase"] == "Succeeded"
