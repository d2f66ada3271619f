"""The Go type model and the JSON codec: what a Go program holds after decoding an object.

- :mod:`~fakeapi.codec.gostructs`: the upstream Go structs of the built-in kinds, as
  ``tools/gen_gotypes.py`` recorded them in ``gostructs_k8s.json``, and their JSON fields;
- :mod:`~fakeapi.codec.gomodel`: a :class:`GoType` per kind (value or pointer fields,
  ``omitempty``), built from those structs, and :func:`go_roundtrip`;
- :mod:`~fakeapi.codec.godecode`: ``json.Unmarshal`` into typed structs, and the shared cache of
  decoded forms;
- :mod:`~fakeapi.codec.gounmarshal` and :mod:`~fakeapi.codec.fromunstructured`: the decoders' error
  messages for JSON that does not fit;
- :mod:`~fakeapi.codec.semantic`: ``apiequality.Semantic.DeepEqual`` on typed values;
- :mod:`~fakeapi.codec.snapshots` and :mod:`~fakeapi.codec.snapshoterrors`: the debugging check
  that stored snapshots are never mutated and are as Go encodes them.

May import: :mod:`fakeapi.machinery`.
"""
