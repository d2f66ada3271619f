// The metav1 stand-in that tests/data/gostructs/fixture/v1/widget.go imports.
package v1

import "time"

type TypeMeta struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
}

type ObjectMeta struct {
	Name string `json:"name,omitempty"`
}

type Time struct {
	time.Time `protobuf:"-"`
}

func (t Time) MarshalJSON() ([]byte, error) { return nil, nil }
func (t *Time) UnmarshalJSON(b []byte) error  { return nil }
func (t *Time) IsZero() bool                  { return true }
