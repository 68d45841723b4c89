"""This process's row in the `workers` table: proof, for every other process, that it lives.

    liveness = ProcessLiveness(store, boot_id, concurrency=1, interval_s=5)
    await liveness.register()
    task = asyncio.create_task(liveness.run())     # beats every interval
    await liveness.stop()                           # a clean shutdown, recorded

The sweeper of any process reads these rows: a waiting job may expire only when no
process that runs jobs has been alive for the whole threshold.
"""

from __future__ import annotations

import asyncio
import os
import socket
import uuid

from app.db import DATABASE_UNAVAILABLE
from app.logs import log_caught
from app.queue.store import JobStore


class ProcessLiveness:
    def __init__(
        self, store: JobStore, boot_id: uuid.UUID, *, concurrency: int, interval_s: float
    ) -> None:
        self.store = store
        self.boot_id = boot_id
        self.concurrency = concurrency
        self.interval_s = interval_s

    async def register(self) -> None:
        await self.store.register_process(
            self.boot_id, host=socket.gethostname(), pid=os.getpid(),
            concurrency=self.concurrency,
        )

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                if not await self.store.beat_process(self.boot_id):
                    await self.register()  # pruned while this process could not beat
            except Exception as error:  # a database blip; the next beat may get through
                log_caught("process_heartbeat_failed", error, expected=DATABASE_UNAVAILABLE)

    async def stop(self) -> None:
        try:
            await self.store.stop_process(self.boot_id)
        except Exception as error:  # its heartbeat goes stale instead: the same in the end
            log_caught("process_stop_not_recorded", error, expected=DATABASE_UNAVAILABLE)
