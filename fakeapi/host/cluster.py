"""A served fakeapi as a cluster: controllers, a node and the bootstrap objects, in the served process.

A bare :class:`~fakeapi.server.apiserver.APIServer` is only the API server: nothing
collects garbage, finishes a namespace's deletion or runs a pod. A real
cluster's controller manager and kubelet do, concurrently with every client.
:class:`ServedCluster` runs them beside the HTTP server, on the server's clock:

* the garbage collector and the namespace controller (``api.gc``), and the
  simulated kubelet (:class:`~fakeapi.host.kubelet.Kubelet`), through a
  :class:`~fakeapi.host.host.Host` with no controllers of its own;
* the namespace bootstrap of kube-controller-manager: a ``default``
  ServiceAccount (serviceaccount controller) and the ``kube-root-ca.crt``
  ConfigMap (root-ca-cert-publisher) in every namespace, made again when deleted;
* the ReplicaSet and Deployment controllers (:mod:`fakeapi.host.workloads`) and the
  StatefulSet controller (:mod:`fakeapi.host.statefulsets`);
* the node: a Node object for the kubelet's node (registered at start, Ready,
  with capacity), as a kubelet registers itself;
* at start, kube-apiserver's own ``default/kubernetes`` Service, and the Pod
  admission plugins (:mod:`fakeapi.registry.core.admission`).

**Time.** With ``wall_clock=True`` (``fakeapi serve``) the clock follows wall
time: a background thread sets it, then runs whatever is due, after every
write and at least every ``tick`` seconds. With ``wall_clock=False`` the
clock is the server's virtual clock: the thread still runs at once what every
write makes due now (a deletion to collect, a pod to start), but time only
moves by :meth:`ServedCluster.advance`, so a test decides when a delay is
over. Either way :meth:`ServedCluster.wait_idle` waits (bounded, on a
condition: no sleeping) until everything due after the writes so far is done,
and :meth:`ServedCluster.settle` does that work in the caller's thread.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from fakeapi.host.host import Host
from fakeapi.host.statefulsets import StatefulSetController
from fakeapi.host.workloads import WorkloadControllers
from fakeapi.machinery import errors
from fakeapi.registry.core import admission
from fakeapi.registry.core.serviceallocation import KUBERNETES_SERVICE_IP

if TYPE_CHECKING:
    from fakeapi.registry.kinds import Kind
    from fakeapi.server.apiserver import APIServer

Obj = dict[str, Any]

#: The actor names of the bootstrap work, as the trace shows them.
SA_ACTOR = "service-account-controller"
ROOT_CA_ACTOR = "root-ca-cert-publisher"
NODE_ACTOR = "kubelet"
#: What the node reports as its capacity (a small machine's, with the default pod limit of 110).
NODE_CAPACITY = {"cpu": "4", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"}


def _version() -> str:
    """The kubelet's version: the Kubernetes version of the served schemas (what ``/version`` reports)."""
    import re

    from fakeapi.machinery.openapi import schema_dir

    m = re.match(r"^(v\d+\.\d+\.\d+)", schema_dir().name)
    return m.group(1) if m else ""


def node_object(name: str, now: str) -> Obj:
    """The Node a kubelet registers for ``name``: capacity, allocatable, the four healthy conditions, Ready."""
    def cond(ctype: str, status: str, reason: str, message: str) -> Obj:
        return {"type": ctype, "status": status, "lastHeartbeatTime": now, "lastTransitionTime": now,
                "reason": reason, "message": message}

    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64"}},
        "spec": {},
        "status": {
            "capacity": dict(NODE_CAPACITY),
            "allocatable": dict(NODE_CAPACITY),
            "conditions": [
                cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                cond("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "addresses": [{"type": "InternalIP", "address": "10.0.0.2"}, {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "",
                         "osImage": "fakeapi", "containerRuntimeVersion": "fakeapi://0", "kubeletVersion": _version(),
                         "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"},
        },
    }


#: The control plane's static pods (kubeadm's manifests), which the node's kubelet mirrors into kube-system.
CONTROL_PLANE = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")


def mirror_pod(component: str, node: Obj) -> Obj:
    """The mirror pod of a static control-plane pod on ``node``: owned by the Node, as the kubelet makes it."""
    name = node["metadata"]["name"]
    image = f"registry.k8s.io/{component}:{_version() if component != 'etcd' else '3.6.0-0'}"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": f"{component}-{name}", "namespace": "kube-system",
        "labels": {"component": component, "tier": "control-plane"},
        "annotations": {"kubernetes.io/config.mirror": component, "kubernetes.io/config.source": "file"},
        "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": node["metadata"]["uid"],
                             "controller": True}]},
        "spec": {"nodeName": name, "priorityClassName": "system-node-critical", "hostNetwork": True,
                 "containers": [{"name": component, "image": image, "command": [component]}]}}


def kubernetes_service() -> Obj:
    """kube-apiserver's ``default/kubernetes`` Service (its ``reconcileEndpoints`` master service)."""
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "kubernetes", "namespace": "default",
                         "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"type": "ClusterIP", "clusterIP": KUBERNETES_SERVICE_IP, "sessionAffinity": "None",
                     "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]}}


class NamespaceBootstrap:
    """The serviceaccount controller and the root CA publisher: every namespace's ``default``
    ServiceAccount and ``kube-root-ca.crt`` ConfigMap (an actor on the host)."""

    name = SA_ACTOR

    def __init__(self, api: APIServer, ca_pem: str) -> None:
        self.api = api
        self.ca_pem = ca_pem
        self._todo: set[str] = set()
        api.add_listener(self._on_event)
        with api.lock:
            for ns in api.list("Namespace", actor=self.name)["items"]:
                self._todo.add(ns["metadata"]["name"])

    def _on_event(self, etype: str, kind: Kind, obj: Obj, old: Obj | None) -> None:
        if not kind.builtin or kind.group:
            return
        meta = obj.get("metadata") or {}
        if kind.kind == "Namespace" and etype == "ADDED":
            self._todo.add(str(meta.get("name", "")))
        elif etype == "DELETED" and (
                (kind.kind == "ServiceAccount" and meta.get("name") == admission.DEFAULT_SERVICE_ACCOUNT)
                or (kind.kind == "ConfigMap" and meta.get("name") == admission.ROOT_CA_CONFIGMAP)):
            self._todo.add(str(meta.get("namespace", "")))

    def next_due(self) -> datetime | None:
        """Now when a namespace lacks its objects, else None."""
        return self.api.clock.now() if self._todo else None

    def run(self) -> bool:
        """Create what each noted namespace lacks (not in a terminating or vanished namespace)."""
        did = False
        for ns in sorted(self._todo):
            self._todo.discard(ns)
            try:
                got = self.api.get("Namespace", ns, actor=self.name, shared=True)
            except errors.ApiError:
                continue
            if (got.get("metadata") or {}).get("deletionTimestamp"):
                continue
            did = self._ensure(ns, {"apiVersion": "v1", "kind": "ServiceAccount",
                                    "metadata": {"name": admission.DEFAULT_SERVICE_ACCOUNT}}, SA_ACTOR) or did
            did = self._ensure(ns, {"apiVersion": "v1", "kind": "ConfigMap",
                                    "metadata": {"name": admission.ROOT_CA_CONFIGMAP,
                                                 "annotations": {"kubernetes.io/description": (
                                                     "Contains a CA bundle that can be used to verify the "
                                                     "kube-apiserver when using internal endpoints such as the "
                                                     "internal service IP or kubernetes.default.svc. No other "
                                                     "usage is guaranteed across distributions of Kubernetes "
                                                     "clusters.")}},
                                    "data": {"ca.crt": self.ca_pem}}, ROOT_CA_ACTOR) or did
        return did

    def _ensure(self, ns: str, obj: Obj, actor: str) -> bool:
        try:
            self.api.create(obj, namespace=ns, actor=actor, shared=True)
        except errors.ApiError:  # there already, or the namespace is closing: nothing to do
            return False
        return True


class NodeRegistration:
    """The kubelet's node registration: the Node object, made again if it is deleted (an actor)."""

    name = NODE_ACTOR

    def __init__(self, api: APIServer, node_name: str) -> None:
        self.api = api
        self.node_name = node_name
        self._missing = True
        api.add_listener(self._on_event)

    def _on_event(self, etype: str, kind: Kind, obj: Obj, old: Obj | None) -> None:
        if etype == "DELETED" and kind.builtin and kind.kind == "Node" and not kind.group \
                and (obj.get("metadata") or {}).get("name") == self.node_name:
            self._missing = True

    def next_due(self) -> datetime | None:
        """Now when the node is not registered, else None."""
        return self.api.clock.now() if self._missing else None

    def run(self) -> bool:
        """Register the node, and mirror the control plane's static pods into kube-system."""
        self._missing = False
        try:
            node = self.api.create(node_object(self.node_name, self.api.clock.timestamp()), actor=self.name)
        except errors.ApiError:
            return False
        for component in CONTROL_PLANE:
            with contextlib.suppress(errors.ApiError):  # (there already, or no kube-system namespace)
                self.api.create(mirror_pod(component, node), actor=self.name, shared=True)
        return True


class ServedCluster:
    """The controllers and the node of a served fakeapi, on its clock (see the module docstring)."""

    def __init__(self, api: APIServer, *, wall_clock: bool = False, ca_pem: str = "", tick: float = 0.5) -> None:
        self.api = api
        self.wall_clock = wall_clock
        self.tick = tick
        self.host = Host(api, garbage_collector=True, kubelet=True)
        node = self.host.kubelet.node_name if self.host.kubelet is not None else "fakeapi-node"
        if self.host.kubelet is not None:
            self.host.kubelet.stop_before_delete = True  # (clients wait for Ready=False before the pod goes)
        admission.install(api)
        self.host.add_actor(NodeRegistration(api, node))
        self.host.add_actor(NamespaceBootstrap(api, ca_pem))
        self.host.add_actor(WorkloadControllers(api))
        self.host.add_actor(StatefulSetController(api))
        self._kick = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Condition()
        self._settled_rv = -1
        self._thread: threading.Thread | None = None
        #: The last exception the background loop met (it keeps going), for reports.
        self.last_error: BaseException | None = None
        api.add_listener(self._on_write)
        with api.lock:
            self._bootstrap()

    def _bootstrap(self) -> None:
        api = self.api
        try:
            api.get("Service", "kubernetes", "default", actor="kube-apiserver", shared=True)
        except errors.ApiError:
            with contextlib.suppress(errors.ApiError):  # (no default namespace: nothing to put it in)
                api.create(kubernetes_service(), actor="kube-apiserver", shared=True)

    def _on_write(self, etype: str, kind: Kind, obj: Obj, old: Obj | None) -> None:
        self._kick.set()

    # -- driving --------------------------------------------------------------------------

    def settle(self) -> int:
        """Run, in this thread, everything due now (following wall time first with a wall clock);
        returns the resourceVersion reached."""
        with self.api.lock:
            if self.wall_clock:
                now = datetime.now(UTC)
                if now > self.api.clock.now():
                    self.api.clock.set(now)
            self.host.run_for(timedelta(0))
            rv = self.api.resource_version
        with self._idle:
            self._settled_rv = max(self._settled_rv, rv)
            self._idle.notify_all()
        return rv

    def advance(self, duration: timedelta | str | float) -> None:
        """Move the virtual clock on by ``duration``, running what falls due on the way (not with a wall clock)."""
        if self.wall_clock:
            raise ValueError("advance: the clock follows wall time")
        with self.api.lock:
            self.host.run_for(duration)
        self.settle()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until everything the writes so far made due is done; False if ``timeout`` seconds passed first.

        Without the background thread, settles in this thread instead.
        """
        if self._thread is None:
            self.settle()
            return True
        self._kick.set()
        with self._idle:
            return self._idle.wait_for(lambda: self._settled_rv >= self.api.resource_version, timeout)

    def read_log(self, namespace: str, name: str, container: str) -> list[tuple[datetime, str]]:
        """What a container of the kubelet's pods wrote (``pods/log``)."""
        kubelet = self.host.kubelet
        return kubelet.read_log(namespace, name, container) if kubelet is not None else []

    # -- the background loop --------------------------------------------------------------

    def start(self) -> ServedCluster:
        """Run the loop in a daemon thread (until :meth:`stop`)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="fakeapi-cluster", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """End the loop and wait (bounded) for its thread."""
        self._stop.set()
        self._kick.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._kick.clear()
            try:
                self.settle()
            except Exception as e:  # keep serving: a failing actor must not stop the cluster
                self.last_error = e
                print(f"fakeapi: cluster loop: {type(e).__name__}: {e}", file=sys.stderr)
            wait = None
            if self.wall_clock:
                wait = self.tick
                t = self.host.next_wakeup()
                if t is not None:
                    wait = min(wait, max(0.0, (t - self.api.clock.now()).total_seconds()))
            self._kick.wait(wait)
