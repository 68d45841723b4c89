"""How long a story takes, how far along one is, and when a waiting one will be ready.

    estimates = Estimates(db, model="gpt-6-luna", defaults=DEFAULT_EXPECTED_S)
    expected_s = await estimates.expected_s("medium")   # recent history, else a default
    progress_percent(job, expected_s=..., now=time.time())
    queue_eta_s(position=3, running=1, slots=1, expected_s=90.0)

Recent history is per length and per model (a story's model name starts with the
configured one), the median of the last 20, cached for a little while so that polls do
not each ask the database (sql/queries/estimates.sql).
"""

from __future__ import annotations

import math
import time

from app.languages import language_of
from app.lengths import length_of
from app.queries import Queryable, Statements
from app.queue.jobs import Job, Status

# Before a model has written anything here: a small model writes a short story in well
# under a minute, a long one in two or three.
DEFAULT_EXPECTED_S = {"short": 45.0, "medium": 90.0, "long": 150.0}
MIN_SAMPLES = 3  # fewer finished stories than this, and the default is the better guess
CACHE_TTL_S = 30.0
# Before the first words arrive (the model is reading the request, or reasoning), the bar
# creeps up to this share only; the words written then carry it to the end.
THINKING_PERCENT = 5
TITLE_WORDS = 5


class Estimates(Statements):
    def __init__(self, db: Queryable, *, model: str, defaults: dict[str, float]) -> None:
        super().__init__(db)
        self.model = model
        self.defaults = defaults
        self._medians: dict[str, tuple[float, int]] = {}
        self._fetched_at = -math.inf

    async def expected_s(self, length: str) -> float:
        """Seconds a story of this length takes to write, claim to finish."""
        now = time.monotonic()
        if now - self._fetched_at > CACHE_TTL_S:
            rows = await self._all("median_durations", {"model": self.model})
            # {length: (median seconds, samples)} over the model's recent stories
            self._medians = {row["length"]: (row["seconds"], row["samples"]) for row in rows}
            self._fetched_at = now
        seconds, samples = self._medians.get(length, (0.0, 0))
        if samples < MIN_SAMPLES or seconds <= 0:
            return self.defaults[length]
        return seconds


def progress_percent(job: Job, *, expected_s: float, now: float,
                     language: str | None = None) -> int:
    """How far along the story is: by the words written against the words asked for once
    they arrive (characters, in a `language` written without spaces: the one its text is
    in, the one asked for by default), by time (to THINKING_PERCENT at most) before. Never
    goes backwards while words arrive, and never claims 100 before the story is stored."""
    if job.status != Status.RUNNING:
        return 100 if job.status.finished else 0
    written = language_of(language or job.request.language)
    words = written.count(job.text_so_far)
    if words == 0:
        started = (job.started_at or job.created_at).timestamp()
        return min(int(THINKING_PERCENT * max(now - started, 0) / max(expected_s, 1)),
                   THINKING_PERCENT)
    expected_words = length_of(job.request.length).size(written) + TITLE_WORDS
    return min(THINKING_PERCENT + int((100 - THINKING_PERCENT) * words / expected_words), 99)


def queue_eta_s(*, position: int, running: int, slots: int, expected_s: float) -> float | None:
    """Seconds until a waiting job's story is ready: the jobs ahead of it (running ones
    and waiting ones) share the live workers' slots. None when no worker is alive."""
    if slots <= 0:
        return None
    ahead = max(running + position - slots, 0)
    return ahead / slots * expected_s + expected_s
