"""The AutoscalingRunnerSet controller (docs/ARC.md "AutoscalingRunnerSet controller").

Registers the scale set with the Actions service, keeps one EphemeralRunnerSet
per ARS carrying the runner spec (bumping its actionable revision when the
spec or, while parked, the runner metadata changes), parks the scale set
(Outdated, no listener, replicas 0) when the service rejects the current
runner spec, and runs one AutoscalingListener per ARS. Port of ARC's
``autoscalingrunnerset_controller.go``.
"""

from __future__ import annotations

from typing import Any

from fakeapi.codec.semantic import semantic_equal
from fakeapi.host.builder import Request
from fakeapi.host.predicates import resource_version_changed
from fakeapi.machinery.errors import ApiError, is_not_found

from . import constants as c
from .actions_service import ActionsError, ActionsService
from .actions_service import is_not_found as is_service_not_found
from .common import (
    SHARED_READS,
    UNCACHED_KINDS,
    Ctx,
    delete_ignore_not_found,
    get_or_none,
    has_finalizer,
    mutate_top,
    patch_finalizers,
    patch_status,
)
from .gotypes import listener_spec_type, status_type
from .predicates import owned_runner_set
from .resourcebuilder import (
    apply_github_url_labels,
    build_ephemeral_runner_set,
    build_listener,
    build_runner_spec,
    ers_labels_annotations,
    listener_name,
    meta,
    scale_set_id,
    scale_set_name,
    spec,
    status,
)
from .revision import metadata_drift, next_revision_of, outdated_for_applied, runner_spec_drift, same_document

Obj = dict[str, Any]


def listener_to_ars(listener: Obj) -> list[Any]:
    """Map an AutoscalingListener event to its ARS (by the spec back references)."""
    s = listener.get("spec") or {}
    ns, name = s.get("autoscalingRunnerSetNamespace"), s.get("autoscalingRunnerSetName")
    if not ns or not name:
        return []
    return [Request(str(ns), str(name))]


class AutoscalingRunnerSetReconciler:
    """Reconciles AutoscalingRunnerSets; ``reconcile(ctx, req)`` is the host's reconcile function."""

    name = c.CONTROLLER_ARS

    def __init__(self, service: ActionsService, controller_namespace: str = c.DEFAULT_CONTROLLER_NAMESPACE) -> None:
        self.service = service
        self.controller_namespace = controller_namespace

    def setup(self, host: Any) -> Any:
        """Register with the host: for ARS, owns ERS, watches listeners through their back references."""
        return (
            host.controller(self.name)
            .for_(c.KIND_ARS, api_version=c.API_VERSION)
            .owns(c.KIND_ERS, api_version=c.API_VERSION, predicates=owned_runner_set)
            .watches(c.KIND_AL, listener_to_ars, api_version=c.API_VERSION)
            .with_event_filter(resource_version_changed)
            .with_options(unsafe_disable_deep_copy=SHARED_READS, disable_cache_for=UNCACHED_KINDS)
            .complete(self.reconcile)
        )

    # ------------------------------------------------------------------ reconcile

    def reconcile(self, ctx: Ctx, req: Any) -> Any:
        """One pass over one AutoscalingRunnerSet, step by step as ARC_SPEC.md lists them."""
        client = ctx.client
        # 1. Not found -> done.
        ars = get_or_none(client, c.KIND_ARS, req.name, req.namespace)
        if ars is None:
            return None

        # 2. Being deleted: listener, then ERS (waiting for each), then the scale set, then the finalizer.
        if meta(ars).get("deletionTimestamp"):
            if not has_finalizer(ars, c.FINALIZER_ARS):
                return None
            return self._finalize(ctx, ars)

        # 3. No finalizer -> add it.
        if not has_finalizer(ars, c.FINALIZER_ARS):
            patch_finalizers(client, ars, add=[c.FINALIZER_ARS], read_answer=False)
            return None

        # Pending on a generation change (upstream's Reconcile: generation > status.observedGeneration ->
        # updateStatus(Pending) with the observed generation left as it was; it catches up only when a pass
        # ends with the scale set up to date). The pass carries on.
        if _generation(ars) > _observed_generation(ars):
            ars = self._set_phase(client, ars, c.ARS_PHASE_PENDING)

        # 4. Registration with the Actions service.
        if scale_set_id(ars) <= 0:
            self._create_scale_set(client, ars)
            return None
        annotations = meta(ars).get("annotations") or {}
        group = str(spec(ars).get("runnerGroup") or "")
        current_group = annotations.get(c.ANNOTATION_RUNNER_GROUP_NAME)
        if current_group is None or (group and str(current_group).lower() != group.lower()):
            self._update_runner_group(client, ars)
            return None
        wanted_name = str(spec(ars).get("runnerScaleSetName") or "")
        current_name = annotations.get(c.ANNOTATION_RUNNER_SCALE_SET_NAME)
        if current_name is None or (wanted_name and str(current_name).lower() != wanted_name.lower()):
            self._update_scale_set_name(client, ars)
            return None

        # 5. The EphemeralRunnerSet (same name, 1:1).
        ers = get_or_none(client, c.KIND_ERS, req.name, req.namespace)
        if ers is None:
            client.create(build_ephemeral_runner_set(ars))
            return None

        built = build_runner_spec(ars)
        spec_drift = runner_spec_drift(spec(ers).get("ephemeralRunnerSpec"), built)
        wanted_meta = spec(ars).get("ephemeralRunnerMetadata")
        meta_drift = metadata_drift(spec(ers).get("ephemeralRunnerMetadata"), wanted_meta)
        outdated = outdated_for_applied(ers)

        # 6. Park: the current spec was rejected and nothing that could fix it changed.
        if outdated and not spec_drift and not meta_drift:
            self._park(ctx, ars, ers)
            return None

        # 7. Propagate a new runner spec (or, while parked, new runner metadata) with the next revision.
        if spec_drift or (outdated and meta_drift):
            revision = next_revision_of(ers)

            def propagate(o: Obj) -> None:
                s = o.setdefault("spec", {})
                s["ephemeralRunnerSpec"] = built
                if wanted_meta is None:
                    s.pop("ephemeralRunnerMetadata", None)
                else:
                    s["ephemeralRunnerMetadata"] = wanted_meta
                s["actionableRevision"] = revision

            client.patch_from(ers, mutate_top(ers, propagate))
            self._set_phase(client, ars, c.ARS_PHASE_PENDING, read_answer=False)
            return None
        labels, ers_annotations = ers_labels_annotations(ars)
        ers_meta = meta(ers)
        labels_drift = any((ers_meta.get("labels") or {}).get(k) != v for k, v in labels.items()) or any(
            (ers_meta.get("annotations") or {}).get(k) != v for k, v in ers_annotations.items()
        )
        if meta_drift or labels_drift:

            def relabel(o: Obj) -> None:
                s = o.setdefault("spec", {})
                if wanted_meta is None:
                    s.pop("ephemeralRunnerMetadata", None)
                else:
                    s["ephemeralRunnerMetadata"] = wanted_meta
                m = o["metadata"]
                m["labels"] = {**(m.get("labels") or {}), **labels}
                m["annotations"] = {**(m.get("annotations") or {}), **ers_annotations}

            client.patch_from(ers, mutate_top(ers, relabel))
            return None

        # 8. The listener: create it when absent, replace it when its spec is out of date.
        desired = build_listener(ars, ers, self.controller_namespace)
        listener = get_or_none(client, c.KIND_AL, listener_name(ars), self.controller_namespace)
        if listener is None:
            # upstream runnerScaleSetGone: before creating the listener, make sure the recorded scale set
            # still exists on the service; a definitive not-found registers it again (createRunnerScaleSet),
            # any other error is returned, so an outage never registers a second one.
            try:
                self.service.get_runner_scale_set_by_id(scale_set_id(ars), actor=self.name)
            except ActionsError as e:
                if not is_service_not_found(e):
                    raise
                self._create_scale_set(client, ars)
                return None
            # The name hashes the runner group and config URL: after a change of either, the listener
            # under the old name is this ARS's too (found by its back references). Upstream looks it
            # up by the new name only and would leave it serving; here it is replaced.
            stale = self._listeners_of(client, ars)
            if stale:
                for old in stale:
                    if not meta(old).get("deletionTimestamp"):
                        delete_ignore_not_found(client, c.KIND_AL, meta(old)["name"], self.controller_namespace)
                return None
            if status(ars).get("phase") == c.ARS_PHASE_OUTDATED:
                # Never let a listener exist while the ARS still says Outdated.
                ars = self._set_phase(client, ars, c.ARS_PHASE_PENDING)
            client.create(desired)
            return None
        if meta(listener).get("deletionTimestamp"):
            return None
        if listener_spec_drift(listener, desired) or _labels_of(listener) != _labels_of(desired) \
                or _annotations_of(listener) != _annotations_of(desired):
            # upstream compares the listener's spec, labels and annotations with the desired ones, and
            # reports Pending (observed generation unchanged) before tearing the listener down
            self._set_phase(client, ars, c.ARS_PHASE_PENDING, read_answer=False)
            delete_ignore_not_found(client, c.KIND_AL, listener_name(ars), self.controller_namespace)
            return None

        # 9. Status: Running, the generation observed (upstream updateStatus(Running, generation)), with the
        # set's counts.
        est = status(ers)
        wanted = {
            "phase": c.ARS_PHASE_RUNNING,
            "observedGeneration": _generation(ars),
            "currentRunners": int(est.get("currentReplicas") or 0),
            "pendingEphemeralRunners": int(est.get("pendingEphemeralRunners") or 0),
            "runningEphemeralRunners": int(est.get("runningEphemeralRunners") or 0),
            "failedEphemeralRunners": int(est.get("failedEphemeralRunners") or 0),
        }
        self._patch_status(client, ars, wanted, read_answer=False)
        return None

    # ------------------------------------------------------------------ helpers

    def _patch_status(self, client: Any, ars: Obj, wanted: dict[str, Any], *, read_answer: bool = True) -> Obj:
        """Merge-patch the ARS status with ``wanted`` when it differs (``read_answer=False``: the
        caller drops the answer, which is then not decoded)."""
        st = status(ars)
        if all(st.get(k) == v for k, v in wanted.items()):
            return ars
        return patch_status(client, ars, wanted, status_type(c.KIND_ARS), read_answer=read_answer)

    def _set_phase(self, client: Any, ars: Obj, phase: str, *, read_answer: bool = True) -> Obj:
        """Set the ARS phase (see :meth:`_patch_status`)."""
        return self._patch_status(client, ars, {"phase": phase}, read_answer=read_answer)

    def _listeners_of(self, client: Any, ars: Obj) -> list[Obj]:
        """Every listener in the controller namespace whose back references name this ARS."""
        m = meta(ars)
        return [
            al for al in client.list(c.KIND_AL, self.controller_namespace)
            if spec(al).get("autoscalingRunnerSetName") == m.get("name")
            and spec(al).get("autoscalingRunnerSetNamespace") == m.get("namespace")
        ]

    def _park(self, ctx: Ctx, ars: Obj, ers: Obj) -> None:
        """ARS Outdated, listener deleted (the scale set stops taking jobs), ERS pinned to 0 replicas.

        The listener goes first, so that no listener is ever seen next to an
        Outdated ARS, even if the controller crashes part-way.
        """
        client = ctx.client
        for listener in self._listeners_of(client, ars):
            if not meta(listener).get("deletionTimestamp"):
                delete_ignore_not_found(client, c.KIND_AL, meta(listener)["name"], self.controller_namespace)
        # Deliberate divergence: upstream parks with the observed generation carried over, so an edit that
        # does not un-park leaves generation > observedGeneration and every later pass writes Pending, then
        # Outdated again, each write waking the ARS once more: it never settles. Parking here records the
        # generation as observed (the edit was seen and did not un-park); a later edit still flips Pending.
        self._patch_status(client, ars, {"phase": c.ARS_PHASE_OUTDATED, "observedGeneration": _generation(ars)},
                           read_answer=False)
        s = spec(ers)
        if int(s.get("replicas") or 0) != 0 or int(s.get("patchID") or 0) != 0:

            def pin(o: Obj) -> None:
                o.setdefault("spec", {}).update({"replicas": 0, "patchID": 0})

            client.patch_from(ers, mutate_top(ers, pin))

    def _finalize(self, ctx: Ctx, ars: Obj) -> Any:
        client = ctx.client
        name, ns = meta(ars)["name"], meta(ars).get("namespace", "")
        listeners = self._listeners_of(client, ars)
        if listeners:
            for listener in listeners:
                if not meta(listener).get("deletionTimestamp"):
                    delete_ignore_not_found(client, c.KIND_AL, meta(listener)["name"], self.controller_namespace)
            return None
        ers = get_or_none(client, c.KIND_ERS, name, ns)
        if ers is not None:
            if not meta(ers).get("deletionTimestamp"):
                delete_ignore_not_found(client, c.KIND_ERS, name, ns)
            return None
        sid = scale_set_id(ars)
        if sid > 0:
            self.service.delete_runner_scale_set(sid, actor=self.name)
        try:
            patch_finalizers(client, ars, remove=[c.FINALIZER_ARS], read_answer=False)
        except ApiError as e:
            if not is_not_found(e):
                raise
        return None

    def _annotate(self, client: Any, ars: Obj, values: dict[str, str]) -> None:
        def apply(o: Obj) -> None:
            m = o["metadata"]
            m["annotations"] = {**(m.get("annotations") or {}), **values}

        client.patch_from(ars, mutate_top(ars, apply))

    def _runner_group_id(self, ars: Obj) -> int:
        group = str(spec(ars).get("runnerGroup") or "")
        if not group:
            return c.DEFAULT_RUNNER_GROUP_ID
        return self.service.get_runner_group_by_name(group, actor=self.name).id

    def _create_scale_set(self, client: Any, ars: Obj) -> None:
        """Find or create the scale set (upstream ``createRunnerScaleSet``): runner group by name (default
        id 1); a new one is labelled with its name, then the extra labels without duplicates. One merge
        patch then writes the default ``spec.runnerScaleSetName`` (the ARS name) back, annotates id, name
        and group, and adds the GitHub URL labels to the ARS."""
        group_id = self._runner_group_id(ars)
        name = scale_set_name(ars)
        s = spec(ars)
        scale_set = self.service.get_runner_scale_set(group_id, name, actor=self.name)
        if scale_set is None:
            labels = [name]
            for label in (str(x) for x in (s.get("runnerScaleSetLabels") or [])):
                if label not in labels:
                    labels.append(label)
            scale_set = self.service.create_runner_scale_set(
                name, group_id, labels, str(s.get("githubConfigUrl") or ""), actor=self.name
            )
        values = {
            c.ANNOTATION_RUNNER_SCALE_SET_NAME: scale_set.name,
            c.ANNOTATION_RUNNER_SCALE_SET_ID: str(scale_set.id),
            c.ANNOTATION_RUNNER_GROUP_NAME: scale_set.runner_group_name,
        }

        def apply(o: Obj) -> None:
            m = o["metadata"]
            m["annotations"] = {**(m.get("annotations") or {}), **values}
            url_labels: dict[str, str] = dict(m.get("labels") or {})
            apply_github_url_labels(str(s.get("githubConfigUrl") or ""), url_labels)
            m["labels"] = url_labels
            if not s.get("runnerScaleSetName"):
                o.setdefault("spec", {})["runnerScaleSetName"] = name

        client.patch_from(ars, mutate_top(ars, apply))

    def _update_runner_group(self, client: Any, ars: Obj) -> None:
        group_id = self._runner_group_id(ars)
        updated = self.service.update_runner_scale_set(scale_set_id(ars), runner_group_id=group_id, actor=self.name)
        self._annotate(client, ars, {c.ANNOTATION_RUNNER_GROUP_NAME: updated.runner_group_name})

    def _update_scale_set_name(self, client: Any, ars: Obj) -> None:
        updated = self.service.update_runner_scale_set(scale_set_id(ars), name=scale_set_name(ars), actor=self.name)
        self._annotate(client, ars, {c.ANNOTATION_RUNNER_SCALE_SET_NAME: updated.name})


def _generation(obj: Obj) -> int:
    return int(meta(obj).get("generation") or 0)


def _observed_generation(obj: Obj) -> int:
    return int(status(obj).get("observedGeneration") or 0)


def _labels_of(obj: Obj) -> dict[str, str]:
    return dict(meta(obj).get("labels") or {})


def _annotations_of(obj: Obj) -> dict[str, str]:
    return dict(meta(obj).get("annotations") or {})


def listener_spec_drift(listener: Obj, desired: Obj) -> bool:
    """True when a listener's spec differs (Go semantic equality) from the one the ARS asks for."""
    a, b = listener.get("spec") or {}, desired.get("spec") or {}
    if same_document(a, b):
        return False
    return not semantic_equal(a, b, listener_spec_type())
