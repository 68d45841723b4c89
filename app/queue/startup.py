"""What a process does on the database before anything else: the schema migrated, this
host's dead processes found, and one sweep, waiting a while for a database that is still
starting (a PaaS may start the app and its database together).

    first_sweep = await reconcile(db, liveness, sweeper)   # then register, then the tasks

The first sweep judges the past before this process counts as a live worker: a job that
waited past the threshold while nothing could run it is not run now.
"""

from __future__ import annotations

import logging

from app.backoff import Backoff
from app.db import DATABASE_UNAVAILABLE, Pool, migrate
from app.logs import log
from app.queue.liveness import ProcessLiveness
from app.queue.sweeper import Sweeper, SweepResult

# At start-up, wait this long for the database to answer before giving up.
STARTUP_DATABASE_WAIT_S = 30.0


async def reconcile(db: Pool, liveness: ProcessLiveness, sweeper: Sweeper) -> SweepResult:
    """Migrate and sweep once, retrying while the database is unreachable, for at most
    STARTUP_DATABASE_WAIT_S; then the error is logged and raised."""
    backoff = Backoff(0.5, max_s=5.0, patience_s=STARTUP_DATABASE_WAIT_S)
    while True:
        try:
            await migrate(db)
            # This host's dead processes first: the sweep and the first claims then
            # take their jobs as the dead's at once.
            await liveness.find_gone_on_this_host()
            return await sweeper.sweep()
        except DATABASE_UNAVAILABLE as error:
            if backoff.next_s > backoff.time_left_s:  # the wait would pass the deadline
                log("startup_failed", level=logging.ERROR, reason="database unreachable",
                    error=repr(error))
                raise
            log("database_waiting", level=logging.WARNING, retry_in_s=backoff.next_s,
                error=repr(error))
            await backoff.wait()
