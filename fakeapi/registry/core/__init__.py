"""The core ("") API group: Services and their allocations, PersistentVolumeClaims.

May import: :mod:`fakeapi.machinery`, :mod:`fakeapi.codec`, :mod:`fakeapi.schema`, the rest of :mod:`fakeapi.registry`.
"""
