/*
A small Go package in the shape of an API types package, written for
tests/test_gostructs.py: the generator's parser must read it as the
expected data says. (Braces in comments: { } and a `backtick`.)
*/

// +k8s:deepcopy-gen=package
package v1

import (
	"encoding/json"
	"time"

	metav1 "example.com/meta/v1"
	"example.com/util/intstr"
)

const (
	PhaseA Phase = "A" // a comment with a brace {
	PhaseB Phase = "B"
)

var registry = map[string]interface{}{
	"a": struct{ X int }{X: 1},
}

// Phase is a named string.
type Phase string

// Labels is a named map.
type Labels map[string]string

// Alias is an alias.
type Alias = Labels

type (
	// Widget is a kind.
	Widget struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

		Spec   WidgetSpec   `json:"spec,omitempty"`
		Status WidgetStatus `json:"status,omitempty"`
	}

	WidgetList struct {
		Items []Widget `json:"items"`
	}
)

type WidgetSpec struct {
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	Count    int64  `json:"count"`
	// +optional
	Phase    Phase             `json:"phase,omitempty"`
	Port     intstr.IntOrString `json:"port,omitempty"`
	Ports    []*Port           `json:"ports,omitempty"`
	ByName   map[string][]byte `json:"byName,omitempty"`
	Labels   Labels            `json:"labels"`
	When     *metav1.Time      `json:"when,omitempty"`
	Created  metav1.Time       `json:"created,omitempty,omitzero"`
	Ignored  string            `json:"-"`
	Dash     string            `json:"-,"`
	NoTag    bool
	A, B     string `json:",omitempty"`
	internal string
	Inline   `json:",inline"`
	*Pointed `json:"pointed,omitempty"`
	Matrix   [2][]float64  `json:"matrix"`
	handle   Handle[string]
}

// Inline is embedded without a name: its fields are promoted.
type Inline struct {
	Extra string `json:"extra,omitempty"`
	Count int    `json:"count,omitempty"` // shadowed by WidgetSpec.Count (depth 1)
}

type Pointed struct {
	Name string `json:"name"`
}

type Port struct {
	Number int32 `json:"number"`
}

type Handle[T any] struct {
	v T
}

type WidgetStatus struct {
	Raw json.RawMessage `json:"raw,omitempty"`
	Age time.Duration   `json:"age"`
}

// MarshalJSON marshals a phase.
func (p Phase) MarshalJSON() ([]byte, error) {
	if p == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(p))
}

func (p *Phase) UnmarshalJSON(data []byte) error { return nil }

func (s *WidgetStatus) IsZero() bool {
	return s.Raw == nil && s.Age == 0
}

func helper(x interface{}) interface{} { return x }

func (Widget) String() string { return "{" }

type unparsable func(int) error
