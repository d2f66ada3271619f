"""The apiregistration.k8s.io/v1 API group (kube-aggregator): APIServices and their strategy.

May import: :mod:`fakeapi.machinery`, :mod:`fakeapi.codec`, :mod:`fakeapi.schema`, the rest of :mod:`fakeapi.registry`.
"""
