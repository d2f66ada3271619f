"""The storage.k8s.io/v1 API group: CSIStorageCapacities and their strategy.

May import: :mod:`fakeapi.machinery`, :mod:`fakeapi.codec`, :mod:`fakeapi.schema`, the rest of :mod:`fakeapi.registry`.
"""
