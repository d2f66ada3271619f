"""Did-you-mean: the nearest of the valid names, for every message about a name that is not one."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(word: str, options: Iterable[str]) -> str:
    """`` (did you mean `x`?)`` for the closest option, or ``""``."""
    opts = [o for o in options if isinstance(o, str)]
    close = difflib.get_close_matches(word, opts, n=1, cutoff=0.6)
    if not close:
        low = {o.lower(): o for o in opts}
        close = [low[c] for c in difflib.get_close_matches(word.lower(), list(low), n=1, cutoff=0.6)]
    return f" (did you mean `{close[0]}`?)" if close else ""


__all__ = ["did_you_mean"]
