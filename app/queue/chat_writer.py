"""Writing a story in one call on this process's connection (`LLM_API=chat`, the demo).

    writer = ChatWriter(storyteller, store, boot_id, llm_timeout_s=180)
    story = await writer.write(writing)     # None: the job failed, or was stopped

The storyteller is called once, and never again for that job: a stop closes the stream
(the call's task is cancelled), and whatever else goes wrong fails the job at once, with
a short reason and the words written so far.
"""

from __future__ import annotations

import uuid
from dataclasses import KW_ONLY, dataclass

from app.money.meter import Charge, Meter
from app.queue.jobs import FailReason
from app.queue.store import JobStore
from app.queue.writing import (
    Interrupted,
    Interruption,
    Writing,
    billed,
    fail,
    unless_interrupted,
)
from app.stories import Story, Storyteller, StorytellerError


@dataclass
class ChatWriter:
    storyteller: Storyteller
    store: JobStore
    boot_id: uuid.UUID
    _: KW_ONLY
    llm_timeout_s: float
    meter: Meter | None = None  # a call stopped or past its time was billed: the ledger's

    async def write(self, writing: Writing) -> Story | None:
        """Call the storyteller once, on this connection; None (and the job failed, or
        stopped) when it does not deliver."""
        job = writing.job
        call = self.storyteller.write(job.request, job_id=job.id, on_text=writing.update)
        try:
            return await unless_interrupted(writing, call, {Interruption.STOP},
                                          timeout_s=self.llm_timeout_s)
        except Interrupted:  # closing the stream (the call's task is cancelled) stops it
            await self._fail(writing, FailReason.CANCELLED, "stopped by the family",
                             charge=await billed(writing, self.meter))
        except TimeoutError:
            await self._fail(writing, "the storyteller took too long", "timeout",
                             charge=await billed(writing, self.meter))
        except StorytellerError as error:
            await self._fail(writing, str(error), repr(error.__context__ or error))
        except Exception as error:
            await self._fail(writing, "something went wrong while writing", repr(error),
                             error=error)
        return None

    async def _fail(self, writing: Writing, error_text: str, detail: str, *,
                    error: BaseException | None = None, charge: Charge | None = None) -> None:
        await fail(writing, self.store, self.boot_id, error_text, detail, error=error,
                   charge=charge)
