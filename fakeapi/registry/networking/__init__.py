"""The networking.k8s.io/v1 API group: Ingresses and NetworkPolicies: strategies, validation, defaults.

May import: :mod:`fakeapi.machinery`, :mod:`fakeapi.codec`, :mod:`fakeapi.schema`, the rest of :mod:`fakeapi.registry`.
"""
