"""Drawing a picture job this worker has claimed: one illustrator call, then the picture
and its small version stored with the job's completion, in one statement.

    painter = PictureWriter(store, boot_id, illustrator=illustrator, pictures=pictures,
                            llm_timeout_s=120, meter=meter)
    await painter.draw(writing)          # the worker's slot, heartbeat beating

What is kept is the picture fitted to the page (app/illustrating/small.py): a model that
sends a PNG, or more pixels than asked for, costs no family a heavy page.

As for a story, the illustrator is called once per job and never again, its call marked
sent on the row first: whatever goes wrong after the claim fails the picture job (its story
untouched), with a Failure (app/failures.py) the story page says, and charges the call in
the ledger (a picture the app refused was paid for all the same) unless the provider
refused it; except a database outage while storing a picture already paid for, which is
waited out (app/queue/storing.py's patience). A crash mid-call leaves the job to the
sweeper, which fails it 'interrupted' and charges its call; nothing draws it again unless
the family asks.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from app.failures import ILLUSTRATOR_TIMEOUT, PICTURE_UNSHOWABLE, STORY_GONE
from app.illustrating import Illustrator, Picture, Scene
from app.illustrating.small import NotAPicture, versions
from app.logs import log
from app.money import Usage
from app.money.meter import Charge
from app.queue.jobs import Job
from app.queue.pictures import Drawn, PictureStore
from app.queue.storing import through_outage
from app.queue.writing import Writer, Writing


@dataclass
class PictureWriter(Writer):
    """A Writer (the jobs' store, whose they are, how long a call may take, its meter) that
    draws: its illustrator, and the store its pictures are kept in."""

    illustrator: Illustrator = field(kw_only=True)
    pictures: PictureStore = field(kw_only=True)

    async def draw(self, writing: Writing) -> None:
        job = writing.job
        assert job.picture_of is not None, job
        source = await self.pictures.source(job.picture_of)
        if source is None:
            await self._fail(writing, STORY_GONE, "no story")
            return
        title, body = source
        scene = Scene(title, body, job.request.likes)
        if not await self._mark_sent(writing):
            return
        log("picture_started", job_id=job.id, story_id=job.picture_of,
            illustrator=self.illustrator.name)

        async def draw() -> tuple[Picture, Drawn]:
            picture = await self.illustrator.draw(scene, job_id=job.id)
            # Fitted to the page (what is kept), and made small, once.
            (image, image_type), (small, small_type) = await asyncio.to_thread(
                versions, picture.data, picture.content_type)
            return picture, Drawn(image, image_type, small, small_type, picture.model)

        try:
            made = await self._call(writing, draw, timed_out=ILLUSTRATOR_TIMEOUT)
        except NotAPicture as error:
            await self._fail(writing, PICTURE_UNSHOWABLE, str(error))
            return
        if made is None:  # failed, charged unless the provider refused the request
            return
        picture, drawn = made
        charge = None if self.meter is None else await self.meter.charge(
            job.kind, picture.model, picture.usage, set_aside=job.set_aside_micros,
            child=job.request.child_name, most=self.meter.picture_most(),
            counted=Usage(images=1), job_id=job.id)
        await self._store(job, drawn, charge)

    async def _store(self, job: Job, drawn: Drawn, charge: Charge | None) -> None:
        """The picture was paid for: stored through a database outage, within patience,
        with its call in the ledger."""
        stored = await through_outage(
            job.id, lambda: self.pictures.complete(job.id, self.boot_id, drawn, charge),
            lost="picture_lost")
        if stored:
            log("picture_completed", job_id=job.id, story_id=job.picture_of,
                bytes=len(drawn.image), content_type=drawn.content_type)
        else:
            log("job_lost", level=logging.WARNING, job_id=job.id, detail="storing no picture")
