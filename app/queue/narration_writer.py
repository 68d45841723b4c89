"""Reading a narration part this worker has claimed: one narrator call, then the part's
audio stored with the job's completion, in one statement.

    reader = NarrationWriter(store, boot_id, narrator=narrator, narrations=narrations,
                             llm_timeout_s=180, meter=meter)
    await reader.read(writing)           # the worker's slot, heartbeat beating

As for a story and a picture, the narrator is called once per job and never again, its
call marked sent on the row first: whatever goes wrong after the claim fails the part's
job (its story untouched) with a Failure (app/failures.py), and charges the call in the
ledger (audio the app refused was paid for all the same) unless the provider refused it;
except a database outage while storing audio already paid for, which is waited out
(app/queue/storing.py). A crash mid-call leaves the job to the sweeper, which fails it
'interrupted' and charges its call; nothing reads it again unless the family asks, and
then only the parts missing are read.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from app.failures import NARRATOR_TIMEOUT, STORY_GONE
from app.logs import log
from app.money.meter import Charge
from app.narrating import Narration, Narrator
from app.queue.jobs import Job
from app.queue.narrations import NarrationStore
from app.queue.storing import through_outage
from app.queue.writing import Writer, Writing


@dataclass
class NarrationWriter(Writer):
    """A Writer (the jobs' store, whose they are, how long a call may take, its meter) that
    reads aloud: its narrator, and the store its parts are kept in."""

    narrator: Narrator = field(kw_only=True)
    narrations: NarrationStore = field(kw_only=True)

    async def read(self, writing: Writing) -> None:
        job = writing.job
        assert job.narration_of is not None and job.narration_text, job
        if not await self.narrations.story_there(job.narration_of):
            await self._fail(writing, STORY_GONE, "no story")
            return
        if not await self._mark_sent(writing):
            return
        log("narration_started", job_id=job.id, story_id=job.narration_of,
            part=job.narration_part, parts=job.narration_parts, narrator=self.narrator.name)
        text = job.narration_text
        narration = await self._call(writing, lambda: self.narrator.read(
            text, language=job.request.language, job_id=job.id), timed_out=NARRATOR_TIMEOUT)
        if narration is None:  # failed, charged unless the provider refused the request
            return
        charge = None if self.meter is None else await self.meter.charge(
            job.kind, narration.model, narration.usage, set_aside=job.set_aside_micros,
            child=job.request.child_name, most=self.meter.narration_most(job.narration_text),
            job_id=job.id)
        await self._store(job, narration, charge)

    async def _store(self, job: Job, narration: Narration, charge: Charge | None) -> None:
        """The part was paid for: stored through a database outage, within patience, with
        its call in the ledger."""
        stored = await through_outage(
            job.id, lambda: self.narrations.complete(job.id, self.boot_id, narration, charge),
            lost="narration_lost")
        if stored:
            log("narration_completed", job_id=job.id, story_id=job.narration_of,
                part=job.narration_part, bytes=len(narration.audio),
                seconds=f"{narration.seconds:.1f}")
        else:
            log("job_lost", level=logging.WARNING, job_id=job.id, detail="storing no narration")
