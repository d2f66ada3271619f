"""Event filters, in the shape of controller-runtime's ``pkg/predicate``.

A :class:`Predicate` decides, per event, whether it may enqueue a request.
Objects given to predicates are the watch stream's shared snapshots as the
server stores them: read them, never mutate them. An unset function lets
every event of that type through, as ``predicate.Funcs`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]


@dataclass(frozen=True)
class Predicate:
    """Filters for the four event types; ``None`` means "let it through"."""

    create: Callable[[Obj], bool] | None = None
    #: Called with (old, new).
    update: Callable[[Obj, Obj], bool] | None = None
    delete: Callable[[Obj], bool] | None = None
    generic: Callable[[Obj], bool] | None = None

    def on_create(self, obj: Obj) -> bool:
        """Whether a create event for ``obj`` passes."""
        return self.create is None or self.create(obj)

    def on_update(self, old: Obj, new: Obj) -> bool:
        """Whether an update event from ``old`` to ``new`` passes."""
        return self.update is None or self.update(old, new)

    def on_delete(self, obj: Obj) -> bool:
        """Whether a delete event for ``obj`` (its last state) passes."""
        return self.delete is None or self.delete(obj)

    def on_generic(self, obj: Obj) -> bool:
        """Whether a generic event for ``obj`` passes."""
        return self.generic is None or self.generic(obj)


def _meta(obj: Obj) -> dict[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def _rv_changed(old: Obj, new: Obj) -> bool:
    mo, mn = old.get("metadata"), new.get("metadata")
    if type(mo) is dict and type(mn) is dict:  # (every stored object: no helper calls)
        return mo.get("resourceVersion") != mn.get("resourceVersion")
    return _meta(old).get("resourceVersion") != _meta(new).get("resourceVersion")


def _generation_changed(old: Obj, new: Obj) -> bool:
    return _meta(old).get("generation") != _meta(new).get("generation")


def _labels_changed(old: Obj, new: Obj) -> bool:
    return (_meta(old).get("labels") or {}) != (_meta(new).get("labels") or {})


def _annotations_changed(old: Obj, new: Obj) -> bool:
    return (_meta(old).get("annotations") or {}) != (_meta(new).get("annotations") or {})


#: ``predicate.ResourceVersionChangedPredicate``: drops updates that keep the resourceVersion
#: (the re-delivered objects of a relist).
resource_version_changed = Predicate(update=_rv_changed)
#: ``predicate.GenerationChangedPredicate``: drops updates that leave metadata.generation alone
#: (status and metadata-only writes).
generation_changed = Predicate(update=_generation_changed)
#: ``predicate.LabelChangedPredicate``: only updates that change the labels.
labels_changed = Predicate(update=_labels_changed)
#: ``predicate.AnnotationChangedPredicate``: only updates that change the annotations.
annotations_changed = Predicate(update=_annotations_changed)


def matching(fn: Callable[[Obj], bool]) -> Predicate:
    """``predicate.NewPredicateFuncs``: one test applied to the object of every event (the new one on update)."""
    return Predicate(create=fn, update=lambda _old, new: fn(new), delete=fn, generic=fn)


def and_(*preds: Predicate) -> Predicate:
    """``predicate.And``: an event passes when every predicate lets it through."""
    ps = tuple(preds)
    return Predicate(
        create=lambda o: all(p.on_create(o) for p in ps),
        update=lambda a, b: all(p.on_update(a, b) for p in ps),
        delete=lambda o: all(p.on_delete(o) for p in ps),
        generic=lambda o: all(p.on_generic(o) for p in ps),
    )


def or_(*preds: Predicate) -> Predicate:
    """``predicate.Or``: an event passes when any predicate lets it through."""
    ps = tuple(preds)
    return Predicate(
        create=lambda o: any(p.on_create(o) for p in ps),
        update=lambda a, b: any(p.on_update(a, b) for p in ps),
        delete=lambda o: any(p.on_delete(o) for p in ps),
        generic=lambda o: any(p.on_generic(o) for p in ps),
    )


def not_(pred: Predicate) -> Predicate:
    """``predicate.Not``: an event passes when the predicate refuses it."""
    return Predicate(
        create=lambda o: not pred.on_create(o),
        update=lambda a, b: not pred.on_update(a, b),
        delete=lambda o: not pred.on_delete(o),
        generic=lambda o: not pred.on_generic(o),
    )


def as_tuple(preds: Predicate | Iterable[Predicate] | None) -> tuple[Predicate, ...]:
    """Normalize a predicate argument (one, several or none) to a tuple."""
    if preds is None:
        return ()
    if isinstance(preds, Predicate):
        return (preds,)
    out = tuple(preds)
    for p in out:
        if not isinstance(p, Predicate):
            raise TypeError(f"not a Predicate: {p!r}")
    return out
