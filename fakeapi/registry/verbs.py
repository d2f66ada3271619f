"""Which REST verbs a built-in resource's storage serves, where it is not every one.

kube-apiserver installs a route for a verb only when the resource's REST storage
implements it. The namespace storage (pkg/registry/core/namespace/storage) wraps
the generic store and leaves out ``DeleteCollection``: ``DELETE
/api/v1/namespaces`` is a 405 ``MethodNotAllowed``, discovery does not list
``deletecollection`` for namespaces, and the in-process server refuses the verb
the same way.
"""

from __future__ import annotations

from fakeapi.registry.kinds import Kind

#: Resources (group, plural) whose REST storage has no DeleteCollection.
NO_DELETECOLLECTION = frozenset({("", "namespaces")})


def serves_deletecollection(kind: Kind) -> bool:
    """Does kube-apiserver serve DELETE on this resource's collection?"""
    return not (kind.builtin and (kind.group, kind.plural) in NO_DELETECOLLECTION)
