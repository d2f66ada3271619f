// The intstr stand-in that tests/data/gostructs/fixture/v1/widget.go imports.
package intstr

type Type int64

type IntOrString struct {
	Type   Type   `protobuf:"varint,1,opt,name=type,casttype=Type"`
	IntVal int32  `protobuf:"varint,2,opt,name=intVal"`
	StrVal string `protobuf:"bytes,3,opt,name=strVal"`
}

func (intstr IntOrString) MarshalJSON() ([]byte, error) { return nil, nil }
func (intstr *IntOrString) UnmarshalJSON(value []byte) error { return nil }
