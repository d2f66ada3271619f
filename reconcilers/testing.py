"""A small driver for Python tests and benchmarks of the ``arc`` bundle (no YAML needed).

``ArcCluster()`` is an API server, a host with the bundle installed, the
namespaces ``ci`` and the controller namespace, and the GitHub config secret.
Its helpers read the stored state quietly (no trace entries) and write as the
user would; every bundle invariant is checked after every reconcile and the
violations are collected in :attr:`ArcCluster.violations`.
"""

from __future__ import annotations

from typing import Any

from fakeapi.harness.bundles import OpContext
from fakeapi.host import Host, RunStats
from fakeapi.machinery.jsonutil import copy_object
from fakeapi.server.apiserver import APIServer

from . import constants as c
from .bundle import ArcState, bundle
from .resourcebuilder import listener_name
from .revision import runner_revision

Obj = dict[str, Any]

DEFAULT_IMAGE = "ghcr.io/actions/actions-runner:2.330.0"


def ars_manifest(
    name: str = "linux",
    namespace: str = "ci",
    *,
    image: str = DEFAULT_IMAGE,
    min_runners: int | None = None,
    max_runners: int | None = None,
    env: list[Obj] | None = None,
    extra_containers: list[Obj] | None = None,
) -> Obj:
    """An AutoscalingRunnerSet as a user would write it."""
    runner: Obj = {"name": c.RUNNER_CONTAINER, "image": image}
    if env is not None:
        runner["env"] = env
    spec: Obj = {
        "githubConfigUrl": "https://github.com/example/app",
        "githubConfigSecret": "gh",
        # restartPolicy Never, as the gha-runner-scale-set chart's runner template sets it.
        "template": {"spec": {"restartPolicy": "Never", "containers": [runner, *(extra_containers or [])]}},
    }
    if min_runners is not None:
        spec["minRunners"] = min_runners
    if max_runners is not None:
        spec["maxRunners"] = max_runners
    return {
        "apiVersion": c.API_VERSION,
        "kind": c.KIND_ARS,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


class ArcCluster:
    """An API server and host with the ``arc`` bundle, plus helpers."""

    def __init__(self, settings: dict[str, Any] | None = None, *, seed: int = 0, namespace: str = "ci",
                 check_invariants: bool = True, managed_fields: bool = True) -> None:
        self.api = APIServer(seed=seed, managed_fields=managed_fields)
        self.host = Host(self.api, seed=seed)
        self.state: ArcState = bundle.install(self.host, dict(settings or {}))
        self.namespace = namespace
        self.violations: list[str] = []
        for ns in (namespace, self.state.controller_namespace):
            self.api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        self.api.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "gh", "namespace": namespace},
                         "data": {"github_token": "dG9rZW4="}})
        if check_invariants:
            self.host.after_reconcile.append(lambda _rec: self.check_invariants())

    # -- running ------------------------------------------------------------------------------

    def check_invariants(self) -> None:
        """Run every bundle invariant now; collect violations."""
        for name, inv in bundle.invariants.items():
            self.violations.extend(f"{name}: {v}" for v in inv(self.host, self.state))

    def settle(self, max_reconciles: int = 20_000) -> RunStats:
        """Run controllers and simulators until nothing is due."""
        return self.host.run_until_idle(max_reconciles)

    def run_for(self, duration: str) -> RunStats:
        """Run with the clock for a while."""
        return self.host.run_for(duration)

    # -- reading (quiet: straight from the store, copies) -----------------------------------

    def objects(self, kind: str, namespace: str | None = None) -> list[Obj]:
        """Copies of the stored objects of a kind."""
        k = self.api.kinds.require(kind)
        stored: list[Obj] = list(self.api.objects(k, namespace))
        return [copy_object(o) for o in stored]  # (managedFields shared: nothing here reads them)

    def find(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        """A copy of one stored object, or None."""
        for o in self.objects(kind, namespace):
            if o["metadata"]["name"] == name:
                return o
        return None

    def ars(self, name: str = "linux") -> Obj | None:
        """The AutoscalingRunnerSet."""
        return self.find(c.KIND_ARS, name, self.namespace)

    def ers(self, name: str = "linux") -> Obj | None:
        """The EphemeralRunnerSet of an ARS."""
        return self.find(c.KIND_ERS, name, self.namespace)

    def listener(self, name: str = "linux") -> Obj | None:
        """The AutoscalingListener of an ARS."""
        ars = self.ars(name)
        listener = listener_name(ars) if ars is not None else f"{name}{c.LISTENER_SUFFIX}"
        return self.find(c.KIND_AL, listener, self.state.controller_namespace)

    def runners(self, *, alive: bool = False) -> list[Obj]:
        """EphemeralRunners in the namespace (``alive``: not being deleted)."""
        out = self.objects(c.KIND_ER, self.namespace)
        if alive:
            out = [r for r in out if not r["metadata"].get("deletionTimestamp")]
        return out

    def pods(self) -> list[Obj]:
        """Pods in the namespace."""
        return self.objects("Pod", self.namespace)

    @staticmethod
    def revisions(runners: list[Obj]) -> list[int]:
        """The revision annotation of each runner."""
        return [runner_revision(r) for r in runners]

    # -- writing ------------------------------------------------------------------------------

    def create_ars(self, **kw: Any) -> Obj:
        """Create an AutoscalingRunnerSet (see :func:`ars_manifest`)."""
        out: Obj = self.api.create(ars_manifest(namespace=self.namespace, **kw))
        return out

    def patch_ars(self, patch: Obj, name: str = "linux") -> Obj:
        """Merge-patch an AutoscalingRunnerSet as the user."""
        out: Obj = self.api.patch(c.KIND_ARS, name, patch, namespace=self.namespace, api_version=c.API_VERSION)
        return out

    def set_image(self, image: str, name: str = "linux") -> Obj:
        """Change the runner container's image in the ARS template."""
        ars = self.ars(name)
        assert ars is not None
        containers = ars["spec"]["template"]["spec"]["containers"]
        for ct in containers:
            if ct["name"] == c.RUNNER_CONTAINER:
                ct["image"] = image
        return self.patch_ars({"spec": {"template": {"spec": {"containers": containers}}}}, name)

    def delete_ars(self, name: str = "linux") -> None:
        """Delete an AutoscalingRunnerSet as the user."""
        self.api.delete(c.KIND_ARS, name, self.namespace, api_version=c.API_VERSION)

    # -- bundle operations ----------------------------------------------------------------------

    def _op(self, name: str, args: Any) -> None:
        ctx = OpContext(host=self.host, state=self.state, resolve=self._resolve)
        bundle.operations[name](ctx, args)

    def _resolve(self, target: dict[str, Any]) -> list[Obj]:
        kind = str(target.get("kind", c.KIND_ER))
        out = self.objects(kind, target.get("namespace") or self.namespace)
        if "name" in target:
            out = [o for o in out if o["metadata"]["name"] == target["name"]]
        names = target.get("names")
        if names is not None:
            out = [o for o in out if o["metadata"]["name"] in names]
        return out

    def queue_jobs(self, count: int, name: str = "linux") -> None:
        """``arc.queue_jobs``."""
        self._op("arc.queue_jobs", {"name": name, "namespace": self.namespace, "count": count})

    def finish_jobs(self, runner_names: list[str], exit_code: int = 0) -> None:
        """``arc.finish_jobs`` on named runners."""
        self._op("arc.finish_jobs", {"kind": c.KIND_ER, "namespace": self.namespace, "names": runner_names,
                                     "exitCode": exit_code})

    def reject_image(self, image: str) -> None:
        """``arc.reject_image``."""
        self._op("arc.reject_image", image)

    def accept_image(self, image: str) -> None:
        """``arc.accept_image``."""
        self._op("arc.accept_image", image)

    def exit_runner(self, runner_name: str, code: int) -> None:
        """``kubelet.exit`` of a runner's ``runner`` container."""
        assert self.host.kubelet is not None
        self.host.kubelet.exit(self.namespace, runner_name, c.RUNNER_CONTAINER, code)
