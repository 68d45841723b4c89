"""The worker: one job at a time, claim -> write -> store -> complete.

    worker = Worker(store, queue, storyteller, boot_id=boot_id, llm_timeout_s=180)
    task = asyncio.create_task(worker.run())

The storyteller is called only after this worker won the claim (pending -> running), and
never again for that job: whatever goes wrong afterwards fails the job instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid

from app.db import DATABASE_UNAVAILABLE
from app.jobs import JobStore
from app.logs import log
from app.queue import JobQueue
from app.storytellers import Story, StoryRequest, Storyteller, StorytellerError

# Storing a story that was paid for is retried through a database outage this long.
STORE_RETRY_S = 300.0
STORE_RETRY_MAX_DELAY_S = 5.0


class Worker:
    def __init__(
        self,
        store: JobStore,
        queue: JobQueue,
        storyteller: Storyteller,
        *,
        boot_id: uuid.UUID,
        llm_timeout_s: float,
        heartbeat_interval_s: float = 5.0,
    ) -> None:
        self.store = store
        self.queue = queue
        self.storyteller = storyteller
        self.boot_id = boot_id
        self.llm_timeout_s = llm_timeout_s
        self.heartbeat_interval_s = heartbeat_interval_s
        self.current_job_id: int | None = None
        self._stopping = False
        self._idle = asyncio.Event()
        self._idle.set()

    async def run(self) -> None:
        while not self._stopping:
            job_id = await self.queue.get()
            self._idle.clear()
            try:
                await self.process(job_id)
            except Exception as error:  # never let one job stop the worker
                log("worker_error", level=logging.ERROR, job_id=job_id, error=repr(error))
            finally:
                self.queue.done()
                self._idle.set()

    def stop_taking_jobs(self) -> None:
        """Finish the job in hand, then take no more."""
        self._stopping = True

    @property
    def busy(self) -> bool:
        return not self._idle.is_set()

    async def wait_idle(self) -> None:
        await self._idle.wait()

    async def process(self, job_id: int) -> None:
        try:
            job = await self.store.claim(job_id, self.boot_id)
        except Exception as error:  # the job stays pending; the sweeper or a restart decides
            log("claim_failed", level=logging.ERROR, job_id=job_id, error=repr(error))
            return
        if job is None:
            return  # someone else moved it; the store logged the lost guard
        self.current_job_id = job_id
        try:
            log("job_started", job_id=job_id)
            story = await self._write(job_id, job.request)
            if story is not None:
                await self._store(job_id, story)
        except asyncio.CancelledError:
            # Shut down past the grace period: the story will not come, say so now.
            await self._fail(job_id, "interrupted", "cancelled at shutdown")
            raise
        finally:
            self.current_job_id = None

    async def _write(self, job_id: int, request: StoryRequest) -> Story | None:
        """Call the storyteller once; None (and the job failed) when it does not deliver."""
        heartbeat = asyncio.create_task(self._beat(job_id))
        try:
            return await asyncio.wait_for(
                self.storyteller.write(request, job_id=job_id), self.llm_timeout_s
            )
        except TimeoutError:
            await self._fail(job_id, "the storyteller took too long", "timeout")
        except StorytellerError as error:
            await self._fail(job_id, str(error), repr(error.__context__ or error))
        except Exception as error:
            await self._fail(job_id, "something went wrong while writing", repr(error))
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
        return None

    async def _store(self, job_id: int, story: Story) -> None:
        """Insert the story and complete the job, retrying through a database outage."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STORE_RETRY_S
        delay = 0.2
        while True:
            try:
                story_id = await self.store.insert_story(job_id, story)
                if await self.store.complete(job_id, story_id):
                    log("job_completed", job_id=job_id, story_id=story_id)
                else:
                    log("story_orphaned", level=logging.WARNING, job_id=job_id, story_id=story_id)
                return
            except DATABASE_UNAVAILABLE as error:
                if loop.time() > deadline:
                    log("story_lost", level=logging.ERROR, job_id=job_id, error=repr(error))
                    raise
                log("store_retry", level=logging.WARNING, job_id=job_id, error=repr(error))
                await asyncio.sleep(delay)
                delay = min(delay * 2, STORE_RETRY_MAX_DELAY_S)

    async def _fail(self, job_id: int, error_text: str, detail: str) -> None:
        log("job_failed", level=logging.WARNING, job_id=job_id, error=error_text, detail=detail)
        try:
            await self.store.fail(job_id, error_text)
        except Exception as error:  # the sweeper will see the stopped heartbeat
            log("fail_not_recorded", level=logging.ERROR, job_id=job_id, error=repr(error))

    async def _beat(self, job_id: int) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_interval_s)
            try:
                if not await self.store.beat(job_id, self.boot_id):
                    log("heartbeat_lost", level=logging.WARNING, job_id=job_id)
                    return
            except Exception as error:  # a database blip; the next beat may get through
                log("heartbeat_failed", level=logging.WARNING, job_id=job_id, error=repr(error))
