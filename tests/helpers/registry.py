"""Rows of the process registry (`workers`) for processes that lived on this host, made with
the app's own statement: a real pid that has exited (`dead_pid`), or a live one.

    boot_id = await register_dead_process(store)     # this host, its pid no longer alive
"""

from __future__ import annotations

import socket
import subprocess
import sys
import uuid

from app.queue.processes import ProcessRegistry
from app.queue.store import JobStore


def dead_pid() -> int:
    """The pid of a real process that has run and exited (and been reaped: a zombie's pid
    still answers signal 0)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait(timeout=30)
    return process.pid


async def register_process(store: JobStore, pid: int, *, host: str | None = None,
                           boot_id: uuid.UUID | None = None) -> uuid.UUID:
    """A registered, not stopped process with this pid, on this host unless `host`."""
    boot_id = boot_id or uuid.uuid4()
    await ProcessRegistry(store.db).register(boot_id, host=host or socket.gethostname(), pid=pid,
                                 concurrency=1)
    return boot_id


async def register_dead_process(store: JobStore, *, boot_id: uuid.UUID | None = None,
                                host: str | None = None) -> uuid.UUID:
    """A process registered on this host (unless `host`) that died without stopping."""
    return await register_process(store, dead_pid(), host=host, boot_id=boot_id)
