"""Stories cut short and not finished yet: every failed story job with words kept stays
listed ("Not finished yet": the library page, the home page while recent, and
`GET /stories/unfinished`) until it is finished or the family dismisses it. Dismissing
deletes nothing, and is undone as easily: the library finds a dismissed story too, to
bring back. The statements: sql/queries/unfinished.sql.

    found = await Unfinished(db).jobs(search="owl")       # newest first
    await Unfinished(db).dismiss(17)                      # False: no such failed job
    await Unfinished(db).undismiss(17)                    # back on the lists (None: no such)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from app.queries import Statements
from app.queue.jobs import Job
from app.stories import split_title

# A list is short: more than this, and the oldest wait for a search to find them.
LIST_MAX = 50


@dataclass(frozen=True)
class UnfinishedStory:
    """One story cut short, as the lists show it."""

    job: Job
    dismissed: bool = False

    @property
    def words(self) -> str:
        """The words kept: its own, or those a finish that failed first was given."""
        return self.job.text_so_far.strip() or (self.job.request.carried_text or "").strip()

    @property
    def title(self) -> str:
        """Its title line once written; else what it was about."""
        title, _ = split_title(self.words)
        if "\n" in self.words and title:
            return title
        return self.job.request.prompt

    @property
    def finishes_by_retry(self) -> bool:
        """A finish that failed before a word of its own carries the same words on by
        "Try again" (its words are the story's it finishes): no "Finish" of its own."""
        return not self.job.text_so_far.strip()

    @property
    def first_words(self) -> str:
        """A line of it, after the title."""
        _, _, rest = self.words.partition("\n")
        text = " ".join((rest if rest.strip() else self.words).split())
        return text if len(text) <= 140 else text[:140].rsplit(" ", 1)[0] + "…"


class Unfinished(Statements):
    """`db`: the pool, or one connection whose open transaction every statement joins."""

    async def jobs(self, *, search: str = "", within_s: float | None = None,
                   now: datetime | None = None, limit: int = LIST_MAX,
                   dismissed: bool = False) -> list[UnfinishedStory]:
        """Newest first; `search`: every word of it in the words, the idea or a name;
        `within_s`: failed no longer ago than that (the home page's "recent");
        `dismissed`: only those dismissed, instead of those listed."""
        since = None
        if within_s is not None:
            since = (now or datetime.now().astimezone()) - timedelta(seconds=within_s)
        words = [word.lower() for word in search.split()]
        rows = await self._all("unfinished_jobs",
                               {"since": since, "words": words, "limit": limit,
                                "dismissed": dismissed})
        return [UnfinishedStory(Job.from_row(row), dismissed=dismissed) for row in rows]

    async def dismiss(self, job_id: int) -> bool:
        """Off the lists (once or again); False: no failed story job by that id."""
        return await self._val("dismiss_job", {"job_id": job_id}) is not None

    async def undismiss(self, job_id: int) -> UnfinishedStory | None:
        """Back on the lists (once or again), as they show it; None: no failed story job
        by that id."""
        row = await self._one("undismiss_job", {"job_id": job_id})
        return UnfinishedStory(Job.from_row(row)) if row is not None else None

    async def is_dismissed(self, job_id: int) -> bool:
        """A failed story job, dismissed (a page without JavaScript offers its Undo)."""
        return await self._val("dismissed_job", {"job_id": job_id}) is not None
