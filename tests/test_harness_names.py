"""Did-you-mean wherever a case looks a name up (issue 23, item 8): kinds and API versions in given and
creates, bundle names, operation names, service and call names, controllers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fakeapi.harness import Bundle, LoadError, load_text, register_bundle, render_failure, run_case
from fakeapi.harness.names import kind_hint
from fakeapi.server.apiserver import APIServer
from reconcilers.bundle import bundle as arc_bundle

register_bundle(arc_bundle)  # the arc bundle by name, also where the package is not installed


def _problems(text: str) -> str:
    with pytest.raises(LoadError) as e:
        load_text(text, "n.yaml")
    return e.value.render()


@pytest.mark.parametrize(("text", "message"), [
    ("name: x\ngiven:\n  - {apiVersion: v1, kind: ConfigMapp, metadata: {name: c, namespace: default}}\n",
     "n.yaml:3:28: unknown kind `ConfigMapp` in given (did you mean `ConfigMap`?)"),
    ("name: x\ngiven:\n  - {apiVersion: apps/v2, kind: Deployment, metadata: {name: d, namespace: default}}\n",
     "n.yaml:3:18: `Deployment` is served in `apps/v1`, not in `apps/v2` in given"),
    ("name: x\nsteps:\n  - do:\n      - create: {apiVersion: v1, kind: Secrett, metadata: {name: s, namespace: default}}\n",
     "unknown kind `Secrett` in a `create` (did you mean `Secret`?)"),
    ("name: x\nsteps:\n  - do:\n      - apply: {apiVersion: v2, kind: ConfigMap, metadata: {name: s, namespace: default}}\n",
     "`ConfigMap` is served in `v1`, not in `v2` in an `apply`"),
    ("name: x\nbundles: [ark]\n", "unknown bundle `ark` (did you mean `arc`?)"),
    ("name: x\nsteps:\n  - do:\n      - creat: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n",
     "unknown key `creat` in an operation (did you mean `create`?)"),
    ("name: x\nbundles: [arc]\nsteps:\n  - do:\n      - arc.queue_job: {name: a, namespace: b, count: 1}\n",
     "unknown operation `arc.queue_job` (did you mean `arc.queue_jobs`?)"),
    ("name: x\nbundles: [arc]\nsteps:\n  - do:\n      - fault: {on: {service: action, call: RemoveRunner}, error: Conflict}\n",
     "unknown service `action` (did you mean `actions`?)"),
    ("name: x\nbundles: [arc]\nsteps:\n  - do:\n      - fault: {on: {service: actions, call: RemoveRuner}, error: Conflict}\n",
     "unknown call `RemoveRuner` of service `actions` (did you mean `RemoveRunner`?)"),
    ("name: x\nbundles: [arc]\nsteps:\n  - do:\n      - crash: ephemeralrunnr\n",
     "unknown controller `ephemeralrunnr` to crash (did you mean `ephemeralrunner`?)"),
    ("name: x\nservices:\n  ark: {}\nbundles: [arc]\n", "`services.ark` is for a bundle the case does not host"
                                                      " (did you mean `arc`?)"),
])
def test_a_misspelt_name_is_a_load_error_with_the_nearest_name(text: str, message: str) -> None:
    assert message in _problems(text)


def test_a_crd_in_the_case_makes_its_kind_and_versions_known() -> None:
    crd = ("{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: gs.e.org}, "
           "spec: {group: e.org, scope: Namespaced, names: {kind: G, plural: gs}, versions: [{name: v1, served: true,"
           " storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]}}")
    assert load_text(f"name: x\ngiven:\n  - {crd}\n  - {{apiVersion: e.org/v1, kind: G, metadata: {{name: g}}}}\n")
    assert "`G` is served in `e.org/v1`, not in `e.org/v2`" in _problems(
        f"name: x\ngiven:\n  - {crd}\n  - {{apiVersion: e.org/v2, kind: G, metadata: {{name: g}}}}\n")


def test_the_runtime_404_of_an_unknown_kind_says_what_is_served() -> None:
    api = APIServer()
    assert kind_hint(api, "ConfigMapp", "v1") == "the server serves no kind `ConfigMapp` (did you mean `ConfigMap`?)"
    assert kind_hint(api, "Deployment", "apps/v2") == "`Deployment` is served in `apps/v1`, not in `apps/v2`"
    assert kind_hint(api, "ConfigMap", "v1") == ""
    assert "register its CRD first" in kind_hint(api, "Zebra", "z.org/v1")


def test_a_kind_the_loader_cannot_know_gets_the_hint_when_it_runs() -> None:
    # a bundle that declares no kinds and cannot be installed statically: kinds are not checked at load
    def install(host: object, settings: dict[str, object]) -> None:
        if not settings:
            raise ValueError("needs settings")

    register_bundle(Bundle("names-test-opaque", install))
    case = load_text("name: x\nbundles: [names-test-opaque]\nservices:\n  names-test-opaque: {a: 1}\n"
                     "given:\n  - {apiVersion: v1, kind: ConfigMapp, metadata: {name: c, namespace: default}}\n",
                     "n.yaml")[0]
    report = render_failure(run_case(case))
    assert "n.yaml:6  storing ConfigMapp default/c failed: 404 NotFound: the server could not find the requested " \
           "resource: the server serves no kind `ConfigMapp` (did you mean `ConfigMap`?)" in report


def test_the_arc_bundle_declares_every_call_of_its_actions_service() -> None:
    source = (Path(__file__).resolve().parents[1] / "reconcilers" / "actions_service.py").read_text()
    assert set(arc_bundle.services["actions"]) == set(re.findall(r'self\._call\("(\w+)"', source))


def test_a_target_in_a_version_the_kind_is_not_served_in_says_where_it_is() -> None:
    case = load_text("name: x\nsteps:\n  - do:\n      - patch: {kind: ConfigMap, apiVersion: v2, namespace: default,"
                     " name: c, patch: {}}\n", "n.yaml")[0]
    assert "`ConfigMap` is served in `v1`, not in `v2`" in render_failure(run_case(case))


def test_a_hot_loop_report_points_at_the_settle_forms_for_polling() -> None:
    from test_settle_forms import CM, POLLER

    report = render_failure(run_case(load_text(f"name: p\nbundles: [{POLLER}]\ngiven: [{CM}]\n", "p.yaml")[0],
                                     budget=20))
    assert "settles with `settle: {until_idle: true, max: 10m}`; after given, with `given_settle:`" in report
