"""The garbage collector (reference §4) and the namespace controller (§1.8)."""

from __future__ import annotations

import pytest
from support import configmap, drain, expect_error, make_api, owner_ref, widget

from fakeapi.server.apiserver import APIServer


def _names(api: APIServer, kind: str = "ConfigMap", ns: str = "ns") -> list[str]:
    return [i["metadata"]["name"] for i in api.list(kind, ns)["items"]]


def _owned(api: APIServer, owner: dict, name: str, *, block: bool = False, ns: str = "ns", **meta: object) -> dict:
    refs = [owner_ref(owner, controller=True, block=block)]
    return api.create(configmap(name, ns, ownerReferences=refs, **meta))


class TestBackground:
    def test_dependents_of_a_deleted_owner_are_deleted(self, api: APIServer) -> None:
        owner = api.create(widget())
        _owned(api, owner, "d1")
        _owned(api, owner, "d2")
        api.create(configmap("unrelated"))
        api.delete("Widget", "w1", "ns")
        expect_error(lambda: api.get("Widget", "w1", "ns"), 404)
        assert api.gc.pending()
        drain(api)
        assert _names(api) == ["unrelated"]
        gc_calls = [c for c in api.trace.calls if c.actor == "garbage-collector" and c.verb == "delete"]
        assert sorted(c.name for c in gc_calls) == ["d1", "d2"]

    def test_chain_is_collected(self, api: APIServer) -> None:
        owner = api.create(widget())
        mid = api.create(widget("mid", ownerReferences=[owner_ref(owner)]))
        _owned(api, mid, "leaf")
        api.delete("Widget", "w1", "ns")
        drain(api)
        assert _names(api, "Widget") == []
        assert _names(api) == []

    def test_a_solid_owner_keeps_the_dependent_and_dangling_refs_go(self, api: APIServer) -> None:
        a = api.create(widget("a"))
        b = api.create(widget("b"))
        api.create(configmap("d", ownerReferences=[owner_ref(a), owner_ref(b)]))
        api.delete("Widget", "a", "ns")
        drain(api)
        refs = api.get("ConfigMap", "d", "ns")["metadata"]["ownerReferences"]
        assert [r["name"] for r in refs] == ["b"]

    def test_owner_with_a_different_uid_is_dangling(self, api: APIServer) -> None:
        owner = api.create(widget())
        _owned(api, owner, "d")
        api.delete("Widget", "w1", "ns")
        api.create(widget())  # same name, new uid
        drain(api)
        assert _names(api) == []

    def test_owner_never_existing_is_dangling(self, api: APIServer) -> None:
        api.create(configmap("d", ownerReferences=[{"apiVersion": "example.com/v1", "kind": "Widget", "name": "ghost",
                                                    "uid": "11111111-2222-4333-8444-555555555555"}]))
        drain(api)
        assert _names(api) == []

    def test_owner_in_another_namespace_is_absent(self, api: APIServer) -> None:
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
        owner = api.create(widget())
        _owned(api, owner, "d", ns="other")
        drain(api)
        assert _names(api, ns="other") == []
        assert api.get("Widget", "w1", "ns")

    def test_cluster_scoped_dependent_of_namespaced_owner_is_never_collected(self, api: APIServer) -> None:
        owner = api.create(widget())
        api.create({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": "dep", "ownerReferences": [owner_ref(owner)]}})
        api.delete("Widget", "w1", "ns")
        drain(api)
        assert api.get("Namespace", "dep")["metadata"]["ownerReferences"]

    def test_dependents_with_finalizers_are_marked(self, api: APIServer) -> None:
        owner = api.create(widget())
        _owned(api, owner, "d", finalizers=["example.com/f"])
        api.delete("Widget", "w1", "ns")
        drain(api)
        assert api.get("ConfigMap", "d", "ns")["metadata"]["deletionTimestamp"]

    def test_gc_off(self) -> None:
        api = make_api(garbage_collector=False)
        owner = api.create(widget())
        _owned(api, owner, "d")
        api.delete("Widget", "w1", "ns")
        assert api.gc is None
        assert _names(api) == ["d"]
        api.create(widget("fg"))
        api.delete("Widget", "fg", "ns", propagation_policy="Foreground")
        assert api.get("Widget", "fg", "ns")["metadata"]["finalizers"] == ["foregroundDeletion"]


class TestForeground:
    def test_owner_waits_for_blocking_dependents(self, api: APIServer) -> None:
        owner = api.create(widget())
        _owned(api, owner, "blocker", block=True, finalizers=["example.com/f"])
        _owned(api, owner, "plain")
        api.delete("Widget", "w1", "ns", propagation_policy="Foreground")
        drain(api)
        # every dependent is deleted; the blocking one is still there (its own finalizer)
        assert _names(api) == ["blocker"]
        assert api.get("ConfigMap", "blocker", "ns")["metadata"]["deletionTimestamp"]
        w = api.get("Widget", "w1", "ns")
        assert w["metadata"]["finalizers"] == ["foregroundDeletion"]
        api.patch("ConfigMap", "blocker", {"metadata": {"finalizers": None}}, namespace="ns")
        drain(api)
        expect_error(lambda: api.get("Widget", "w1", "ns"), 404)

    def test_non_blocking_dependents_are_not_waited_for(self, api: APIServer) -> None:
        owner = api.create(widget())
        _owned(api, owner, "slow", finalizers=["example.com/f"])
        api.delete("Widget", "w1", "ns", propagation_policy="Foreground")
        drain(api)
        expect_error(lambda: api.get("Widget", "w1", "ns"), 404)
        assert api.get("ConfigMap", "slow", "ns")["metadata"]["deletionTimestamp"]

    def test_owner_with_its_own_finalizer_keeps_it(self, api: APIServer) -> None:
        owner = api.create(widget(finalizers=["example.com/f"]))
        _owned(api, owner, "d", block=True)
        api.delete("Widget", "w1", "ns", propagation_policy="Foreground")
        drain(api)
        assert _names(api) == []
        assert api.get("Widget", "w1", "ns")["metadata"]["finalizers"] == ["example.com/f"]

    def test_nested_dependents_are_deleted_in_the_foreground(self, api: APIServer) -> None:
        owner = api.create(widget())
        mid = api.create(widget("mid", ownerReferences=[owner_ref(owner, block=True)]))
        _owned(api, mid, "leaf", block=True, finalizers=["example.com/f"])
        api.delete("Widget", "w1", "ns", propagation_policy="Foreground")
        drain(api)
        assert api.get("Widget", "mid", "ns")["metadata"]["finalizers"] == ["foregroundDeletion"]
        assert api.get("Widget", "w1", "ns")
        api.patch("ConfigMap", "leaf", {"metadata": {"finalizers": None}}, namespace="ns")
        drain(api)
        assert _names(api, "Widget") == []

    @pytest.mark.parametrize("change", ["references removed", "blockOwnerDeletion false", "blockOwnerDeletion unset",
                                        "reference to another owner"])
    def test_a_dependent_that_stops_blocking_lets_the_owner_go(self, api: APIServer, change: str) -> None:
        """The graph builder's addUnblockedOwnersToDeleteQueue: a blocking reference removed, or set
        not to block, sends its owner (waiting in the foreground) to be checked again."""
        owner = api.create(widget())
        other = api.create(widget("other"))
        _owned(api, owner, "d", block=True, finalizers=["example.com/f"])
        api.delete("Widget", "w1", "ns", propagation_policy="Foreground")
        drain(api)
        assert api.get("Widget", "w1", "ns")["metadata"]["finalizers"] == ["foregroundDeletion"]  # d blocks it
        ref = owner_ref(owner, controller=True, block=True)
        refs = {"references removed": None,
                "blockOwnerDeletion false": [{**ref, "blockOwnerDeletion": False}],
                "blockOwnerDeletion unset": [{k: v for k, v in ref.items() if k != "blockOwnerDeletion"}],
                "reference to another owner": [owner_ref(other, block=True)]}[change]
        api.patch("ConfigMap", "d", {"metadata": {"ownerReferences": refs}}, namespace="ns")
        drain(api)
        expect_error(lambda: api.get("Widget", "w1", "ns"), 404)
        assert api.get("ConfigMap", "d", "ns")["metadata"]["finalizers"] == ["example.com/f"]  # still deleting

    def test_a_dependent_created_while_the_owner_waits_goes_when_the_owner_is_checked_again(
            self, api: APIServer) -> None:
        """The graph builder does not check a new dependent of a known owner; the owner, checked
        again when its blocking dependent goes, deletes the new one before it lets go."""
        owner = api.create(widget())
        _owned(api, owner, "d1", block=True, finalizers=["example.com/f"])
        api.delete("Widget", "w1", "ns", propagation_policy="Foreground")
        drain(api)
        _owned(api, owner, "d2", block=True)
        assert not api.gc.pending()
        assert sorted(_names(api)) == ["d1", "d2"]
        api.patch("ConfigMap", "d1", {"metadata": {"finalizers": None}}, namespace="ns")
        drain(api)
        assert _names(api) == []
        expect_error(lambda: api.get("Widget", "w1", "ns"), 404)

    def test_a_dependent_still_blocking_keeps_the_owner_waiting(self, api: APIServer) -> None:
        owner = api.create(widget())
        _owned(api, owner, "d", block=True, finalizers=["example.com/f"])
        api.delete("Widget", "w1", "ns", propagation_policy="Foreground")
        drain(api)
        api.patch("ConfigMap", "d", {"metadata": {"labels": {"touched": "yes"}}}, namespace="ns")
        drain(api)
        assert api.get("Widget", "w1", "ns")["metadata"]["finalizers"] == ["foregroundDeletion"]

    def test_no_dependents(self, api: APIServer) -> None:
        api.create(widget())
        api.delete("Widget", "w1", "ns", propagation_policy="Foreground")
        drain(api)
        expect_error(lambda: api.get("Widget", "w1", "ns"), 404)


def _api_with_other_namespace() -> APIServer:
    from support import make_api

    api = make_api()
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    return api


# (what the reference says, how the dependent's reference is made from the owner's, whether the
#  dependent is checked at once, whether it survives). The graph builder's addDependentToOwners:
#  a dependent whose owners it knows, where the references say they are, is not checked when it
#  is written; an unknown owner uid, an owner in another namespace, or other coordinates are.
DEPENDENT_CHECKS = [
    ("owner known", lambda ref: ref, False, True),
    ("owner uid unknown", lambda ref: {**ref, "uid": "no-such-uid"}, True, False),
    ("name not the owner's", lambda ref: {**ref, "name": "w2"}, True, False),
    ("kind not the owner's", lambda ref: {**ref, "apiVersion": "v1", "kind": "ConfigMap"}, True, False),
    # a kind no API serves: unresolvable, so never collected
    ("group not the owner's", lambda ref: {**ref, "apiVersion": "other.example.com/v1"}, True, True),
]


class TestDependentsCheckedOnWrite:
    @pytest.mark.parametrize(("case", "make_ref", "checked", "survives"), DEPENDENT_CHECKS,
                             ids=[c[0] for c in DEPENDENT_CHECKS])
    def test_a_new_dependent_is_checked_only_when_its_owner_is_not_known_as_referenced(
            self, api: APIServer, case: str, make_ref: object, checked: bool, survives: bool) -> None:
        owner = api.create(widget())
        assert callable(make_ref)
        api.create(configmap("d", ownerReferences=[make_ref(owner_ref(owner))]))
        assert api.gc.pending() is checked
        drain(api)
        assert ("d" in _names(api)) is survives

    def test_an_owner_in_another_namespace_is_absent_for_the_dependent(self) -> None:
        api = _api_with_other_namespace()
        owner = api.create(widget(ns="other"))
        api.create(configmap("d", ownerReferences=[owner_ref(owner)]))
        assert api.gc.pending()
        drain(api)
        assert _names(api) == []
        assert _names(api, "Widget", "other") == ["w1"]

    def test_a_reference_added_later_is_checked_and_one_kept_is_not(self, api: APIServer) -> None:
        owner = api.create(widget())
        ref = owner_ref(owner)
        api.create(configmap("d", ownerReferences=[ref]))
        assert not api.gc.pending()
        api.patch("ConfigMap", "d", {"metadata": {"ownerReferences": [{**ref, "controller": True}]}}, namespace="ns")
        assert not api.gc.pending()  # the same owner uid: nothing added
        ghost = {**ref, "name": "ghost", "uid": "ghost-uid"}
        api.patch("ConfigMap", "d", {"metadata": {"ownerReferences": [ref, ghost]}}, namespace="ns")
        assert api.gc.pending()
        drain(api)
        assert [r["name"] for r in api.get("ConfigMap", "d", "ns")["metadata"]["ownerReferences"]] == ["w1"]

    def test_the_dependents_of_a_deleted_owner_are_checked(self, api: APIServer) -> None:
        owner = api.create(widget())
        api.create(configmap("d", ownerReferences=[owner_ref(owner)]))
        assert not api.gc.pending()
        api.delete("Widget", "w1", "ns")
        assert api.gc.pending()
        drain(api)
        assert _names(api) == []


class TestOrphan:
    def test_dependents_survive_without_the_reference(self, api: APIServer) -> None:
        owner = api.create(widget())
        other = api.create(widget("other"))
        _owned(api, owner, "d1")
        api.create(configmap("d2", ownerReferences=[owner_ref(owner), owner_ref(other)]))
        api.delete("Widget", "w1", "ns", propagation_policy="Orphan")
        drain(api)
        expect_error(lambda: api.get("Widget", "w1", "ns"), 404)
        assert _names(api) == ["d1", "d2"]
        assert "ownerReferences" not in api.get("ConfigMap", "d1", "ns")["metadata"]
        assert [r["name"] for r in api.get("ConfigMap", "d2", "ns")["metadata"]["ownerReferences"]] == ["other"]

    def test_orphan_keeps_user_finalizers(self, api: APIServer) -> None:
        owner = api.create(widget(finalizers=["example.com/f"]))
        _owned(api, owner, "d")
        api.delete("Widget", "w1", "ns", propagation_policy="Orphan")
        drain(api)
        assert api.get("Widget", "w1", "ns")["metadata"]["finalizers"] == ["example.com/f"]
        assert "ownerReferences" not in api.get("ConfigMap", "d", "ns")["metadata"]


class TestNamespaces:
    def test_default_namespaces_exist(self) -> None:
        api = APIServer()
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            assert api.get("Namespace", ns)["status"]["phase"] == "Active"

    def test_immortal_namespaces(self, api: APIServer) -> None:
        for ns in ("default", "kube-system", "kube-public"):
            expect_error(lambda ns=ns: api.delete("Namespace", ns), 403, "Forbidden",
                         f'namespaces "{ns}" is forbidden: this namespace may not be deleted')
        api.delete("Namespace", "kube-node-lease")

    def test_create_in_missing_namespace(self, api: APIServer) -> None:
        expect_error(lambda: api.create(configmap("c", "nope")), 404, "NotFound", 'namespaces "nope" not found')

    def test_only_create_checks_the_namespace(self, api: APIServer) -> None:
        assert api.list("ConfigMap", "nope")["items"] == []
        expect_error(lambda: api.get("ConfigMap", "c", "nope"), 404, "NotFound", 'configmaps "c" not found')

    def test_deleting_a_namespace_empties_it(self, api: APIServer) -> None:
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t"}})
        api.create(configmap("a", "t"))
        api.create(widget("w", "t", finalizers=["example.com/f"]))
        api.create(configmap("keep", "ns"))
        out = api.delete("Namespace", "t")
        assert out["status"]["phase"] == "Terminating" and out["metadata"]["deletionTimestamp"]
        expect_error(lambda: api.create(configmap("new", "t")), 403, "Forbidden")
        drain(api)
        assert _names(api, ns="t") == []
        assert api.get("Widget", "w", "t")["metadata"]["deletionTimestamp"]
        assert api.get("Namespace", "t")["status"]["phase"] == "Terminating"
        api.patch("Widget", "w", {"metadata": {"finalizers": None}}, namespace="t")
        drain(api)
        expect_error(lambda: api.get("Namespace", "t"), 404)
        assert _names(api) == ["keep"]
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t"}})
        api.create(configmap("again", "t"))

    def test_the_namespace_controller_deletes_in_the_background(self, api: APIServer) -> None:
        """Its deletes say propagationPolicy Background (namespacedResourcesDeleter.deleteCollection):
        an object whose own finalizers ask for orphaning does not get its dependents orphaned."""
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t"}})
        owner = api.create(widget("w", "t", finalizers=["orphan"]))
        api.create(configmap("d", "t", ownerReferences=[owner_ref(owner)]))
        api.delete("Namespace", "t")
        drain(api)
        expect_error(lambda: api.get("Namespace", "t"), 404)
        assert not [c for c in api.trace.calls if c.actor == "garbage-collector" and c.verb == "patch"]

    def test_the_deletion_conditions_follow_what_remains(self, api: APIServer) -> None:
        """namespacedResourcesDeleter.deleteAllContent: each pass sets the five conditions."""
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t"}})
        api.create(widget("w", "t", finalizers=["example.com/f", "z.io/g"]))
        api.create(widget("v", "t", finalizers=["example.com/f"]))
        api.create(configmap("a", "t"))
        api.delete("Namespace", "t")
        drain(api)
        conds = {c["type"]: c for c in api.get("Namespace", "t")["status"]["conditions"]}
        assert conds["NamespaceContentRemaining"]["status"] == "True"
        assert conds["NamespaceContentRemaining"]["message"] == (
            "Some resources are remaining: widgets.example.com has 2 resource instances")
        assert conds["NamespaceFinalizersRemaining"]["message"] == (
            "Some content in the namespace has finalizers remaining: example.com/f in 2 resource instances, "
            "z.io/g in 1 resource instances")
        assert conds["NamespaceDeletionContentFailure"]["status"] == "False"
        status_writes = [c for c in api.trace.calls if c.actor == "namespace-controller" and c.subresource == "status"]
        assert len(status_writes) == 1
        api.patch("Widget", "v", {"metadata": {"finalizers": None}}, namespace="t")
        drain(api)
        conds = {c["type"]: c for c in api.get("Namespace", "t")["status"]["conditions"]}
        assert conds["NamespaceContentRemaining"]["message"].endswith("has 1 resource instances")
        api.patch("Widget", "w", {"metadata": {"finalizers": ["z.io/g"]}}, namespace="t")
        drain(api)
        conds = {c["type"]: c for c in api.get("Namespace", "t")["status"]["conditions"]}
        assert conds["NamespaceFinalizersRemaining"]["message"] == (
            "Some content in the namespace has finalizers remaining: z.io/g in 1 resource instances")

    def test_a_failed_delete_is_a_content_failure(self, api: APIServer) -> None:
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t"}})
        api.create(configmap("a", "t"))
        api.faults.add({"on": {"verb": "delete", "kind": "ConfigMap", "actor": "namespace-controller"},
                        "error": {"code": 500, "message": "etcd is down"}})
        api.delete("Namespace", "t")
        api.gc.run()  # one pass
        conds = {c["type"]: c for c in api.get("Namespace", "t")["status"]["conditions"]}
        failure = conds["NamespaceDeletionContentFailure"]
        assert failure["status"] == "True" and failure["reason"] == "ContentDeletionFailed"
        assert failure["message"] == "Failed to delete all resource types, 1 remaining: etcd is down"
        assert conds["NamespaceContentRemaining"]["status"] == "False"  # (that resource's count is not taken)
        # the next pass (its own status write queued one) deletes it: the fault fired once
        drain(api)
        expect_error(lambda: api.get("Namespace", "t"), 404)

    def test_a_pod_in_its_grace_period_is_content_remaining_not_a_failure(self, api: APIServer) -> None:
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t"}})
        api.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "t"},
                    "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "busybox"}]}})
        api.delete("Namespace", "t")
        drain(api)
        assert api.get("Pod", "p", "t")["metadata"]["deletionGracePeriodSeconds"] == 30
        conds = {c["type"]: c for c in api.get("Namespace", "t")["status"]["conditions"]}
        assert conds["NamespaceContentRemaining"]["message"] == "Some resources are remaining: pods. has 1 resource instances"
        assert conds["NamespaceDeletionContentFailure"]["status"] == "False"
        assert conds["NamespaceFinalizersRemaining"]["status"] == "False"

    def test_the_last_state_of_a_deleted_namespace_has_its_conditions(self, api: APIServer) -> None:
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "e"}})
        w = api.watch("Namespace", resource_version=str(api.resource_version))
        api.delete("Namespace", "e")
        drain(api)
        last = [ev for ev in w.poll() if ev.type == "DELETED"][-1].object
        assert [c["type"] for c in last["status"]["conditions"]] == [
            "NamespaceDeletionDiscoveryFailure", "NamespaceDeletionGroupVersionParsingFailure",
            "NamespaceDeletionContentFailure", "NamespaceContentRemaining", "NamespaceFinalizersRemaining"]
        assert {c["status"] for c in last["status"]["conditions"]} == {"False"}

    def test_empty_namespace_is_finalized(self, api: APIServer) -> None:
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "e"}})
        api.delete("Namespace", "e")
        drain(api)
        expect_error(lambda: api.get("Namespace", "e"), 404)

    def test_without_gc_namespace_stays_terminating(self) -> None:
        api = make_api(garbage_collector=False)
        api.create(configmap("a"))
        api.delete("Namespace", "ns")
        assert api.get("Namespace", "ns")["status"]["phase"] == "Terminating"
        assert _names(api) == ["a"]
