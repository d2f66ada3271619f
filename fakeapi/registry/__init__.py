"""What each kind is and the rules it follows: kinds, and a strategy per built-in kind, by API group.

The counterpart of Kubernetes' ``pkg/registry/<group>/<resource>/strategy.go`` and
``pkg/apis/<group>`` (validation, ``v1/defaults.go``):

- :mod:`~fakeapi.registry.kinds`: :class:`Kind` (one served resource type, with its strategy)
  and the :class:`KindRegistry`;
- :mod:`~fakeapi.registry.strategy`: :class:`Strategy`, the hooks the generic server calls
  (a custom resource's behaviour), :class:`BuiltinStrategy` and :class:`BuiltinSpec`;
- :mod:`~fakeapi.registry.builtin`: the built-in kinds, gathered from the groups;
- one package per API group, each with a ``strategy`` module (its kinds' strategies and
  registration settings) and, where the group has them, ``validation`` and ``defaults``:
  :mod:`~fakeapi.registry.core` (Namespaces, Pods, Secrets, ConfigMaps, PersistentVolumeClaims,
  Services and their allocations, ServiceAccounts, Events), :mod:`~fakeapi.registry.rbac`,
  :mod:`~fakeapi.registry.coordination`, :mod:`~fakeapi.registry.apps`,
  :mod:`~fakeapi.registry.batch`, :mod:`~fakeapi.registry.networking`,
  :mod:`~fakeapi.registry.policy` and :mod:`~fakeapi.registry.apiextensions` (CustomResourceDefinitions
  and the kinds they define).

A new built-in kind is one strategy class in its group's ``strategy`` module (listed in that
module's ``STRATEGIES``), with its validation and defaults beside it.

May import: :mod:`fakeapi.machinery`, :mod:`fakeapi.codec`, :mod:`fakeapi.schema`.
"""
