"""The apiextensions.k8s.io/v1 API group: CustomResourceDefinitions (strategy, validation) and the kinds they define.

May import: :mod:`fakeapi.machinery`, :mod:`fakeapi.codec`, :mod:`fakeapi.schema`, the rest of :mod:`fakeapi.registry`.
"""
