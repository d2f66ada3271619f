// Fields of ARC's v1alpha1 types that are newer than the fetched ARC revision.
//
// tools/gen_gotypes.py appends them to the upstream structs of the same name
// (it refuses a field upstream already has, so this file shrinks to nothing
// once the fetched revision carries them). They come from upstream pull
// requests #4638 (spec.actionableRevision, status.appliedActionableRevision,
// int64 revision counters) and #4642 (status.finishedRunnerCleanupPatchID, a
// listener patch ID, int), whose controllers and tests use them as written here,
// and status.observedGeneration of the AutoscalingRunnerSet: upstream's newer
// autoscalingrunnerset_controller.go writes it (updateStatus) and its tests set
// it from a metadata.generation (int64), e.g. `ObservedGeneration: generation - 1`
// in outdatedFixture. The stored versions of autoscalingrunnerset_types.go that
// could be read do not show the field itself; the json name is the Go field's
// camelCase and omitempty follows the int64 counters of #4638 written above.
package v1alpha1

type EphemeralRunnerSetSpec struct {
	ActionableRevision int64 `json:"actionableRevision,omitempty"`
}

type EphemeralRunnerSetStatus struct {
	AppliedActionableRevision    int64 `json:"appliedActionableRevision,omitempty"`
	FinishedRunnerCleanupPatchID int   `json:"finishedRunnerCleanupPatchID,omitempty"`
}

type AutoscalingRunnerSetStatus struct {
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}
