"""The rbac.authorization.k8s.io/v1 API group: Roles, ClusterRoles and their bindings: strategies, validation, defaults.

May import: :mod:`fakeapi.machinery`, :mod:`fakeapi.codec`, :mod:`fakeapi.schema`, the rest of :mod:`fakeapi.registry`.
"""
