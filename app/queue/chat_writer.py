"""Writing a story in one call on this process's connection (`LLM_API=chat`, the demo).

    writer = ChatWriter(store, boot_id, storyteller=storyteller, llm_timeout_s=180)
    story = await writer.write(writing)     # None: the job failed, or was stopped

The storyteller is called once, and never again for that job, its call marked sent on
the row first: a stop closes the stream (the call's task is cancelled), and whatever else
goes wrong fails the job at once, with a short reason and the words written so far, the
call charged in the ledger unless the provider refused it, or it never left (no connection
opened, at a second try either: `never_sent`), so the provider billed nothing. No clock
bounds the whole call:
the storyteller bounds each silence by LLM_TIMEOUT_S, and a story's length by its word cap.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.failures import INTERNAL, STOPPED, StorytellerError
from app.queue.writing import (
    Interrupted,
    Interruption,
    Writer,
    Writing,
    unless_interrupted,
)
from app.stories import Story, Storyteller


@dataclass
class ChatWriter(Writer):
    storyteller: Storyteller = field(kw_only=True)

    async def write(self, writing: Writing) -> Story | None:
        """Call the storyteller once, on this connection; None (and the job failed, or
        stopped) when it does not deliver."""
        job = writing.job
        if not await self._mark_sent(writing):
            return None
        call = self.storyteller.write(job.request, job_id=job.id, on_text=writing.update)
        try:
            return await unless_interrupted(writing, call, {Interruption.STOP}, timeout_s=None)
        except Interrupted:  # closing the stream (the call's task is cancelled) stops it
            await self._fail(writing, STOPPED, "stopped by the family")
        except StorytellerError as error:
            await self._provider_failed(writing, error)
        except Exception as error:
            await self._fail(writing, INTERNAL, repr(error), error=error)
        return None

