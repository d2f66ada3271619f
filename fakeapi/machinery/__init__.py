"""API machinery: errors, selectors, patches, field sets and the field manager, quantities, JSON.

The parts of ``k8s.io/apimachinery`` (and of kube-openapi and structured-merge-diff) that every
layer above uses: pure functions and plain records over JSON values, holding no server state.

- :mod:`~fakeapi.machinery.errors`: :class:`ApiError` with its ``metav1.Status`` body, the field
  causes and the client-go predicates (``api/errors``);
- :mod:`~fakeapi.machinery.metavalidation`: name, label and ObjectMeta rules (``api/validation``,
  ``util/validation``); :mod:`~fakeapi.machinery.gorender`: Go's value quoting in field errors and
  the ``field.Error`` constructors;
- :mod:`~fakeapi.machinery.selectors`: label and field selectors (``labels``, ``fields``);
- :mod:`~fakeapi.machinery.patches` and :mod:`~fakeapi.machinery.patcherrors`: JSON, merge and
  strategic merge patches (``util/strategicpatch``);
- :mod:`~fakeapi.machinery.fieldpath`, :mod:`~fakeapi.machinery.typedfields`,
  :mod:`~fakeapi.machinery.typedapply`, :mod:`~fakeapi.machinery.fieldmanager`,
  :mod:`~fakeapi.machinery.serverapply`: managedFields and server-side apply
  (structured-merge-diff, ``managedfields``);
- :mod:`~fakeapi.machinery.openapi`: the built-in OpenAPI documents and schema-node navigation
  (kube-openapi: the strategic merge patch and the field manager read it, as in Kubernetes);
- :mod:`~fakeapi.machinery.quantity` (``api/resource``) and :mod:`~fakeapi.machinery.jsonutil`.

May import: nothing of fakeapi outside this package (the bottom layer).
"""
