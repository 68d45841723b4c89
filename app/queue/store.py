"""The job state machine: every job transition and job read; the only code that knows the
names of the job queries (sql/queries/jobs.sql).

    store = JobStore(db)
    result = await store.intake(key, digest, request, since=..., queue_max=8, daily_limit=20)
    job = await store.claim_next(boot_id)                    # None: nothing to run

    pending ──► running ──► completed
       │           │   ▲          ▲
       │           ▼   │ adopt     │ its owner, alive all along (cut off from the database)
       │     running, unowned      │
       │     (handed over)         │
       └───────────┴──────► failed (error_text: its Failure's code, app/failures.py)

Every statement that moves a job is guarded by the state it expects (no row back: another
writer moved the job first; it is logged once and the caller leaves the job be). The table
of them, with each guard and who writes it, is docs/architecture.md's state machine, checked
against sql/ by tests/test_docs.py.

A picture job (kind 'picture') moves by the same statements; its own two (made, completed
with its picture) are app/queue/pictures.py's. A live job's set-aside (app/money/) counts
while it is pending or running: each move out of them releases it. "Its owner found gone":
a process on its host saw its pid gone (app/queue/processes.py, the `workers` table).

`beat_heartbeat`, `save_text_so_far`, `save_response_id`, `mark_call_sent` (before the
job's call: from then on every end of the job charges it) and `request_cancel` write no
status, all but the last only while the job is `running` and claimed by the caller
("ours"): a worker whose save finds no row has lost the job and stores (or calls) nothing.
tests/test_migrations.py checks that every status write has its guard.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from app.failures import INTERRUPTED, STOPPED, Failure
from app.kinds import JOB_KINDS
from app.logs import log
from app.money.meter import Billing, Charge, billing_params, charge_params
from app.queries import Queryable, Statements
from app.queue.intake_params import intake_params
from app.queue.jobs import (
    CardStory,
    Held,
    IntakeResult,
    Job,
    PictureState,
    Screening,
    Status,
    picture_state,
)
from app.requests import request_from_row
from app.stories import DELETED_KEEP_S, Story, StoryRequest

CLAIM_ORDER = tuple(kind.code for kind in JOB_KINDS)  # every kind: a worker that makes them all

ForCard = tuple[Job, CardStory | None, bool, PictureState | None]  # get_for_card's answer


class JobStore(Statements):
    """`db`: the pool, or one connection whose open transaction every statement joins."""

    # -- reads -----------------------------------------------------------------------

    async def get(self, job_id: int) -> Job | None:
        row = await self._one("get_job", {"job_id": job_id})
        return Job.from_row(row) if row else None

    async def get_for_card(self, job_id: int, *, quiet_s: float) -> ForCard | None:
        """The job, its card's story (None: none, or deleted), whether its owner is lost
        (stopped, gone, silent for `quiet_s`) and the story's picture: one round trip."""
        row = await self._one("get_job_for_card", {"job_id": job_id, "quiet_s": quiet_s})
        if row is None:
            return None
        story = picture = None
        if row["story_title"] is not None:
            screening = Screening(mark) if (mark := row["story_screening"]) else None
            story = CardStory(row["story_title"], screening, row["story_body"],
                              row["story_model"])
            picture = picture_state(row, row["story_id"])
        return Job.from_row(row), story, bool(row["owner_lost"]), picture

    async def get_by_key(self, idempotency_key: str) -> Job | None:
        row = await self._one("get_job_by_key", {"idempotency_key": idempotency_key})
        return Job.from_row(row) if row else None

    async def finishing_job_id(self, job_id: int) -> int | None:
        """The job that finishes this one's story cut short, once one was asked for."""
        finishing: int | None = await self._val("finishing_job_id", {"job_id": job_id})
        return finishing

    async def count_since(self, since: datetime) -> int:
        return int(await self._val("count_jobs_since", {"since": since}))

    async def count_pending(self) -> int:
        """Stories waiting to be claimed, in every process sharing the database."""
        return int(await self._val("count_pending"))

    async def recent(self, *, recent_s: float = 600, limit: int = 20) -> list[Job]:
        rows = await self._all("recent_jobs", {"recent_s": float(recent_s), "limit": limit})
        return [Job.from_row(row) for row in rows]

    async def queue_capacity(self, stale_s: float, *,
                             besides: int | None = None) -> tuple[int, int]:
        """(jobs running but `besides`, job slots of the live workers), in the database."""
        row = await self._one("queue_capacity", {"stale_s": stale_s, "besides": besides})
        return row["running"], row["slots"]

    async def last_request(self) -> StoryRequest | None:
        """What the newest job asked for: the story form's defaults."""
        row = await self._one("last_request")
        return request_from_row(row) if row is not None else None

    # -- transitions -----------------------------------------------------------------

    async def purge_deleted_stories(self, *, keep_s: float = DELETED_KEEP_S) -> list[int]:
        """completed -> (gone): stories deleted over `keep_s` ago, with their jobs; their ids."""
        rows = await self._all("purge_deleted_stories", {"keep_s": float(keep_s)})
        return sorted(row["id"] for row in rows)

    async def intake(self, idempotency_key: str, request_hash: str, request: StoryRequest,
                     **limits: Any) -> IntakeResult:
        """(new) -> pending, unless the key has a job already (a replay) or the queue bound,
        the day's limit (jobs created since `since`) or the month's budget refuses it (the
        `limits`: intake_params's): one statement under the intake lock (`intake_job`), one
        round trip. A new job's NOTIFY goes out at commit, and its place in line with it."""
        row = await self._one("intake_job", intake_params(idempotency_key, request_hash,
                                                          request, **limits))
        job = Job.from_row(row) if row["id"] is not None else None
        return IntakeResult(job=job, replayed=bool(row["replayed"]), pending=row["pending"],
                            used_today=row["used_today"], spent=row["spent_micros"],
                            set_aside=row["month_set_aside_micros"])

    async def claim_next(self, boot_id: uuid.UUID, *, defer_s: float | None = None,
                         kinds: Sequence[str] = CLAIM_ORDER) -> Job | None:
        """pending -> running, the oldest job of the first of `kinds` (codes, in claim order:
        app/kinds.py's claimable) that has one waiting; None: none to take (or, with
        `defer_s`, while a story paid for already is about to be adopted)."""
        row = await self._one("claim_next_job", {
            "boot_id": boot_id, "defer_s": None if defer_s is None else float(defer_s),
            "kinds": list(kinds)})
        return Job.from_row(row) if row else None

    async def adopt(self, boot_id: uuid.UUID, stale_s: float) -> Job | None:
        """Take over the oldest running job whose story goes on at the provider and whose
        owner let go of it or died; None when there is none."""
        row = await self._one("adopt_job", {"boot_id": boot_id, "stale_s": float(stale_s)})
        return Job.from_row(row) if row else None

    async def mark_call_sent(self, job_id: int, boot_id: uuid.UUID,
                             billed_at: Billing | None) -> Held | None:
        """Our running job's one provider call is about to go, at `billed_at` (the model
        and its price: Meter.billing; None: no meter, nothing
        charged). None: the job is not ours any more, and no call may be made."""
        return _held(await self._one("mark_call_sent", {
            "job_id": job_id, "boot_id": boot_id, **billing_params(billed_at)}))

    async def beat(self, job_id: int, boot_id: uuid.UUID) -> Held | None:
        """Refresh a running job's heartbeat; None once it is no longer ours to run."""
        return _held(await self._one("beat_heartbeat", {"job_id": job_id, "boot_id": boot_id}))

    async def save_text_so_far(
        self, job_id: int, boot_id: uuid.UUID, text: str, *, sequence: int | None = None
    ) -> Held | None:
        """The streamed text so far (with the provider's sequence number of its last event,
        in background mode) on our running job, and its heartbeat; None once the job is no
        longer ours to write."""
        return _held(await self._one("save_text_so_far", {
            "job_id": job_id, "boot_id": boot_id, "text_so_far": text, "sequence": sequence}))

    async def save_response_id(
        self, job_id: int, boot_id: uuid.UUID, response_id: str
    ) -> Held | None:
        """The provider's id for our job's story, saved once; None when the job is not ours
        (or has an id already)."""
        return _held(await self._one("save_response_id", {
            "job_id": job_id, "boot_id": boot_id, "response_id": response_id}))

    async def release(self, job_id: int, boot_id: uuid.UUID, text: str, *,
                      sequence: int | None) -> bool:
        """Hand our running job over (shutting down): its story goes on at the provider and
        any live worker adopts it. False when it was not ours to let go."""
        row = await self._one("release_job", {"job_id": job_id, "boot_id": boot_id,
                                              "text_so_far": text, "sequence": sequence})
        return row is not None

    async def request_cancel(self, job_id: int) -> bool:
        """Ask a running job's owner to stop it; False when the job is not running."""
        return await self._one("request_cancel", {"job_id": job_id}) is not None

    async def cancel_pending(self, job_id: int) -> bool:
        """pending -> failed ('stopped'): it is never sent to the model. False (not
        logged: the caller then asks a running job to stop) when it was not pending."""
        return await self._one("cancel_pending_job", {"job_id": job_id}) is not None

    async def insert_story(
        self, job_id: int, boot_id: uuid.UUID, story: Story, *,
        screening: Screening | None = None, charge: Charge | None = None,
        on: Queryable | None = None,
    ) -> int | None:
        """Store our job's story (a retry gets the first insert's id), hidden while
        `screening` is PENDING, and its call's `charge` in the ledger, once; None: not ours
        (adopted, stopped, or completed)."""
        story_id: int | None = await self._val("insert_story", on=on, params={
            "job_id": job_id, "boot_id": boot_id, "title": story.title, "body": story.body,
            "model": story.model, "prompt_tokens": story.prompt_tokens,
            "completion_tokens": story.completion_tokens,
            "usage_estimated": bool(charge and charge.estimated), **charge_params(charge),
            "screening": screening.value if screening is not None else None})
        return story_id

    async def complete(self, job_id: int, boot_id: uuid.UUID, story_id: int) -> bool:
        """Our running job -> completed (or our 'interrupted' one: we were alive)."""
        row = await self._guarded("complete_job", "complete", job_id=job_id, boot_id=boot_id,
                                  story_id=story_id)
        return row is not None

    async def fail(
        self, job_id: int, boot_id: uuid.UUID, failure: Failure, *,
        text_so_far: str | None = None, refused: bool = False,
    ) -> bool:
        """Our running job -> failed with `failure`'s code, keeping its words (`text_so_far`:
        the latest, when newer than the saved ones); its call, if it was sent
        (mark_call_sent), charged in the ledger in the same statement, estimated, unless the
        provider `refused` it (answered with an error status: nothing written, nothing
        billed)."""
        row = await self._guarded("fail_job", "fail", job_id=job_id, boot_id=boot_id,
                                  error_text=failure.code, text_so_far=text_so_far,
                                  refused=refused)
        return row is not None

    async def sweep_dead_running(
        self, stale_s: float
    ) -> tuple[list[int], list[int], list[int]]:
        """For every running job whose heartbeat stopped or whose owner was found gone:
        running -> completed when its story is stored, else running -> failed
        ('interrupted', or 'stopped' when the family had asked to stop it), a job whose
        call was sent charged in the ledger (its set-aside, estimated). (recovered,
        interrupted, cancelled)"""
        rows = await self._all("sweep_dead_running", {"stale_s": stale_s})

        def ids(status: Status, error: str | None) -> list[int]:
            return sorted(row["id"] for row in rows
                          if row["status"] == status and row["error_text"] == error)

        return (ids(Status.COMPLETED, None), ids(Status.FAILED, INTERRUPTED.code),
                ids(Status.FAILED, STOPPED.code))

    async def sweep_expired_pending(self, threshold_s: float) -> list[int]:
        """pending -> failed ('expired') for jobs that waited past the threshold while no
        worker was alive to run them."""
        rows = await self._all("sweep_expired_pending", {"threshold_s": threshold_s})
        return sorted(row["id"] for row in rows)

    async def seconds_until_next_stale(self, stale_s: float, boot_id: uuid.UUID) -> float | None:
        """When another process's running job will look dead, if there is one."""
        seconds: float | None = await self._val("seconds_until_next_stale",
                                                {"stale_s": stale_s, "boot_id": boot_id})
        return seconds

    async def _guarded(self, query: str, transition: str, **params: object) -> Any:
        """Run a guarded UPDATE; its row, or None (logged once) when the guard lost."""
        row = await self._one(query, params)
        if row is None:
            log("guard_lost", level=logging.WARNING, job_id=params["job_id"], transition=transition)
        return row


def _held(row: Any) -> Held | None:
    return Held(cancel_requested=bool(row["cancel_requested"])) if row else None
