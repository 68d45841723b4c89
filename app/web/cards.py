"""The job status card's view: what one card shows about its job. The page includes the
card's template and the poll returns it (templates/_job_card.html).

    card = await job_card(services, job)    # card.polls: whether it asks again in 3 s
    card = await polled_card(services, 17)  # a poll's: the job and its story in one read
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.failures import Failure, failure_of
from app.queue.estimates import progress_percent, queue_eta_s
from app.queue.jobs import CardStory, Job, PictureState, Screening, Status
from app.stories import paragraphs, split_title, written_in
from app.web.pictures import frame_context
from app.web.spend import stories_closed

if TYPE_CHECKING:  # built by the lifespan, handed in
    from app.services import Services

# A failed job's "Try again" always makes the same new job: a double tap is one retry, and
# the failed card finds the job it led to by this key.
RETRY_KEY_PREFIX = "household-retry-of-job-"
# A running job's owner that has not beaten for this many beats (and half the heartbeat's
# stale threshold: a loaded machine's beat may be late) is no longer writing it.
OWNER_QUIET_BEATS = 3
# How much of a stopped or failed story its compact card shows: a line or two.
FIRST_WORDS = 16


@dataclass(frozen=True)
class JobCard:
    """What a status card shows about one job."""

    job: Job
    position: int | None  # place in the queue while pending
    expected_s: float  # how long its story takes to write, from recent history
    progress_percent: int
    eta_s: float | None = None  # while pending: until its story is ready (None: no worker)
    title: str | None = None  # the story's, once completed and shown (None: deleted, hidden)
    screening: Screening | None = None  # the story's, while it is hidden (MODERATION=on)
    running: int = 0  # while pending: jobs being written now, in the whole database
    slots: int = 0  # while pending: how many the live workers write at once
    retried_as: int | None = None  # once failed and tried again: the new job's id
    finished_as: int | None = None  # once cut short and finished: the finishing job's id
    finished_story: int | None = None  # ... and its story, once that is written
    # A finish before its own words: the words kept of the story it finishes, shown whole
    # (to the last word, not only to the last whole sentence it carries on from).
    kept_words: str = ""
    body: str | None = None  # the story's text, once completed and shown, when asked for
    language: str = "en"  # the language its words are in (for `lang`), by who writes them
    # Running, but the process writing it is known not to be (stopped, found gone, silent
    # for OWNER_QUIET_BEATS beats): said at once, not once the sweeper's threshold passes.
    owner_lost: bool = False
    # A finished story's picture, as templates/_picture.html shows it (None: not shown).
    picture: dict[str, object] | None = None
    # Once failed: why no story can be asked for now (app/web/spend.py), so its Finish and
    # Try again come closed, saying why, as the home page's form does (None: open).
    closed: str | None = None

    @functools.cached_property  # the card's template asks for it more than once
    def story(self) -> list[str]:
        """The finished story's paragraphs, shown where its draft was (no body: none)."""
        return paragraphs(self.body) if self.body else []

    @property
    def polls(self) -> bool:
        """Whether the card asks again: while the job is unfinished, and while its story
        waits to be screened (it is shown, or said not to be, once that is done)."""
        return not self.job.status.finished or self.screening == Screening.PENDING

    @property
    def failure(self) -> Failure:
        """Once failed: why (app/failures.py, from its stored code): what went wrong, in a
        parent's words, the advice, and whether to try again."""
        return failure_of(self.job.error_text)

    @property
    def failure_what(self) -> str:
        """What went wrong, in a parent's words (N_: the template says it, `tr()`)."""
        return self.failure.what_for(words_kept=bool(self.job.text_so_far.strip()))

    @property
    def starts_now(self) -> bool:
        """Whether a waiting job is next and a worker is free for it ("Starting…"); behind
        a running job it says its place in line instead."""
        return self.position == 1 and self.running < self.slots

    @property
    def picked_up_again(self) -> bool:
        """Whether a story whose writer went away goes on ("Picking the story up again…"):
        the provider writes it still, and a live worker adopts it. Without a response id it
        will not come, and the card says the storyteller stopped."""
        return self.owner_lost and self.job.response_id is not None

    @property
    def offers_finish(self) -> bool:
        """Whether it offers "Finish this story": cut short with words kept, not finished
        already (a story is finished once; the card leads to that one), and where a new
        call can help (not while the provider refuses the app's key or request)."""
        return self.job.can_finish and self.finished_as is None and self.failure.retry

    @property
    def finish_key(self) -> str:
        """The finish form's idempotency key: one per job cut short, so a double tap (or the
        same card on two pages) makes one job that finishes it."""
        return f"finish-{self.job.id}"

    @property
    def started_epoch(self) -> float:
        return (self.job.started_at or self.job.created_at).timestamp()

    @property
    def eta_minutes(self) -> int | None:
        return None if self.eta_s is None else max(math.ceil(self.eta_s / 60), 1)

    @property
    def first_words(self) -> str:
        """A stopped or failed story's first words, for its compact card ("" : none yet)."""
        _, draft = self.draft
        words = " ".join(draft).split()
        if len(words) <= FIRST_WORDS:
            return " ".join(words)
        return " ".join(words[:FIRST_WORDS]).rstrip(",;:.") + "…"

    @property
    def continues(self) -> int | None:
        """The job whose story cut short this one finishes: its card is replaced by this
        one in place, the same words where they were (None: a story of its own)."""
        return self.job.request.finish_of

    @property
    def draft(self) -> tuple[str | None, list[str]]:
        """The story written so far: its title (once its line is done) and paragraphs. A
        job finishing a story cut short shows the words kept of it until its own text
        (which begins with them) arrives, so they never leave the screen."""
        text = (self.job.text_so_far.strip() or self.kept_words.strip()
                or (self.job.request.carried_text or "").strip())
        if not text:
            return None, []
        title, _, rest = text.partition("\n")
        if not rest.strip():
            return None, [text]
        return split_title(text)[0], paragraphs(rest)


async def job_card(services: Services, job: Job, *, with_story: bool = False) -> JobCard:
    """The card of one job: its place in line and when it should be ready, its story so
    far, the finished story's title, or why it cannot be shown. `with_story`: a finished
    story's text too, in place of its draft (the home page's cards of earlier stories stay
    short)."""
    found = None
    if job.story_id is not None:
        found = await services.shelf.card_story(job.story_id, with_body=with_story)
    story, picture = found if found is not None else (None, None)
    return await _card(services, job, story, picture=picture)


async def polled_card(services: Services, job_id: int) -> JobCard | None:
    """The card a poll (and the job's page) answers, its finished story's text in place of
    the draft: the job and its story read in one statement. None: no such job."""
    quiet_s = max(OWNER_QUIET_BEATS * services.settings.heartbeat_interval_s,
                  services.settings.heartbeat_stale_s / 2)
    found = await services.store.get_for_card(job_id, quiet_s=quiet_s)
    if found is None:
        return None
    return await _card(services, *found)


async def _card(
    services: Services, job: Job, story: CardStory | None, owner_lost: bool = False,
    picture: PictureState | None = None,
) -> JobCard:
    if job.status == Status.PENDING and job.position is None:
        job = await services.store.get(job.id) or job  # with its place in line
    expected_s = await services.estimates.expected_s(job.request.length)
    eta_s = None
    running = slots = 0
    if job.status == Status.PENDING and job.position is not None:
        # Not counting the job itself: claimed at once by an idle worker (a story's first
        # card, the answer to its request, often is), it says "Starting…", which is true.
        running, slots = await services.store.queue_capacity(
            services.settings.heartbeat_stale_s, besides=job.id)
        eta_s = queue_eta_s(position=job.position, running=running, slots=slots,
                            expected_s=expected_s)
    title = screening = body = None
    # Its words are in the language its model writes: the one asked for, unless that is the
    # demo's English. A story not written yet is being written by this installation's.
    model = services.settings.model
    if story is not None:
        title, screening, body, model = story
        if screening == Screening.FLAGGED:
            title = None  # a story that cannot be shown: its title neither
    retried_as = finished_as = finished_story = None
    if job.status == Status.FAILED:
        retry = await services.store.get_by_key(f"{RETRY_KEY_PREFIX}{job.id}")
        retried_as = retry.id if retry is not None else None
        if job.can_finish:
            finished_as = await services.store.finishing_job_id(job.id)
        if finished_as is not None:
            finishing = await services.store.get(finished_as)
            finished_story = finishing.story_id if finishing is not None else None
    # Read only where the card offers Finish or Try again: a poll of a story being written
    # costs no query for it.
    closed = None
    if job.status == Status.FAILED and finished_as is None and failure_of(job.error_text).retry:
        closed = await stories_closed(services)
    kept_words = ""
    if (job.request.finish_of is not None and job.status != Status.COMPLETED
            and not job.text_so_far.strip()):
        finished = await services.store.get(job.request.finish_of)
        kept_words = finished.text_so_far if finished is not None else ""
    return JobCard(
        job=job,
        position=job.position if job.status == Status.PENDING else None,
        expected_s=expected_s,
        progress_percent=progress_percent(job, expected_s=expected_s, now=time.time(),
                                          language=written_in(job.request, model)),
        eta_s=eta_s,
        title=title,
        screening=screening,
        running=running,
        slots=slots,
        retried_as=retried_as,
        finished_as=finished_as,
        finished_story=finished_story,
        kept_words=kept_words,
        body=body,
        language=written_in(job.request, model),
        owner_lost=owner_lost,
        picture=await _picture(services, job, title, body, picture),
        closed=closed,
    )


async def _picture(services: Services, job: Job, title: str | None, body: str | None,
                   state: PictureState | None) -> dict[str, object] | None:
    """A story shown whole on its card has its picture below it (drawn, being drawn); none
    asked for, the card says nothing (the story's page offers it)."""
    if (job.status != Status.COMPLETED or job.story_id is None or not title or not body
            or state is None or state.status is None):
        return None
    return await frame_context(services, job.story_id, title, state)
