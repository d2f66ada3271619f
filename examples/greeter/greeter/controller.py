"""The Greeting controller: each Greeting owns a ConfigMap ``<name>-greeting`` holding its message.

It is written the way a controller-runtime reconciler is: read the object from
the cache, make the world match its spec, report in status, return an error to
be retried with back-off.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from fakeapi import ApiError, is_not_found
from fakeapi.host import Context, Host, Request, Result

CRD: dict[str, Any] = yaml.safe_load((Path(__file__).with_name("crd.yaml")).read_text(encoding="utf-8"))
CONTROLLER = "greeter"


def reconcile(ctx: Context, req: Request) -> Result | None:
    """Create or correct the Greeting's ConfigMap, then write ``status``."""
    try:
        greeting = ctx.client.get("Greeting", req.name, req.namespace)
    except ApiError as e:
        if is_not_found(e):
            return None  # deleted: the garbage collector removes the ConfigMap it owned
        raise
    meta = greeting["metadata"]
    message = (greeting.get("spec") or {}).get("message", "")
    cm_name = f"{req.name}-greeting"
    try:
        cm = ctx.client.get("ConfigMap", cm_name, req.namespace)
    except ApiError as e:
        if not is_not_found(e):
            raise
        ctx.client.create({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": cm_name, "namespace": req.namespace, "ownerReferences": [{
                "apiVersion": "example.org/v1", "kind": "Greeting", "name": req.name, "uid": meta["uid"],
                "controller": True, "blockOwnerDeletion": True}]},
            "data": {"message": message},
        })
    else:
        if (cm.get("data") or {}).get("message") != message:
            cm["data"] = {"message": message}
            ctx.client.update(cm)
    status = {"configMap": cm_name, "observedGeneration": meta["generation"]}
    if greeting.get("status") != status:
        greeting["status"] = status
        ctx.client.update_status(greeting)
    return None


def setup(host: Host) -> None:
    """Register the controller on a host, as a manager's ``SetupWithManager`` would."""
    host.controller(CONTROLLER).for_("Greeting").owns("ConfigMap").complete(reconcile)
