"""The generic API server: the verbs over an object store, watch, the clock, faults and the trace.

- :mod:`~fakeapi.server.apiserver`: :class:`APIServer`, the verbs and their semantics;
- :mod:`~fakeapi.server.store`: the object store (one entry per object, etcd's ordering);
- :mod:`~fakeapi.server.watch`: the event log of each resource and the watches reading it;
- :mod:`~fakeapi.server.clock`: the virtual clock; :mod:`~fakeapi.server.faults`: fault rules;
  :mod:`~fakeapi.server.trace`: every API call and reconcile, in order;
- :mod:`~fakeapi.server.hooks`: where the layers above plug in (the HTTP front end behind
  ``APIServer.serve``, the garbage collector behind ``garbage_collector=True``).

What differs per kind comes from :mod:`fakeapi.registry`.

May import: :mod:`fakeapi.machinery`, :mod:`fakeapi.codec`, :mod:`fakeapi.schema`, :mod:`fakeapi.registry`.
"""
