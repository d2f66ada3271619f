"""The core ("") group's kinds and their strategies (``pkg/registry/core/<resource>/strategy.go``).

Namespaces (finalized by the namespace controller), Pods (deleted gracefully, their status kept
on create), Secrets and ConfigMaps (immutable data), PersistentVolumeClaims (the protection
finalizer), Services (cluster IPs and node ports allocated by the storage), ServiceAccounts and
Events.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from fakeapi.codec.gomodel import builtin_go_type
from fakeapi.machinery import errors
from fakeapi.machinery.errors import Cause
from fakeapi.machinery.jsonutil import fast_copy, json_copy
from fakeapi.machinery.lazymodule import lazy_module
from fakeapi.registry.core.claims import PVC_PROTECTION
from fakeapi.registry.core.namespacedefaults import default_namespace
from fakeapi.registry.strategy import BuiltinSpec, BuiltinStrategy, Obj, StrategyContext, SubresourceWrite

if TYPE_CHECKING:
    from fakeapi.registry.core import claimvalidation, defaults, servicevalidation, validation
else:  # (imported on first use: a server that never writes these kinds never compiles them; issue 22)
    defaults = lazy_module(__name__, "fakeapi.registry.core.defaults")
    validation = lazy_module(__name__, "fakeapi.registry.core.validation")
    claimvalidation = lazy_module(__name__, "fakeapi.registry.core.claimvalidation")
    servicevalidation = lazy_module(__name__, "fakeapi.registry.core.servicevalidation")

#: Namespaces the NamespaceLifecycle admission plugin refuses to delete.
IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")


class NamespaceStrategy(BuiltinStrategy):
    """Namespaces: the ``kubernetes`` finalizer the namespace controller removes (``/finalize``)."""

    spec = BuiltinSpec("", "v1", "Namespace", "namespaces", "io.k8s.api.core.v1.Namespace", namespaced=False,
                       status=True, name_rule="label", fields=("status.phase",), short_names=("ns",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/core/namespace/strategy.go: true
    allow_unconditional_update = True

    subresource_verbs = MappingProxyType({"finalize": "update"})

    def write_subresource(self, ctx: StrategyContext, subresource: str, stored: Obj, body: Obj) -> SubresourceWrite:
        """``/finalize`` (``FinalizeREST``): ``spec.finalizers`` dropped; the namespace is deleted when
        it is terminating and no metadata finalizer holds it."""
        new = fast_copy(stored)
        new.setdefault("spec", {}).pop("finalizers", None)  # (an empty spec stays: Go encodes it as {})
        return SubresourceWrite(new, delete=bool(new["metadata"].get("deletionTimestamp")
                                                 and not new["metadata"].get("finalizers")))

    def default(self, obj: Obj, base: Obj | None) -> None:
        """``SetDefaults_Namespace``."""
        default_namespace(obj)

    def prepare_for_create(self, obj: Obj) -> None:
        """The ``kubernetes`` finalizer, phase Active, the ``kubernetes.io/metadata.name`` label."""
        spec = obj.setdefault("spec", {})
        fins = list(spec.get("finalizers") or [])
        if "kubernetes" not in fins:
            fins.append("kubernetes")
        spec["finalizers"] = fins
        obj["status"] = {"phase": "Active"}
        labels = obj["metadata"].setdefault("labels", {})
        labels["kubernetes.io/metadata.name"] = obj["metadata"].get("name") or ""

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        """``spec.finalizers`` change only through ``/finalize`` (the spec may be the stored one: replaced)."""
        spec, fins = new.get("spec"), (old.get("spec") or {}).get("finalizers", [])
        if type(spec) is dict and spec.get("finalizers") is fins:
            return  # (h22write, issue 22: the stored finalizers already: the spec stays as it is, shared)
        new["spec"] = {**(spec or {}), "finalizers": fins}

    def check_delete(self, name: str) -> None:
        """NamespaceLifecycle: ``default``, ``kube-system`` and ``kube-public`` stay."""
        if name in IMMORTAL_NAMESPACES:
            raise errors.forbidden("", "namespaces", name, "this namespace may not be deleted")

    def graceful_delete_seconds(self, obj: Obj, grace: int | None) -> int:
        """A namespace with finalizers waits for the namespace controller."""
        return -1 if (obj.get("spec") or {}).get("finalizers") else 0

    def prepare_for_delete(self, obj: Obj) -> None:
        """Phase Terminating."""
        obj["status"] = {**(obj.get("status") or {}), "phase": "Terminating"}


class PodStrategy(BuiltinStrategy):
    """Pods: their status kept on create, deleted gracefully once bound to a node."""

    spec = BuiltinSpec("", "v1", "Pod", "pods", "io.k8s.api.core.v1.Pod", status=True, initial_generation=1,
                       return_deleted_object=True,
                       fields=("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
                               "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"),
                       short_names=("po",), categories=("all",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/core/pod/strategy.go: true
    allow_unconditional_update = True
    reset_status_on_create = False

    subresource_verbs = MappingProxyType({"binding": "create"})

    def write_subresource(self, ctx: StrategyContext, subresource: str, stored: Obj, body: Obj) -> SubresourceWrite:
        """``pods/binding`` (``BindingREST``): ``spec.nodeName`` set to the binding's target and the
        ``PodScheduled`` condition; 409 when the pod is already bound or being deleted. As
        kube-apiserver's (a storage update past the field manager), it leaves managedFields as they
        were: no manager owns ``spec.nodeName`` or the condition (kubernetes/kubernetes#127508)."""
        name = stored["metadata"].get("name", "")
        target = body.get("target")
        node = str((target if isinstance(target, dict) else {}).get("name") or "")
        spec = stored.get("spec") or {}
        if spec.get("nodeName"):
            raise errors.conflict("", "pods", name, f'pod {name} is already assigned to node "{spec["nodeName"]}"')
        if stored["metadata"].get("deletionTimestamp"):
            raise errors.conflict("", "pods", name, f"pod {name} is being deleted, cannot be assigned to a host")
        # a new snapshot sharing what the binding leaves as it was
        status = dict(stored.get("status") or {})
        conds = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
        conds.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                      "lastTransitionTime": ctx.timestamp()})
        status["conditions"] = conds
        new = {**stored, "metadata": dict(stored["metadata"]), "spec": {**spec, "nodeName": node}, "status": status}
        return SubresourceWrite(new, response={"kind": "Status", "apiVersion": "v1", "metadata": {},
                                               "status": "Success", "code": 201}, code=201)

    def default(self, obj: Obj, base: Obj | None) -> None:
        """``SetDefaults_Pod`` and the nested defaults, ``status.phase`` and ``status.qosClass``."""
        defaults.default_pod(obj, base)

    def validate(self, obj: Obj) -> list[Cause]:
        """``ValidatePodCreate``."""
        return validation.pod_causes(obj)

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        """``ValidatePodUpdate``: the spec is immutable but for a few fields."""
        return validation.pod_update_causes(obj, old, builtin_go_type(self.spec.definition).fields["spec"].type)

    def validate_status_update(self, obj: Obj, old: Obj) -> list[Cause]:
        """``ValidatePodStatusUpdate``: container state transitions."""
        return validation.pod_status_update_causes(obj, old)

    def graceful_delete_seconds(self, obj: Obj, grace: int | None) -> int:
        """``podStrategy.CheckGracefulDelete``: a pod on a node waits its grace period (the kubelet confirms)."""
        spec = obj.get("spec") or {}
        phase = (obj.get("status") or {}).get("phase")
        if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
            return 0
        if grace is None:
            grace = int(spec.get("terminationGracePeriodSeconds", 30) or 0)
        return max(int(grace), 0) if grace >= 0 else 1


class SecretStrategy(BuiltinStrategy):
    """Secrets: keys, type rules, immutable data."""

    spec = BuiltinSpec("", "v1", "Secret", "secrets", "io.k8s.api.core.v1.Secret", fields=("type",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/core/secret/strategy.go: true
    allow_unconditional_update = True

    def default(self, obj: Obj, base: Obj | None) -> None:
        """``SetDefaults_Secret`` (and ``stringData`` merged into ``data``)."""
        defaults.default_secret(obj)

    def validate(self, obj: Obj) -> list[Cause]:
        """``ValidateSecret``."""
        return validation.secret_causes(obj)

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        """``ValidateSecretUpdate``."""
        return validation.immutable_data_causes("Secret", obj, old)


class ConfigMapStrategy(BuiltinStrategy):
    """ConfigMaps: keys, immutable data."""

    spec = BuiltinSpec("", "v1", "ConfigMap", "configmaps", "io.k8s.api.core.v1.ConfigMap", short_names=("cm",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/core/configmap/strategy.go: true
    allow_unconditional_update = True

    def validate(self, obj: Obj) -> list[Cause]:
        """``ValidateConfigMap``."""
        return validation.config_map_causes(obj)

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        """``ValidateConfigMapUpdate``."""
        return validation.immutable_data_causes("ConfigMap", obj, old)


class PersistentVolumeClaimStrategy(BuiltinStrategy):
    """PersistentVolumeClaims: phase Pending on create, the pvc-protection finalizer."""

    spec = BuiltinSpec("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims",
                       "io.k8s.api.core.v1.PersistentVolumeClaim", status=True, return_deleted_object=True,
                       short_names=("pvc",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/core/persistentvolumeclaim/strategy.go: true
    allow_unconditional_update = True

    def default(self, obj: Obj, base: Obj | None) -> None:
        """``SetDefaults_PersistentVolumeClaim``."""
        defaults.default_pvc(obj)

    def prepare_for_create(self, obj: Obj) -> None:
        """PrepareForCreate resets the status (phase Pending again as the stored claim is read back);
        the StorageObjectInUseProtection admission plugin adds the protection finalizer."""
        obj["status"] = {"phase": "Pending"}
        fins = obj["metadata"].setdefault("finalizers", [])
        if PVC_PROTECTION not in fins:
            fins.append(PVC_PROTECTION)

    def validate(self, obj: Obj) -> list[Cause]:
        """``ValidatePersistentVolumeClaim``."""
        return claimvalidation.claim_causes(obj)

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        """``ValidatePersistentVolumeClaimUpdate``."""
        return claimvalidation.claim_update_causes(obj, old)


class ServiceStrategy(BuiltinStrategy):
    """Services: the storage allocates IP families, cluster IPs and node ports."""

    spec = BuiltinSpec("", "v1", "Service", "services", "io.k8s.api.core.v1.Service", status=True,
                       name_rule="dns1035", return_deleted_object=True, short_names=("svc",), categories=("all",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/core/service/strategy.go: true
    allow_unconditional_update = True
    #: ``svcStrategy.AllowCreateOnUpdate`` is true.
    allow_create_on_update = True

    def default(self, obj: Obj, base: Obj | None) -> None:
        """``SetDefaults_Service``."""
        defaults.default_service(obj)

    def begin_create(self, ctx: StrategyContext, obj: Obj) -> None:
        """The storage's ``beginCreate``: allocations."""
        _allocate(ctx, obj, None)

    def begin_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> None:
        """The storage's ``beginUpdate``: what the client left out of the allocations is kept."""
        if new.get("spec") is not old.get("spec"):
            new["spec"] = json_copy(new.get("spec") or {})  # (it may share parts with the stored spec)
            _allocate(ctx, new, old)

    def validate(self, obj: Obj) -> list[Cause]:
        """``ValidateService``."""
        return servicevalidation.service_causes(obj)

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        """``ValidateServiceUpdate``."""
        return servicevalidation.service_update_causes(obj, old)


def _allocate(ctx: StrategyContext, svc: Obj, old: Obj | None) -> None:
    """The Service storage's ``beginCreate``/``beginUpdate``: IP families, cluster IP, node ports (422 on failure).

    An update first keeps what the client left out of what was allocated, and drops what a
    new type has no use for (:mod:`fakeapi.registry.core.serviceallocation`).
    """
    import fakeapi.registry.core.serviceallocation as alloc  # (lazy: ipaddress; not a from-import, cheaper per call)

    spec = svc.get("spec")
    if not isinstance(spec, dict):
        return
    old_spec: dict[str, Any] | None = (old.get("spec") or {}) if old is not None else None
    uid = svc["metadata"].get("uid")
    index, own_key = ctx.service_allocations(uid)
    ips = alloc.index_ips_in_use(index, own_key)  # (the stored Services' but this one's own)
    if svc["metadata"].get("name") == "kubernetes" and svc["metadata"].get("namespace") == "default":
        ips.discard(alloc.KUBERNETES_SERVICE_IP)  # (reserved for kube-apiserver's own Service: this one)
    if old_spec is not None:
        alloc.patch_allocated_values(spec, old_spec)
        alloc.normalize_cluster_ips(spec, old_spec)
        alloc.drop_type_dependent_fields(spec, old_spec)
    else:
        alloc.normalize_cluster_ips(spec)
    causes = alloc.cluster_ip_mismatch(spec) or alloc.init_ip_family_fields(spec, old_spec)
    if not causes and not (old_spec is not None and old_spec.get("clusterIPs") and spec.get("clusterIPs")):
        causes = alloc.allocate_cluster_ip(spec, ips, ctx.rng)
    if not causes and alloc.needs_node_ports(spec):
        ports = alloc.index_ports_in_use(index, own_key)
        causes = alloc.allocate_node_ports(spec, ports, ctx.rng, old_spec)
    if causes:
        raise errors.invalid("", "Service", svc["metadata"].get("name") or "", causes)


class ServiceAccountStrategy(BuiltinStrategy):
    """ServiceAccounts: a delete answers with the object."""

    spec = BuiltinSpec("", "v1", "ServiceAccount", "serviceaccounts", "io.k8s.api.core.v1.ServiceAccount",
                       return_deleted_object=True, short_names=("sa",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/core/serviceaccount/strategy.go: true
    allow_unconditional_update = True


class EventStrategy(BuiltinStrategy):
    """core/v1 Events: selectable by their involved object."""

    spec = BuiltinSpec("", "v1", "Event", "events", "io.k8s.api.core.v1.Event",
                       fields=("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                               "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                               "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"),
                       short_names=("ev",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/core/event/strategy.go: true
    allow_unconditional_update = True
    #: ``eventStrategy.AllowCreateOnUpdate`` is true.
    allow_create_on_update = True


class ReplicationControllerStrategy(BuiltinStrategy):
    """ReplicationControllers: generation tracked, the status subresource, a scale subresource (served by http)."""

    spec = BuiltinSpec("", "v1", "ReplicationController", "replicationcontrollers",
                       "io.k8s.api.core.v1.ReplicationController", status=True, initial_generation=1,
                       fields=("status.replicas",), short_names=("rc",), categories=("all",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/core/replicationcontroller/strategy.go: true
    allow_unconditional_update = True

    def default(self, obj: Obj, base: Obj | None) -> None:
        """``SetDefaults_ReplicationController``."""
        defaults.default_replication_controller(obj)


class NodeStrategy(BuiltinStrategy):
    """Nodes: cluster-scoped; a created Node keeps its status (kubelets register with theirs)."""

    spec = BuiltinSpec("", "v1", "Node", "nodes", "io.k8s.api.core.v1.Node", namespaced=False, status=True,
                       fields=("spec.unschedulable",), short_names=("no",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/core/node/strategy.go: true
    allow_unconditional_update = True
    reset_status_on_create = False

    def default(self, obj: Obj, base: Obj | None) -> None:
        """``SetDefaults_NodeStatus``."""
        defaults.default_node(obj)


#: The group's kinds, in the order they are registered.
STRATEGIES: tuple[BuiltinStrategy, ...] = (
    NamespaceStrategy(), PodStrategy(), SecretStrategy(), ConfigMapStrategy(), PersistentVolumeClaimStrategy(),
    ServiceStrategy(), ServiceAccountStrategy(), EventStrategy(), ReplicationControllerStrategy(), NodeStrategy(),
)
