"""Intake: turning a request for a story into a job, exactly once per idempotency key.

    request = parse_story_request(body)           # app/requests.py: Invalid names the field
    key = parse_idempotency_key(header)            # BadRequest when missing or malformed
    submission = await intake.submit(key, request)  # resolve=: fills in a profile named
    submission.job, submission.replayed

A replay is answered before any capacity or limit check, so retrying a request can never
be refused. While the storyteller cannot write at all (its model gone, its endpoint
missing: app/storytelling/readiness.py), a new job is refused 503 `storyteller_unavailable`
and nothing is written. A new job is checked against the queue bound (pending rows in the
whole database), the day's limit and, with a `meter` whose budget is set, the month's budget
(what was spent, what live jobs set aside, and this job's most: app/money/) under the
intake lock before anything is written, so a refusal writes nothing and the key stays
unused (what a refusal says: app/queue/refusals.py). The same statement notifies every
process's idle workers, so one claims the job the moment it commits: the lock, the replay
check, the counts, the insert and the notification are one statement (`intake_job`,
sql/functions/intake_job.sql), so an accepted job costs one round trip.

It is the one door every paid job a family asks for comes in by: a story, a finish, a
redraw of a picture (`redraw`) and a story read aloud (`narrate`, a job per part), each
set aside against the month before it is accepted and refused (429 `budget_reached`,
nothing written) when it does not fit. The only other paid job, a story's first picture,
is made with its story (app/queue/storing.py), set aside the same way, and skipped when it
does not fit. tests/queue/test_door.py fails when any other
module makes a job.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime, tzinfo
from typing import NoReturn

from app.errors import AppError, BadRequest, Busy, Conflict, Invalid, NotFound, Unavailable
from app.failures import OVER_BUDGET
from app.i18n import N_, gettext
from app.money.ledger import Ledger
from app.money.meter import Meter
from app.queries import transaction_on
from app.queue import refusals
from app.queue.jobs import IntakeResult, Job
from app.queue.narrations import NarrationStore, narration_key
from app.queue.pictures import PictureStore, picture_key
from app.queue.store import JobStore
from app.queue.wakeup import Wakeup
from app.requests import request_hash
from app.stories import StoryRequest
from app.storytelling.moderation import Moderator
from app.storytelling.readiness import Readiness

KEY_MAX_CHARS = 255
QUEUE_FULL_RETRY_AFTER_S = 30
SHUTDOWN_RETRY_AFTER_S = 10
# A storyteller that cannot write is mended by a restart with other settings, not by waiting.
STORYTELLER_UNAVAILABLE_RETRY_AFTER_S = 3600


class _OverBudget(Exception):
    """A redraw the month's budget has no room for: its transaction is rolled back."""


# Makes the job's request from the one the client sent (the profiles it names read).
Resolver = Callable[[], Awaitable[StoryRequest]]


@dataclass(frozen=True)
class Submission:
    job: Job
    replayed: bool  # the key's own job, made before
    # A finish whose story another job (another key's) finishes already: that job.
    finished_already: bool = False


def parse_idempotency_key(raw: str | None) -> str:
    """The key as sent, or the IETF draft's quoted form `"abc"` meaning the same key."""
    if raw is None:
        raise BadRequest(N_("The Idempotency-Key header is required."),
                         code="idempotency_key_missing")
    key = raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] == '"' else raw
    if not 1 <= len(key) <= KEY_MAX_CHARS or not all(" " <= c <= "~" for c in key):
        raise BadRequest(
            N_("The Idempotency-Key must be 1 to 255 printable ASCII characters."),
            code="idempotency_key_invalid",
        )
    return key


@dataclass(eq=False)
class Intake:
    store: JobStore
    pictures: PictureStore  # a redraw comes in here too
    wakeup: Wakeup
    _: KW_ONLY
    queue_max: int
    daily_story_limit: int
    timezone: tzinfo
    moderator: Moderator | None = None
    meter: Meter | None = None
    narrations: NarrationStore | None = None  # a story read aloud comes in here too
    # What start-up (or a job) found of the storyteller: while it cannot write, a new
    # story is refused 503 storyteller_unavailable (a replay is answered as ever).
    readiness: Readiness | None = None
    # Set at shutdown: new jobs are refused, replays still answered.
    closed: bool = field(default=False, init=False)

    async def submit(
        self, key: str, request: StoryRequest, *, resolve: Resolver | None = None
    ) -> Submission:
        """The key's job, made now or earlier (a replay). `request` is what the client sent,
        whose hash decides a replay; `resolve`, when it names a profile, makes the job's
        request from it (the profile's values filled in), asked only once no job has the
        key: a replay is answered before the profile is read, so editing or deleting it
        never turns a replay into a refusal."""
        digest = request_hash(request)
        cannot_write = self.readiness.closed_because() if self.readiness else None
        if (self.closed or cannot_write is not None or self.moderator is not None
                or resolve is not None):
            # A replay is answered as ever; only a new job is refused at shutdown or while
            # the storyteller cannot write, filled in from its profile, or screened (a
            # network call, which must not hold the intake lock).
            existing = await self.store.get_by_key(key)
            if existing is not None:
                return self._replay(existing, digest)
            if self.closed:
                self._closing()
            if cannot_write is not None:
                raise Unavailable(cannot_write, code="storyteller_unavailable",
                                  retry_after_s=STORYTELLER_UNAVAILABLE_RETRY_AFTER_S)
            if resolve is not None:
                request = await resolve()
            if self.moderator is not None:
                await self.moderator.check_request(request)
        if self.meter is not None:
            await self.meter.ready()
        set_aside = 0 if self.meter is None else self.meter.story_set_aside(request)
        money = {} if self.meter is None else {"budget": self.meter.budget(),
                                               "set_aside": set_aside}
        result = await self.store.intake(
            key, digest, request, since=self._midnight(), queue_max=self.queue_max,
            daily_limit=self.daily_story_limit, **money,
        )
        if result.replayed:
            assert result.job is not None
            if result.job.idempotency_key != key:  # a story cut short is finished once
                return Submission(job=result.job, replayed=False, finished_already=True)
            return self._replay(result.job, digest)
        if result.job is None:
            self._refuse(result, request, set_aside)
        assert result.job is not None
        self.wakeup.poke()  # this process's own idle workers need not wait for the NOTIFY
        return Submission(job=result.job, replayed=False)

    async def redraw(self, story_id: int, client_key: str) -> Job:
        """A new picture for a story, asked for with `client_key`: the key's job, made now
        or earlier (a replay, answered first). Set aside against the month like a story;
        Busy `budget_reached` when one picture does not fit, writing nothing (the skipped
        job the statement makes is rolled back); Conflict while another is drawn; NotFound
        once the story is gone."""
        key = picture_key(story_id, client_key)
        if (job := await self.store.get_by_key(key)) is not None:
            return job
        if self.closed:
            self._closing()
        meter = self.meter
        if meter is not None:
            await meter.ready()
        refusal: AppError = NotFound(N_("There is no story with that number."))
        try:
            async with transaction_on(self.store.db) as connection:
                made = await self.pictures.make_job(
                    story_id, key, on=connection, budget=meter.budget() if meter else None,
                    set_aside=meter.picture_set_aside() if meter else 0)
                if made is not None and made.error_text == OVER_BUDGET.code:
                    raise _OverBudget  # rolls the skipped job back: nothing is written
        except _OverBudget:
            assert meter is not None
            spent, set_aside = await Ledger(self.store.db).used(meter)
            raise refusals.picture_over_budget(meter, spent, set_aside,
                                               meter.picture_set_aside()) from None
        except Conflict as busy:  # one is drawn already: perhaps this key's, made meanwhile
            made, refusal = None, busy
        job = made or await self.store.get_by_key(key)
        if job is None:
            raise refusal
        self.wakeup.poke()
        return job

    async def narrate(self, story_id: int, client_key: str,
                      texts: list[str]) -> tuple[int | None, bool]:
        """A story read aloud, in the parts `texts`, asked for with `client_key`: the id of
        the first of the key's jobs, made now (one per part not read aloud yet) or earlier
        (a replay, answered first), and False; when every part is read aloud already, the
        first job that read one (None for an imported narration), and True. Set aside
        against the month, part by part, before anything is written: Busy
        `budget_reached` when they do not fit; Conflict while a part waits or is read;
        NotFound once the story is gone."""
        assert self.narrations is not None
        if self.closed:
            self._closing()
        meter = self.meter
        if meter is not None:
            await meter.ready(meter.voice_model)
        made = await self.narrations.make_parts(
            story_id, narration_key(story_id, client_key), texts,
            budget=meter.budget() if meter else None,
            set_aside=[meter.narration_set_aside(text) if meter else 0 for text in texts])
        if made.outcome == "replayed":
            return made.job_ids[0], False
        if made.outcome == "gone":
            raise NotFound(N_("There is no story with that number."))
        if made.outcome == "in_progress":
            raise Conflict(N_("This story is being read aloud already."),
                           code="narration_in_progress")
        if made.outcome == "over_budget":
            assert meter is not None
            narration = sum(meter.narration_set_aside(text) for text in texts)
            raise refusals.narration_over_budget(meter, made.spent, made.set_aside, narration)
        if made.outcome == "complete":
            return (made.job_ids[0] if made.job_ids else None), True
        self.wakeup.poke()
        return made.job_ids[0], False

    def _closing(self) -> NoReturn:
        raise Unavailable(
            gettext("The storyteller is restarting; please try again in a moment."),
            code="shutting_down",
            retry_after_s=SHUTDOWN_RETRY_AFTER_S,
        )

    def stories_left_today(self, used: int) -> int:
        return max(self.daily_story_limit - used, 0)

    async def used_today(self) -> int:
        return await self.store.count_since(self._midnight())

    def _replay(self, existing: Job, digest: str) -> Submission:
        if existing.request_hash != digest:
            raise Invalid(
                "This Idempotency-Key was already used for a different story request.",
                code="idempotency_key_reused",
            )
        return Submission(job=existing, replayed=True)

    def _refuse(self, result: IntakeResult, request: StoryRequest, set_aside: int = 0) -> None:
        """Why the intake made no job: the queue bound first, then the day's limit."""
        if result.pending >= self.queue_max:
            raise Busy(
                gettext("The storyteller has a queue of stories to write; please try again "
                        "shortly."),
                code="queue_full",
                retry_after_s=QUEUE_FULL_RETRY_AFTER_S,
            )
        if result.used_today >= self.daily_story_limit:
            message, retry_after_s = self.limit_reached()
            raise Busy(message, code="daily_limit_reached", retry_after_s=retry_after_s)
        if result.spent is not None and self.meter is not None:
            raise refusals.story_over_budget(self.meter, result.spent, result.set_aside or 0,
                                             set_aside, request)
        # Only a writer that skipped the intake lock could take the key in between.
        raise Unavailable(gettext("Please try again."), retry_after_s=1)

    def limit_reached(self) -> tuple[str, int]:
        """What to say once the day's stories are used up, and the seconds until midnight
        (the form says it before a child chooses; a refused request says it too)."""
        return refusals.limit_reached(self.daily_story_limit, self._midnight())

    def _midnight(self) -> datetime:
        now = datetime.now(self.timezone)
        return now.replace(hour=0, minute=0, second=0, microsecond=0)
