"""What each kind is and the rules it follows: kinds, defaults and validation per API group.

The counterpart of Kubernetes' ``pkg/registry`` and ``pkg/apis/<group>``:

- :mod:`~fakeapi.registry.kinds`: :class:`Kind` (one served resource type) and the
  :class:`KindRegistry`;
- :mod:`~fakeapi.registry.builtin`: the built-in kinds and their strategy settings;
- :mod:`~fakeapi.registry.defaults`: the defaults of built-in kinds (``v1/defaults.go``);
- :mod:`~fakeapi.registry.validation`: what each built-in kind's ``Validate`` checks beyond its
  schema, dispatching to the group packages;
- one package per API group: :mod:`~fakeapi.registry.core` (Services, their allocations,
  PersistentVolumeClaims), :mod:`~fakeapi.registry.apps`, :mod:`~fakeapi.registry.batch`,
  :mod:`~fakeapi.registry.networking`, :mod:`~fakeapi.registry.policy` and
  :mod:`~fakeapi.registry.apiextensions` (CustomResourceDefinitions turned into kinds).

May import: :mod:`fakeapi.machinery`, :mod:`fakeapi.codec`, :mod:`fakeapi.schema`.
"""
