"""Names ARC uses on the wire: group, kinds, annotations, labels, finalizers, phases.

Each value is the exact string the Go controllers write (see docs/ARC.md,
"Annotations and finalizers"). The old ``actions.github.com/integrity-hash``
annotation is gone on purpose: nothing here writes or reads it.
"""

from __future__ import annotations

from datetime import timedelta

GROUP = "actions.github.com"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"

# Kinds.
KIND_ARS = "AutoscalingRunnerSet"
KIND_ERS = "EphemeralRunnerSet"
KIND_ER = "EphemeralRunner"
KIND_AL = "AutoscalingListener"
ARC_KINDS = (KIND_ARS, KIND_ERS, KIND_ER, KIND_AL)

# Controller names (used as the API actor, in fixtures' ``as:`` and ``crash:``).
CONTROLLER_ARS = "autoscalingrunnerset"
CONTROLLER_ERS = "ephemeralrunnerset"
CONTROLLER_ER = "ephemeralrunner"
# Simulator actor names.
ACTOR_LISTENER = "listener"
ACTOR_ACTIONS = "actions-service"

# Runner annotations.
ANNOTATION_ACTIONABLE_REVISION = "actions.github.com/actionable-revision"
ANNOTATION_PATCH_ID = "actions.github.com/patch-id"
# AutoscalingRunnerSet annotations.
ANNOTATION_RUNNER_SCALE_SET_ID = "runner-scale-set-id"
ANNOTATION_RUNNER_GROUP_NAME = "actions.github.com/runner-group-name"
ANNOTATION_RUNNER_SCALE_SET_NAME = "actions.github.com/runner-scale-set-name"

# Labels.
LABEL_COMPONENT = "app.kubernetes.io/component"
LABEL_PART_OF = "app.kubernetes.io/part-of"
LABEL_SCALE_SET_NAME = "actions.github.com/scale-set-name"
LABEL_SCALE_SET_NAMESPACE = "actions.github.com/scale-set-namespace"
LABEL_EPHEMERAL_RUNNER = "actions-ephemeral-runner"
LABEL_POD_TEMPLATE_HASH = "pod-template-hash"
LABEL_RUNNER_TEMPLATE_HASH = "runner-template-hash"
LABEL_GITHUB_ENTERPRISE = "actions.github.com/enterprise"
LABEL_GITHUB_ORGANIZATION = "actions.github.com/organization"
LABEL_GITHUB_REPOSITORY = "actions.github.com/repository"
#: Container-hook resources (kubernetes container mode) point back at their runner pod with this label.
LABEL_RUNNER_POD = "runner-pod"
VALUE_PART_OF = "gha-runner-scale-set"
COMPONENT_RUNNER = "runner"
COMPONENT_RUNNER_SET = "runner-set"
COMPONENT_LISTENER = "runner-scale-set-listener"

# Finalizers.
FINALIZER_ARS = "autoscalingrunnerset.actions.github.com/finalizer"
FINALIZER_ERS = "ephemeralrunnerset.actions.github.com/finalizer"
FINALIZER_ER = "ephemeralrunner.actions.github.com/finalizer"
FINALIZER_ER_REGISTRATION = "ephemeralrunner.actions.github.com/runner-registration-finalizer"

# AutoscalingRunnerSet phases.
ARS_PHASE_PENDING = "Pending"
ARS_PHASE_RUNNING = "Running"
ARS_PHASE_OUTDATED = "Outdated"

# EphemeralRunnerSet phases ("" = not written yet).
ERS_PHASE_RUNNING = "Running"
ERS_PHASE_OUTDATED = "Outdated"

# EphemeralRunner phases ("" = not written yet = pending).
ER_PHASE_PENDING = "Pending"
ER_PHASE_RUNNING = "Running"
ER_PHASE_SUCCEEDED = "Succeeded"
ER_PHASE_FAILED = "Failed"
ER_PHASE_OUTDATED = "Outdated"
ER_DONE_PHASES = frozenset({ER_PHASE_SUCCEEDED, ER_PHASE_FAILED, ER_PHASE_OUTDATED})
ER_REASON_OUTDATED = "Outdated"
ER_MESSAGE_OUTDATED = "Runner is deprecated"
ER_REASON_INVALID_POD = "InvalidPod"
ER_REASON_TOO_MANY_POD_FAILURES = "TooManyPodFailures"

# The runner container and its exit codes.
RUNNER_CONTAINER = "runner"
EXIT_CODE_OUTDATED = 7

# Timing.
JOB_STILL_RUNNING_REQUEUE = timedelta(seconds=30)
#: A pod refused for an exceeded resource quota is retried this often ...
QUOTA_REQUEUE = timedelta(seconds=30)
#: ... until the runner is this old; then the runner is deleted (and re-created by its set).
QUOTA_GIVE_UP_AGE = timedelta(minutes=10)
#: A pod that already exists (the create raced an earlier one): wait for its event.
POD_EXISTS_REQUEUE = timedelta(seconds=5)
MAX_FAILURES = 5
#: Wait before the next pod after the n-th failure (index = failure count, capped at the end).
FAILURE_BACKOFF = (
    timedelta(0),
    timedelta(seconds=5),
    timedelta(seconds=10),
    timedelta(seconds=20),
    timedelta(seconds=40),
    timedelta(seconds=80),
)

# Defaults.
DEFAULT_CONTROLLER_NAMESPACE = "arc-systems"
DEFAULT_RUNNER_GROUP = "Default"
DEFAULT_RUNNER_GROUP_ID = 1
DEFAULT_LISTENER_IMAGE = "ghcr.io/actions/gha-runner-scale-set-controller:0.0.0"
LISTENER_SUFFIX = "-listener"
