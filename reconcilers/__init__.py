"""reconcilers: a port of actions-runner-controller's scale-set controllers onto fakeapi.

Module map (docs/ARC.md is the behaviour):

- ``constants``: group, kinds, annotations, labels, finalizers, phases, timings.
- ``crds/``: the four CRD manifests: YAML sources, their expansion (``crds.expand``) and its
  generated output ``manifests.json`` (``python -m reconcilers.crds --write``).
- ``gotypes``: the Go type model of each kind (:func:`gotypes.arc_go_types`).
- ``revision``: the pure actionable-revision helpers (parse, classify, next, guard, drift).
- ``resourcebuilder``: the objects the controllers create.
- ``predicates``: ARC's event filters.
- ``autoscalingrunnerset``, ``ephemeralrunnerset``, ``ephemeralrunner``: the three controllers.
- ``actions_service``, ``listener``: the simulated Actions service and listener.
- ``bundle``: the ``arc`` bundle (entry point ``fakeapi.bundles: arc``).
- ``testing``: a small driver for Python tests and benchmarks.
"""
