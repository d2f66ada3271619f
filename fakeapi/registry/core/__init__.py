"""The core ("") API group: Namespaces, Pods, Secrets, ConfigMaps, PersistentVolumeClaims, Services
(and their allocations), ServiceAccounts and Events: their strategies (:mod:`~fakeapi.registry.core.strategy`),
validation and defaults, and the pod template defaults and validation the workload kinds share.

May import: :mod:`fakeapi.machinery`, :mod:`fakeapi.codec`, :mod:`fakeapi.schema`, the rest of :mod:`fakeapi.registry`.
"""
