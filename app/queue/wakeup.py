"""The wake-up signal: all a process keeps in memory about the queue.

    wakeup = Wakeup(connect, recheck_s=2.0)
    task = asyncio.create_task(wakeup.listen())    # LISTEN on its own connection
    wakeup.clear(); job = await store.claim_next(boot_id)
    if job is None: await wakeup.wait()            # a NOTIFY, a poke, or the timer

The queue itself is the `story_jobs` table: a job waits as a `pending` row and any
process's worker claims it from there. The intake sends `pg_notify` in the transaction
that creates a job, so an idle worker in any process wakes the moment it commits. A lost
notification or a dropped LISTEN connection only delays a job until the next re-check.

The same connection hears the family's requests to stop a running job (`pg_notify` on
CANCEL_CHANNEL with the job's id), handed to `on_stop`: the job's owner, in whichever
process, stops it at once. Where LISTEN is off, the owner's heartbeat sees the request.

LISTEN needs a connection of its own: the pool resets a connection when it is released,
which would end the LISTEN. This one is reconnected whenever it drops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

import asyncpg

from app.backoff import Backoff
from app.db import DATABASE_UNAVAILABLE
from app.logs import log, log_caught

CHANNEL = "story_jobs"
CANCEL_CHANNEL = "story_jobs_cancel"
# A listening connection that has been quiet this long is asked whether it is still there
# (a half-open TCP connection would otherwise wait silently forever).
LISTEN_PROBE_S = 30.0
LISTEN_PROBE_TIMEOUT_S = 5.0
RECONNECT_FIRST_DELAY_S = 0.5
RECONNECT_MAX_DELAY_S = 5.0
# What a LISTEN connection meets when the database goes away or refuses it (a wrong
# password, a server that is starting): waited out, one line each.
LISTEN_FAULTS: tuple[type[BaseException], ...] = (*DATABASE_UNAVAILABLE, asyncpg.PostgresError)


class Wakeup:
    def __init__(
        self,
        connect: Callable[[], Awaitable[asyncpg.Connection]] | None,
        *,
        recheck_s: float,
    ) -> None:
        self._connect = connect
        self.recheck_s = recheck_s
        self.listening = False
        self.on_stop: Callable[[int], None] | None = None  # set by the worker's owner
        self._event = asyncio.Event()

    @property
    def can_listen(self) -> bool:
        return self._connect is not None

    def poke(self) -> None:
        """A job may be waiting: wake every idle worker of this process."""
        self._event.set()

    def clear(self) -> None:
        """Call before looking for a job, so a job committed after the look wakes us again."""
        self._event.clear()

    async def wait(self) -> None:
        """Until poked or notified, or at most `recheck_s`."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.recheck_s):
                await self._event.wait()

    async def listen(self) -> None:
        """LISTEN for new jobs for as long as the task lives, reconnecting as needed."""
        if self._connect is None:
            return
        backoff = Backoff(RECONNECT_FIRST_DELAY_S, max_s=RECONNECT_MAX_DELAY_S)
        while True:
            try:
                connection = await self._connect()
            except Exception as error:  # the database is down or refusing: the timer covers
                log_caught("listen_failed", error, expected=LISTEN_FAULTS,
                           retry_in_s=backoff.next_s)
                await backoff.wait()
                continue
            backoff.reset()
            try:
                await self._listen_on(connection)
            except Exception as error:
                log_caught("listen_lost", error, expected=LISTEN_FAULTS)
            finally:
                self.listening = False
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(LISTEN_PROBE_TIMEOUT_S):
                        await connection.close()
            await asyncio.sleep(0.1)

    async def _listen_on(self, connection: asyncpg.Connection) -> None:
        closed = asyncio.Event()
        connection.add_termination_listener(lambda _connection: closed.set())
        await connection.add_listener(CHANNEL, lambda *_notification: self.poke())
        await connection.add_listener(CANCEL_CHANNEL, self._stop_requested)
        self.listening = True
        self.poke()  # whatever was committed while nobody listened
        while not closed.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(LISTEN_PROBE_S):
                    await closed.wait()
            if not closed.is_set():
                await connection.fetchval("SELECT 1", timeout=LISTEN_PROBE_TIMEOUT_S)
        log("listen_lost", level=logging.WARNING, error="connection closed")

    def _stop_requested(self, _connection: object, _pid: int, _channel: str,
                        payload: str) -> None:
        if self.on_stop is not None and payload.isdecimal():
            self.on_stop(int(payload))
