"""Back-off: the waits between tries of something that may pass (an outage, a dropped stream).

    backoff = Backoff(0.2, max_s=5.0, patience_s=300)
    while True:
        try:
            return await try_once()
        except Outage:
            if backoff.time_left_s < 0:
                raise                       # past its patience: give up
            log("retry", retry_in_s=backoff.next_s)
            await backoff.wait()            # 0.2 s, 0.4 s, 0.8 s ... then 5 s each

Each wait doubles the one before, up to `max_s`; `jitter` (a fraction, 0 by default)
spreads each wait by up to that much either way, so many processes that met one outage
do not all come back at the same moment. `reset()` starts again from the first wait (the
thing worked, then failed again).
"""

from __future__ import annotations

import asyncio
import math
import random
import time


class Backoff:
    def __init__(self, first_s: float, *, max_s: float, factor: float = 2.0,
                 jitter: float = 0.0, patience_s: float | None = None) -> None:
        self.first_s = first_s
        self.max_s = max_s
        self.factor = factor
        self.jitter = jitter
        # Counted from now: how long the caller goes on trying (None: for ever).
        self._deadline = math.inf if patience_s is None else time.monotonic() + patience_s
        self._delay_s = first_s
        self.next_s = self._spread(first_s)

    @property
    def time_left_s(self) -> float:
        """Until the patience runs out; below 0 once it has (inf: no patience was set)."""
        return self._deadline - time.monotonic()

    async def wait(self) -> None:
        """Sleep the next wait (`next_s`); the one after is longer, up to `max_s`."""
        await asyncio.sleep(self.next_s)
        self._delay_s = min(self._delay_s * self.factor, self.max_s)
        self.next_s = self._spread(self._delay_s)

    def reset(self) -> None:
        """The next wait is the first again."""
        self._delay_s = self.first_s
        self.next_s = self._spread(self.first_s)

    def _spread(self, delay_s: float) -> float:
        if not self.jitter:
            return delay_s
        return delay_s * random.uniform(1 - self.jitter, 1 + self.jitter)
