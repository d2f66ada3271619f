"""The built-in kinds every server serves, with their strategy settings.

Schemas come from the kubernetes-validate package; the Go type models are
derived from them (fakeapi.codec.gomodel). What differs per kind (scope, status
subresource, unconditional updates, generation tracking, graceful deletion,
selectable fields, name rule) is listed here, from the kinds' strategies in
kubernetes/pkg/registry.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, partial

from fakeapi.registry.kinds import Kind


@dataclass(frozen=True)
class BuiltinSpec:
    """How to build one built-in Kind."""

    group: str
    version: str
    kind: str
    plural: str
    definition: str
    namespaced: bool = True
    status: bool = False
    initial_generation: int = 0
    return_deleted_object: bool = False
    name_rule: str = "subdomain"
    fields: tuple[str, ...] = ()
    short_names: tuple[str, ...] = ()
    #: An update that changes the annotations bumps the generation too (Deployments: they are
    #: copied to the ReplicaSets).
    annotations_bump_generation: bool = False
    #: A delete without a propagation policy orphans the dependents (batch/v1 Jobs, for backward
    #: compatibility: ``DefaultGarbageCollectionPolicy``), with a warning.
    orphans_by_default: bool = False
    #: The discovery categories (``Categories()`` of the kind's REST storage: ``all`` for workloads).
    categories: tuple[str, ...] = ()


BUILTINS: tuple[BuiltinSpec, ...] = (
    BuiltinSpec("", "v1", "Namespace", "namespaces", "io.k8s.api.core.v1.Namespace", namespaced=False,
                status=True, name_rule="label", fields=("status.phase",), short_names=("ns",)),
    BuiltinSpec("", "v1", "Pod", "pods", "io.k8s.api.core.v1.Pod", status=True, initial_generation=1,
                return_deleted_object=True,
                fields=("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
                        "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"),
                short_names=("po",), categories=("all",)),
    BuiltinSpec("", "v1", "Secret", "secrets", "io.k8s.api.core.v1.Secret", fields=("type",)),
    BuiltinSpec("", "v1", "ConfigMap", "configmaps", "io.k8s.api.core.v1.ConfigMap", short_names=("cm",)),
    BuiltinSpec("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", "io.k8s.api.core.v1.PersistentVolumeClaim",
                status=True, return_deleted_object=True, short_names=("pvc",)),
    BuiltinSpec("", "v1", "Service", "services", "io.k8s.api.core.v1.Service", status=True, name_rule="dns1035",
                return_deleted_object=True, short_names=("svc",), categories=("all",)),
    BuiltinSpec("", "v1", "ServiceAccount", "serviceaccounts", "io.k8s.api.core.v1.ServiceAccount",
                return_deleted_object=True, short_names=("sa",)),
    BuiltinSpec("", "v1", "Event", "events", "io.k8s.api.core.v1.Event",
                fields=("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                        "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                        "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"),
                short_names=("ev",)),
    BuiltinSpec("rbac.authorization.k8s.io", "v1", "Role", "roles", "io.k8s.api.rbac.v1.Role"),
    BuiltinSpec("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", "io.k8s.api.rbac.v1.RoleBinding"),
    BuiltinSpec("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", "io.k8s.api.rbac.v1.ClusterRole",
                namespaced=False),
    BuiltinSpec("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings",
                "io.k8s.api.rbac.v1.ClusterRoleBinding", namespaced=False),
    BuiltinSpec("coordination.k8s.io", "v1", "Lease", "leases", "io.k8s.api.coordination.v1.Lease"),
    BuiltinSpec("apps", "v1", "Deployment", "deployments", "io.k8s.api.apps.v1.Deployment", status=True,
                initial_generation=1, short_names=("deploy",), annotations_bump_generation=True,
                categories=("all",)),
    BuiltinSpec("apps", "v1", "ReplicaSet", "replicasets", "io.k8s.api.apps.v1.ReplicaSet", status=True,
                initial_generation=1, fields=("status.replicas",), short_names=("rs",), categories=("all",)),
    BuiltinSpec("apps", "v1", "StatefulSet", "statefulsets", "io.k8s.api.apps.v1.StatefulSet", status=True,
                initial_generation=1, short_names=("sts",), categories=("all",)),
    BuiltinSpec("apps", "v1", "DaemonSet", "daemonsets", "io.k8s.api.apps.v1.DaemonSet", status=True,
                initial_generation=1, short_names=("ds",), categories=("all",)),
    BuiltinSpec("batch", "v1", "Job", "jobs", "io.k8s.api.batch.v1.Job", status=True, initial_generation=1,
                orphans_by_default=True, categories=("all",)),
    BuiltinSpec("batch", "v1", "CronJob", "cronjobs", "io.k8s.api.batch.v1.CronJob", status=True, initial_generation=1,
                short_names=("cj",), categories=("all",)),
    BuiltinSpec("networking.k8s.io", "v1", "Ingress", "ingresses", "io.k8s.api.networking.v1.Ingress", status=True,
                initial_generation=1, short_names=("ing",)),
    # no status: networking/v1 NetworkPolicyStatus is gone (its protobuf tag tombstoned); PrepareForCreate sets
    # generation 1, PrepareForUpdate bumps it on a spec change
    BuiltinSpec("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", "io.k8s.api.networking.v1.NetworkPolicy",
                initial_generation=1, short_names=("netpol",)),
    BuiltinSpec("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", "io.k8s.api.policy.v1.PodDisruptionBudget",
                status=True, initial_generation=1, short_names=("pdb",)),
    BuiltinSpec("", "v1", "ReplicationController", "replicationcontrollers", "io.k8s.api.core.v1.ReplicationController",
                status=True, initial_generation=1, fields=("status.replicas",), short_names=("rc",),
                categories=("all",)),
    BuiltinSpec("", "v1", "Node", "nodes", "io.k8s.api.core.v1.Node", namespaced=False, status=True,
                fields=("spec.unschedulable",), short_names=("no",)),
    BuiltinSpec("certificates.k8s.io", "v1", "CertificateSigningRequest", "certificatesigningrequests",
                "io.k8s.api.certificates.v1.CertificateSigningRequest", namespaced=False, status=True,
                fields=("spec.signerName",), short_names=("csr",)),
    BuiltinSpec("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities",
                "io.k8s.api.storage.v1.CSIStorageCapacity"),
    BuiltinSpec("apiregistration.k8s.io", "v1", "APIService", "apiservices",
                "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService", namespaced=False, status=True,
                categories=("api-extensions",)),
    BuiltinSpec("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions",
                "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
                namespaced=False, status=True, initial_generation=1, short_names=("crd", "crds"),
                categories=("api-extensions",)),
)


@cache
def _compiled(spec: BuiltinSpec) -> tuple[object, object, object]:
    from fakeapi.codec.gomodel import builtin_go_type
    from fakeapi.machinery.openapi import builtin_schema
    from fakeapi.schema.compiled import CompiledSchema

    api_version = f"{spec.group}/{spec.version}" if spec.group else spec.version
    schema = builtin_schema(spec.kind, api_version)
    return schema, CompiledSchema(schema, structural=False), builtin_go_type(spec.definition)


def builtin_kinds() -> list[Kind]:
    """Fresh Kind records for every built-in kind.

    A kind's schema, compiled schema and Go type are computed when first used (``kind.compiled``
    and the others read as plain attributes), once per process: a server that never sees a
    Secret never loads its schema.
    """
    out = []
    for spec in BUILTINS:
        out.append(
            Kind(
                group=spec.group,
                version=spec.version,
                kind=spec.kind,
                plural=spec.plural,
                namespaced=spec.namespaced,
                status_subresource=spec.status,
                short_names=spec.short_names,
                builtin=True,
                loader=partial(_compiled, spec),
                selectable_fields=spec.fields,
                allow_unconditional_update=True,
                initial_generation=spec.initial_generation,
                return_deleted_object=spec.return_deleted_object,
                name_rule=spec.name_rule,
                # decoded into Go structs: every field has one JSON type (a CRD's schemas are free-form)
                extra={"typed": spec.kind != "CustomResourceDefinition",
                       "annotations_bump_generation": spec.annotations_bump_generation,
                       "orphans_by_default": spec.orphans_by_default,
                       "categories": list(spec.categories)},
            )
        )
    return out
