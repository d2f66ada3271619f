"""Per-key exponential back-off: client-go's ``ItemExponentialFailureRateLimiter``.

controller-runtime's default controller rate limiter is the maximum of two
limiters: this per-item exponential one (5 ms doubling to 1000 s) and an
overall token bucket (10 qps, burst 100). Only the per-item one is modelled:
the bucket matters only past 100 retries in a burst across all keys, and
modelling it would make back-off depend on unrelated keys. docs/HOST.md says
so too.
"""

from __future__ import annotations

from collections.abc import Hashable
from datetime import timedelta

#: controller-runtime's defaults (``workqueue.DefaultTypedControllerRateLimiter``).
DEFAULT_BASE_DELAY = timedelta(milliseconds=5)
DEFAULT_MAX_DELAY = timedelta(seconds=1000)


class ExponentialBackoff:
    """Delay ``base * 2**failures`` per key, capped at ``max_delay``; ``forget`` resets a key."""

    def __init__(self, base_delay: timedelta = DEFAULT_BASE_DELAY, max_delay: timedelta = DEFAULT_MAX_DELAY) -> None:
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._failures: dict[Hashable, int] = {}
        # 2**n beyond this always exceeds the cap (and keeps the arithmetic small).
        ratio = max_delay / base_delay if base_delay > timedelta(0) else 1.0
        self._cap_exp = max(0, int(ratio).bit_length() + 1)

    def when(self, item: Hashable) -> timedelta:
        """The delay before ``item`` may be retried, counting this as one more failure."""
        exp = self._failures.get(item, 0)
        self._failures[item] = exp + 1
        if exp >= self._cap_exp:
            return self.max_delay
        delay = self.base_delay * (1 << exp)
        return delay if delay < self.max_delay else self.max_delay

    def num_requeues(self, item: Hashable) -> int:
        """How many failures ``item`` has had since it was last forgotten."""
        return self._failures.get(item, 0)

    def forget(self, item: Hashable) -> None:
        """Reset the back-off of ``item`` (a success, or a requeue-after)."""
        self._failures.pop(item, None)
