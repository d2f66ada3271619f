"""batch/v1: Jobs and CronJobs and their strategies (``pkg/registry/batch/<resource>/strategy.go``).

A Job's selector is generated from its uid unless ``manualSelector``; a delete without a
propagation policy orphans its pods (``DefaultGarbageCollectionPolicy``), with a warning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakeapi.machinery.errors import Cause
from fakeapi.machinery.lazymodule import lazy_module
from fakeapi.registry.strategy import BuiltinSpec, BuiltinStrategy, Obj, StrategyContext, spec_is_stored

if TYPE_CHECKING:
    from fakeapi.registry.batch import defaults, validation
    from fakeapi.registry.core import validation as core_validation
else:  # (imported on first use: a server that never writes these kinds never compiles them; issue 22)
    defaults = lazy_module(__name__, "fakeapi.registry.batch.defaults")
    validation = lazy_module(__name__, "fakeapi.registry.batch.validation")
    core_validation = lazy_module(__name__, "fakeapi.registry.core.validation", "core_validation")

#: The warning a Job delete without a propagation policy gets (pkg/registry/batch/job/storage).
JOB_DELETE_WARNING = ("child pods are preserved by default when jobs are deleted; set propagationPolicy=Background "
                      "to remove them or set propagationPolicy=Orphan to suppress this warning")


class JobStrategy(BuiltinStrategy):
    """Jobs."""

    spec = BuiltinSpec("batch", "v1", "Job", "jobs", "io.k8s.api.batch.v1.Job", status=True, initial_generation=1,
                       categories=("all",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/batch/job/strategy.go: true
    allow_unconditional_update = True
    orphans_by_default = True

    def default(self, obj: Obj, base: Obj | None) -> None:
        """``SetDefaults_Job``."""
        defaults.default_job(obj, spec_is_stored(obj, base))

    def begin_create(self, ctx: StrategyContext, obj: Obj) -> None:
        """``generateSelector`` (it needs the uid: the real strategy runs it in Validate)."""
        defaults.job_selector(obj)

    def validate(self, obj: Obj) -> list[Cause]:
        """``ValidateJob``."""
        return validation.job_causes(obj, core_validation.pod_spec_causes)

    def validate_update(self, obj: Obj, old: Obj) -> list[Cause]:
        """``ValidateJobUpdate``: selector, template and completion mode do not change."""
        return validation.job_update_causes(obj, old)

    def delete_warnings(self) -> list[str]:
        """The pods stay unless the delete says otherwise."""
        return [JOB_DELETE_WARNING]


class CronJobStrategy(BuiltinStrategy):
    """CronJobs: a schedule that parses, a time zone that exists."""

    spec = BuiltinSpec("batch", "v1", "CronJob", "cronjobs", "io.k8s.api.batch.v1.CronJob", status=True,
                       initial_generation=1, short_names=("cj",), categories=("all",))
    #: AllowUnconditionalUpdate in upstream pkg/registry/batch/cronjob/strategy.go: true
    allow_unconditional_update = True

    def default(self, obj: Obj, base: Obj | None) -> None:
        """``SetDefaults_CronJob``."""
        if not spec_is_stored(obj, base):  # (a stored spec is defaulted already)
            defaults.default_cron_job(obj)

    def validate(self, obj: Obj) -> list[Cause]:
        """``ValidateCronJobCreate``."""
        return validation.cron_job_causes(obj, core_validation.pod_spec_causes)


#: The group's kinds, in the order they are registered.
STRATEGIES: tuple[BuiltinStrategy, ...] = (JobStrategy(), CronJobStrategy())
