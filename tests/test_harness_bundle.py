"""A tiny bundle for the harness tests (``toy``), and tests of the bundle itself.

``toy`` hosts one controller, ``widget``: for each ``Widget``
(toy.example.com/v1) it keeps ``spec.replicas`` ConfigMaps named
``<widget>-<i>``, owned by the widget, and reports ``status.phase``,
``status.readyReplicas`` and two conditions (a list keyed by ``type``). It
defines operations ``toy.scale`` and ``toy.label`` and the invariant
``toy.max-configmaps`` (settings: ``services.toy.maxConfigMaps``).

Other harness test modules import :data:`TOY` from here (importing registers it).
"""

from __future__ import annotations

from typing import Any

from fakeapi.harness.bundles import Bundle, OpContext, get_bundle, register_bundle
from fakeapi.host import Context, Host, Request, Result
from fakeapi.machinery.errors import ApiError, is_already_exists, is_not_found
from fakeapi.server.apiserver import APIServer

GROUP = "toy.example.com"
API_VERSION = f"{GROUP}/v1"

WIDGET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"widgets.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
        "versions": [{
            "name": "v1",
            "served": True,
            "storage": True,
            "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {"type": "object", "properties": {
                        "replicas": {"type": "integer", "default": 1},
                        "image": {"type": "string"},
                        "tags": {"type": "array", "items": {"type": "string"}},
                    }},
                    "status": {"type": "object", "properties": {
                        "phase": {"type": "string"},
                        "readyReplicas": {"type": "integer"},
                        "conditions": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["type"],
                            "items": {"type": "object", "required": ["type"], "properties": {
                                "type": {"type": "string"},
                                "status": {"type": "string"},
                                "reason": {"type": "string"},
                            }},
                        },
                    }},
                },
            }},
        }],
    },
}


def reconcile_widget(ctx: Context, req: Request) -> Result | None:
    """Keep ``replicas`` owned ConfigMaps and report status."""
    try:
        w = ctx.client.get("Widget", req.name, req.namespace, api_version=API_VERSION)
    except ApiError as e:
        if is_not_found(e):
            return None
        raise
    meta = w["metadata"]
    if meta.get("deletionTimestamp"):
        return None
    replicas = int((w.get("spec") or {}).get("replicas") or 0)
    wanted = {f"{req.name}-{i}" for i in range(replicas)}
    have = {cm["metadata"]["name"] for cm in ctx.client.list("ConfigMap", req.namespace,
                                                              labels={"toy/widget": req.name})}
    for name in sorted(wanted - have):
        cm = {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": req.namespace, "labels": {"toy/widget": req.name},
                         "ownerReferences": [{"apiVersion": API_VERSION, "kind": "Widget", "name": req.name,
                                              "uid": meta["uid"], "controller": True}]},
            "data": {"image": str((w.get("spec") or {}).get("image") or "")},
        }
        try:
            ctx.client.create(cm)
        except ApiError as e:
            if not is_already_exists(e):
                raise
    for name in sorted(have - wanted):
        try:
            ctx.client.delete("ConfigMap", name, req.namespace)
        except ApiError as e:
            if not is_not_found(e):
                raise
    status = {
        "phase": "Ready" if replicas else "Idle",
        "readyReplicas": replicas,
        "conditions": [{"type": "Ready", "status": "True" if replicas else "False", "reason": "Scaled"},
                       {"type": "Scaled", "status": "True"}],
    }
    if w.get("status") != status:
        ctx.client.patch("Widget", req.name, {"status": status}, namespace=req.namespace, api_version=API_VERSION,
                         subresource="status")
    return None


def install(host: Host, settings: dict[str, Any]) -> dict[str, Any]:
    """Register the Widget kind and the ``widget`` controller."""
    api = host.api
    if api.kinds.find("Widget", API_VERSION) is None:
        api.register_crd(WIDGET_CRD, actor="system")
    host.controller("widget").for_("Widget", API_VERSION).owns("ConfigMap", "v1").complete(reconcile_widget)
    return {"max": int(settings.get("maxConfigMaps", 1000)), "scaled": 0}


def op_scale(ctx: OpContext, args: Any) -> None:
    """``toy.scale: {name, namespace, replicas}``: the user sets ``spec.replicas``."""
    ctx.state["scaled"] += 1
    ctx.host.api.patch("Widget", args["name"], {"spec": {"replicas": args["replicas"]}},
                       namespace=args["namespace"], api_version=API_VERSION)


def op_label(ctx: OpContext, args: Any) -> None:
    """``toy.label: {<target>, label: k=v}``: the user labels every object of the target."""
    key, _, value = str(args["label"]).partition("=")
    for obj in ctx.resolve({k: v for k, v in args.items() if k != "label"}):
        m = obj["metadata"]
        ctx.host.api.patch(obj["kind"], m["name"], {"metadata": {"labels": {key: value}}},
                           namespace=m.get("namespace"), api_version=obj["apiVersion"])


def inv_max_configmaps(host: Host, state: Any) -> list[str]:
    """No namespace holds more toy ConfigMaps than ``maxConfigMaps``."""
    counts: dict[str, int] = {}
    cm_kind = host.api.kinds.find("ConfigMap", "v1")
    for cm in host.api.objects(cm_kind):
        if "toy/widget" in (cm["metadata"].get("labels") or {}):
            ns = cm["metadata"]["namespace"]
            counts[ns] = counts.get(ns, 0) + 1
    return [f"{n} toy ConfigMaps in {ns} (max {state['max']})" for ns, n in sorted(counts.items()) if n > state["max"]]


TOY = register_bundle(Bundle(
    name="toy",
    install=install,
    operations={"toy.scale": op_scale, "toy.label": op_label},
    invariants={"toy.max-configmaps": inv_max_configmaps},
    settings_schema={"type": "object", "properties": {"maxConfigMaps": {"type": "integer", "minimum": 0}},
                     "additionalProperties": False},
    operation_schemas={"toy.scale": {
        "type": "object", "required": ["name", "namespace", "replicas"], "additionalProperties": False,
        "properties": {"name": {"type": "string"}, "namespace": {"type": "string"},
                       "replicas": {"type": "integer", "minimum": 0}},
    }},
    controllers=("widget",),
    description="a toy controller for the harness tests",
))

#: A fixture preamble: a namespace and nothing else (the toy bundle registers its CRD).
PREAMBLE = """\
bundles: [toy]
given:
  - {apiVersion: v1, kind: Namespace, metadata: {name: ns}}
"""


def test_toy_bundle_reconciles_a_widget() -> None:
    api = APIServer()
    host = Host(api)
    state = install(host, {})
    assert state["max"] == 1000
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    api.create({"apiVersion": API_VERSION, "kind": "Widget", "metadata": {"name": "w", "namespace": "ns"},
                "spec": {"replicas": 2}})
    host.run_until_idle()
    cms = api.list("ConfigMap", "ns")["items"]
    assert sorted(c["metadata"]["name"] for c in cms) == ["w-0", "w-1"]
    w = api.get("Widget", "w", "ns", api_version=API_VERSION)
    assert w["status"]["phase"] == "Ready"


def test_toy_bundle_is_registered() -> None:
    assert get_bundle("toy") is TOY
