"""Writing a story at the provider (`LLM_API=responses`), and following one started there.

    writer = BackgroundWriter(store, boot_id, storyteller=storyteller, llm_timeout_s=180)
    story = await writer.write(writing)   # None: the job failed, stopped, or left us
    await writer.release(writing)         # at shutdown: any live worker adopts it

The one billed request starts the story at the provider and its id is saved on the row
before anything else; the writer then follows the story by that id. An adopted job (one
with a response id already: handed over at a shutdown, or its process died) is followed
from the last event saved, never started again. A writer whose saves find the job no
longer its own (an adopter took it) stops at once and stores nothing.

Stopping: the family's request cancels the response at the provider, and fails the job
'stopped', keeping its words. Any other end of following that stores no story (a 401 or
403 once the key was revoked, the response gone, an error) cancels the response first
too, then fails the job, its create charged in the ledger in the same statement.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from app.failures import (
    CUT_SHORT,
    INTERNAL,
    INTERRUPTED,
    STOPPED,
    STORYTELLER_TIMEOUT,
    Failure,
    ResponseGone,
    StorytellerError,
)
from app.logs import log, log_caught
from app.queue.storing import STORE_RETRYABLE, store_backoff
from app.queue.writing import (
    Interrupted,
    Interruption,
    Writer,
    Writing,
    detail_of,
    unless_interrupted,
)
from app.stories import BackgroundStoryteller, Story, clean_text

# A stop (or a failure) cancels the story at the provider within this long, or not at all.
PROVIDER_CANCEL_TIMEOUT_S = 10


@dataclass
class BackgroundWriter(Writer):
    storyteller: BackgroundStoryteller = field(kw_only=True)

    async def write(self, writing: Writing) -> Story | None:
        """Start the story at the provider (unless adopted: it was started already), save
        its id, follow it to the end; None when the job failed, stopped, or left us."""
        job = writing.job
        if writing.response_id is None:
            if not await self._mark_sent(writing):
                return None
            response_id = await self._call(
                writing, lambda: self.storyteller.start(job.request, job_id=job.id),
                timed_out=STORYTELLER_TIMEOUT)
            if response_id is None:
                return None
            writing.response_id = response_id
        try:
            return await self._follow(writing)
        except Exception as error:
            # What may pass (a dropped stream, a busy provider, a database outage while
            # saving) is waited out below; what comes here would meet any adopter just
            # the same.
            await self._give_up(writing, INTERNAL, repr(error), error=error)
            return None

    async def release(self, writing: Writing) -> bool:
        """Hand the job over: its story goes on at the provider, for any worker to adopt."""
        try:
            released = await self.store.release(writing.job.id, self.boot_id,
                                                clean_text(writing.text),
                                                sequence=writing.sequence)
        except Exception as error:  # its heartbeat goes stale, and it is adopted then
            log_caught("hand_over_failed", error, expected=STORE_RETRYABLE,
                       job_id=writing.job.id)
            return True
        if released:
            log("job_handed_over", job_id=writing.job.id, response_id=writing.response_id,
                after=writing.sequence)
        return released

    async def _follow(self, writing: Writing) -> Story | None:
        """Save a new response's id, then follow the story to the end (or to whatever
        interrupts it); None when the job failed, stopped, or left us."""
        job = writing.job
        if not writing.owns_response:
            await self._save_response_id(writing)
        assert writing.response_id is not None
        follow = self.storyteller.follow(
            writing.response_id, job.request, job_id=job.id, text=writing.raw,
            after=writing.sequence, on_progress=writing.update,
            timeout_s=self.llm_timeout_s, started_at=job.started_at,
        )
        try:
            # No clock bounds the whole story: follow ends it once no new words came for
            # llm_timeout_s (an adopted story still gets its plain retrieve, and is taken
            # if it is done), and the word cap bounds its length.
            return await unless_interrupted(writing, follow, set(Interruption), timeout_s=None)
        except Interrupted as interrupted:
            if interrupted.reason is Interruption.HAND_OVER:
                await self.release(writing)
            elif interrupted.reason is Interruption.LOST:
                log("job_lost", level=logging.WARNING, job_id=job.id,
                    detail="another worker adopted it; storing nothing")
            else:
                await self._cancel_at_provider(writing)
                await self._fail(writing, STOPPED, "stopped by the family")
        except TimeoutError:  # silent for llm_timeout_s: before its first word, or after
            await self._cancel_at_provider(writing)
            failure = CUT_SHORT if writing.text.strip() else STORYTELLER_TIMEOUT
            await self._fail(writing, failure, "timeout")
        except ResponseGone as error:
            await self._give_up(writing, INTERRUPTED, repr(error))
        except StorytellerError as error:  # a 401/403 too: the key was revoked meanwhile
            await self._give_up(writing, error.failure, detail_of(error))
        return None

    async def _give_up(self, writing: Writing, failure: Failure, detail: str, *,
                       error: BaseException | None = None) -> None:
        """Following ended with no story: cancel the response at the provider first (a
        cancel bills nothing; the story would otherwise be written, and billed, in full),
        then fail the job, its create charged in the same statement. Not a job another
        worker adopted meanwhile: that one follows it."""
        try:
            ours = await self.store.beat(writing.job.id, self.boot_id) is not None
        except Exception as unsaid:  # the database cannot say: stop it at the provider
            log_caught("heartbeat_failed", unsaid, expected=STORE_RETRYABLE,
                       job_id=writing.job.id)
            ours = True
        if not ours and writing.owns_response:
            log("job_lost", level=logging.WARNING, job_id=writing.job.id,
                detail="another worker adopted it; cancelling nothing")
            return
        await self._cancel_at_provider(writing)
        await self._fail(writing, failure, detail, error=error)

    async def _save_response_id(self, writing: Writing) -> None:
        """Put the response id on the row before anything else, through a database outage:
        from then on any process can pick the story up."""
        assert writing.response_id is not None
        job_id = writing.job.id
        backoff = store_backoff()
        while True:
            try:
                held = await self.store.save_response_id(job_id, self.boot_id,
                                                         writing.response_id)
                break
            except STORE_RETRYABLE as error:
                if backoff.time_left_s < 0:
                    log("response_id_not_saved", level=logging.ERROR, job_id=job_id,
                        error=repr(error))
                    return
                await backoff.wait()
        if held is None:
            # Given up as 'interrupted' while we were cut off: the story still comes to
            # us, and storing it completes the job (we still own it).
            log("response_id_not_saved", level=logging.WARNING, job_id=job_id,
                response_id=writing.response_id, detail="the job was no longer running")
            return
        writing.owns_response = True
        log("response_started", job_id=job_id, response_id=writing.response_id)
        if held.cancel_requested:
            writing.interrupt(Interruption.STOP)

    async def _cancel_at_provider(self, writing: Writing) -> None:
        assert writing.response_id is not None
        try:
            async with asyncio.timeout(PROVIDER_CANCEL_TIMEOUT_S):
                await self.storyteller.cancel(writing.response_id, job_id=writing.job.id)
        except Exception as error:  # the job stops here whatever the provider says
            log_caught("provider_cancel_failed", error,
                       expected=(StorytellerError, TimeoutError), job_id=writing.job.id)

