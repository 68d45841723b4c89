"""This process's row in the `workers` table: proof, for every other process, that it lives.

    liveness = ProcessLiveness(ProcessRegistry(db), boot_id, concurrency=1, interval_s=5)
    await liveness.find_gone_on_this_host()         # at start-up, before the first sweep
    await liveness.register()
    task = asyncio.create_task(liveness.run(on_gone))  # beats, and looks, every interval
    await liveness.stop()                           # a clean shutdown, recorded

The sweeper of any process reads these rows: a waiting job may expire only when no
process that runs jobs has been alive for the whole threshold.

A process starting on a host, and every live one at each beat, marks as gone every process
registered on that host whose pid is no longer alive there (a kill -9, a crash): its
running jobs need not wait for their heartbeats to go stale, so a story paid for already
is adopted at once. "The same
host" is the hostname alone, which the usual platforms (Heroku, Render, Fly, Docker) give
each container of its own. Heroku's `DYNO` is not used: with preboot the old `web.1` still
runs, in another container, while the new `web.1` starts, and that container's pids look
dead from here. A wrong guess would cost no second bill (the old owner's next save finds
the job adopted and it stops, `job_lost`), and a process wrongly found gone registers
again at its next beat; the hostname simply avoids making one.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Callable

from app.db import DATABASE_UNAVAILABLE
from app.logs import log, log_caught
from app.queue.processes import ProcessRegistry


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid lives on this host (signal 0 checks, sends nothing).
    A pid reused since by another process looks alive: its owner is then judged by its
    heartbeat, as on another host."""
    if pid <= 0:  # not one process (0 and below name process groups): nothing to judge
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


class ProcessLiveness:
    def __init__(
        self, processes: ProcessRegistry, boot_id: uuid.UUID, *, concurrency: int, interval_s: float
    ) -> None:
        self.processes = processes
        self.boot_id = boot_id
        self.concurrency = concurrency
        self.interval_s = interval_s
        self.host = socket.gethostname()

    async def register(self) -> None:
        await self.processes.register(
            self.boot_id, host=self.host, pid=os.getpid(), concurrency=self.concurrency,
        )

    async def find_gone_on_this_host(self) -> list[uuid.UUID]:
        """Mark as gone the processes registered on this host (this one aside) whose pid
        is no longer alive: their boot ids. (A pid alive again, such as this process's own
        in a restarted container, proves nothing: that owner is judged by its heartbeat.)"""
        gone = []
        for boot_id, pid in await self.processes.on_host(self.host, besides=self.boot_id):
            if pid_alive(pid):
                continue
            if await self.processes.mark_gone(boot_id, host=self.host):
                gone.append(boot_id)
                log("process_found_gone", level=logging.WARNING, boot_id=boot_id, pid=pid,
                    host=self.host)
        return gone

    async def run(self, on_gone: Callable[[], None] | None = None) -> None:
        """Beat every interval, and look for this host's dead processes at each beat: a
        sibling killed beside this one (the OOM killer, kill -9) and not restarted has its
        jobs taken within a beat, not after its heartbeat goes stale. `on_gone` is called
        when one was found (the sweeper and the worker look at once)."""
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                if not await self.processes.beat(self.boot_id):
                    # Pruned while this process could not beat, or found gone wrongly.
                    log("process_registered_again", level=logging.WARNING,
                        boot_id=self.boot_id)
                    await self.register()
                if await self.find_gone_on_this_host() and on_gone is not None:
                    on_gone()
            except Exception as error:  # a database blip; the next beat may get through
                log_caught("process_heartbeat_failed", error, expected=DATABASE_UNAVAILABLE)

    async def stop(self) -> None:
        try:
            await self.processes.stop(self.boot_id)
        except Exception as error:  # its heartbeat goes stale instead: the same in the end
            log_caught("process_stop_not_recorded", error, expected=DATABASE_UNAVAILABLE)
