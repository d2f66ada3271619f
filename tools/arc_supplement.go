// Fields of ARC's v1alpha1 types that are newer than the fetched ARC revision.
//
// tools/gen_gotypes.py appends them to the upstream structs of the same name
// (it refuses a field upstream already has, so this file shrinks to nothing
// once the fetched revision carries them). They come from upstream pull
// requests #4638 (spec.actionableRevision, status.appliedActionableRevision,
// int64 revision counters) and #4642 (status.finishedRunnerCleanupPatchID, a
// listener patch ID, int), whose controllers and tests use them as written here.
package v1alpha1

type EphemeralRunnerSetSpec struct {
	ActionableRevision int64 `json:"actionableRevision,omitempty"`
}

type EphemeralRunnerSetStatus struct {
	AppliedActionableRevision    int64 `json:"appliedActionableRevision,omitempty"`
	FinishedRunnerCleanupPatchID int   `json:"finishedRunnerCleanupPatchID,omitempty"`
}
