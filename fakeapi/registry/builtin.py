"""The built-in kinds every server serves, gathered from the API groups' strategy modules.

Each group's ``strategy`` module (:mod:`fakeapi.registry.core.strategy`,
:mod:`fakeapi.registry.apps.strategy`, ...) lists its kinds' strategies in ``STRATEGIES``; each
strategy carries the :class:`~fakeapi.registry.strategy.BuiltinSpec` its kind is registered with
(scope, status subresource, generation tracking, selectable fields, name rule, from the kinds'
strategies in kubernetes/pkg/registry). Schemas come from the kubernetes-validate package; the Go
type models are derived from them (fakeapi.codec.gomodel).
"""

from __future__ import annotations

from functools import cache, partial
from typing import Any

from fakeapi.registry.apiextensions import strategy as apiextensions
from fakeapi.registry.apiregistration import strategy as apiregistration
from fakeapi.registry.apps import strategy as apps
from fakeapi.registry.batch import strategy as batch
from fakeapi.registry.certificates import strategy as certificates
from fakeapi.registry.coordination import strategy as coordination
from fakeapi.registry.core import strategy as core
from fakeapi.registry.kinds import Kind
from fakeapi.registry.networking import strategy as networking
from fakeapi.registry.policy import strategy as policy
from fakeapi.registry.rbac import strategy as rbac
from fakeapi.registry.storage import strategy as storage
from fakeapi.registry.strategy import BuiltinSpec, BuiltinStrategy

#: Every built-in kind's strategy, in registration order (which a kind name served by several
#: groups resolves by, and discovery lists).
STRATEGIES: tuple[BuiltinStrategy, ...] = (
    *core.STRATEGIES, *rbac.STRATEGIES, *coordination.STRATEGIES, *apps.STRATEGIES, *batch.STRATEGIES,
    *networking.STRATEGIES, *policy.STRATEGIES, *certificates.STRATEGIES, *storage.STRATEGIES,
    *apiregistration.STRATEGIES, *apiextensions.STRATEGIES,
)
#: How each built-in kind is registered, in the same order.
BUILTINS: tuple[BuiltinSpec, ...] = tuple(s.spec for s in STRATEGIES)


def apply_builtin_defaults(kind: str, obj: dict[str, Any], base: dict[str, Any] | None = None) -> None:
    """Apply the server-side defaults of the built-in kind named ``kind`` to ``obj``, in place
    (its strategy's :meth:`~fakeapi.registry.strategy.Strategy.default`; nothing for other names)."""
    strategy = _BY_NAME.get(kind)
    if strategy is not None:
        strategy.default(obj, base)


_BY_NAME: dict[str, BuiltinStrategy] = {}
for _s in STRATEGIES:
    _BY_NAME.setdefault(_s.spec.kind, _s)


@cache
def _compiled(spec: BuiltinSpec) -> tuple[object, object, object]:
    from fakeapi.codec.gomodel import builtin_go_type
    from fakeapi.machinery.openapi import builtin_schema
    from fakeapi.schema.compiled import CompiledSchema

    api_version = f"{spec.group}/{spec.version}" if spec.group else spec.version
    schema = builtin_schema(spec.kind, api_version)
    return schema, CompiledSchema(schema, structural=False), builtin_go_type(spec.definition)


def builtin_kinds() -> list[Kind]:
    """Fresh Kind records for every built-in kind.

    A kind's schema, compiled schema and Go type are computed when first used (``kind.compiled``
    and the others read as plain attributes), once per process: a server that never sees a
    Secret never loads its schema.
    """
    out = []
    for strategy in STRATEGIES:
        spec = strategy.spec
        out.append(
            Kind(
                group=spec.group,
                version=spec.version,
                kind=spec.kind,
                plural=spec.plural,
                namespaced=spec.namespaced,
                status_subresource=spec.status,
                short_names=spec.short_names,
                builtin=True,
                loader=partial(_compiled, spec),
                selectable_fields=spec.fields,
                initial_generation=spec.initial_generation,
                return_deleted_object=spec.return_deleted_object,
                name_rule=spec.name_rule,
                # decoded into Go structs: every field has one JSON type (a CRD's schemas are free-form)
                extra={"typed": spec.group != apiextensions.GROUP, "categories": list(spec.categories)},
                strategy=strategy,
            )
        )
    return out
