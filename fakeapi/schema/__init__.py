"""Schemas of served kinds: structural schemas, pruning, defaulting and validation.

- :mod:`~fakeapi.schema.structural`: the CRD request pipeline on a structural schema (prune, drop
  nulls, default: ``apiextensions-apiserver/pkg/apiserver/schema``);
- :mod:`~fakeapi.schema.compiled`: :class:`CompiledSchema`, one kind's schema compiled once for
  pruning, defaulting and validation (jsonschema-rs fast path);
- :mod:`~fakeapi.schema.schemaerrors`: the slow path, jsonschema's errors worded as
  kube-apiserver's causes; :mod:`~fakeapi.schema.formats`: the string formats both paths check;
- :mod:`~fakeapi.schema.listtypes`: ``x-kubernetes-list-type`` set and map uniqueness.

The built-in OpenAPI documents themselves are read by :mod:`fakeapi.machinery.openapi`.

May import: :mod:`fakeapi.machinery`, :mod:`fakeapi.codec`.
"""
