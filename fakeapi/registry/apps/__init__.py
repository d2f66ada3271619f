"""The apps/v1 API group: Deployments, ReplicaSets, StatefulSets and DaemonSets: strategies, validation, defaults.

May import: :mod:`fakeapi.machinery`, :mod:`fakeapi.codec`, :mod:`fakeapi.schema`, the rest of :mod:`fakeapi.registry`.
"""
