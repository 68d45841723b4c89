"""The processes sharing the database (the `workers` table): the only code that knows the
names of their queries (sql/queries/processes.sql). A process registers at start, beats
while it lives and stops at shutdown (app/queue/liveness.py); one starting on a host marks
as gone those of its host whose pids are no longer alive, so their jobs are adopted or
swept at once (the job store's "its owner found gone").

    processes = ProcessRegistry(db)
    await processes.register(boot_id, host="web-1", pid=4242, concurrency=2)
    for boot_id, pid in await processes.on_host("web-1", besides=mine): ...
"""

from __future__ import annotations

import uuid

from app.queries import Statements


class ProcessRegistry(Statements):
    """`db`: the pool, or one connection whose open transaction every statement joins."""

    async def register(
        self, boot_id: uuid.UUID, *, host: str, pid: int, concurrency: int
    ) -> None:
        await self._val(
            "register_process",
            {"boot_id": boot_id, "host": host, "pid": pid, "concurrency": concurrency},
        )

    async def beat(self, boot_id: uuid.UUID) -> bool:
        """False when the row is gone (pruned while this process could not beat)."""
        return await self._val("beat_process", {"boot_id": boot_id}) is not None

    async def stop(self, boot_id: uuid.UUID) -> None:
        await self._val("stop_process", {"boot_id": boot_id})

    async def on_host(
        self, host: str, *, besides: uuid.UUID
    ) -> list[tuple[uuid.UUID, int]]:
        """(boot id, pid) of the processes registered on `host` that neither stopped nor
        were found gone, `besides` aside (the caller itself)."""
        rows = await self._all("processes_on_host", {"host": host, "boot_id": besides})
        return [(row["boot_id"], row["pid"]) for row in rows]

    async def mark_gone(self, boot_id: uuid.UUID, *, host: str) -> bool:
        """Record that the process's pid is no longer alive on `host`; False when it had
        stopped cleanly or was found gone already."""
        return await self._val("mark_process_gone", {"boot_id": boot_id, "host": host}) \
            is not None

    async def prune(self) -> int:
        """Forget processes silent for a week; how many."""
        return len(await self._all("prune_processes"))
