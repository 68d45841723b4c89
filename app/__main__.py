"""The command line.

    python -m app            # serve (the same as `python -m app serve`), on $PORT
    python -m app worker     # run jobs and the sweeper, serve no HTTP (a Procfile worker:)
    python -m app migrate    # apply pending migrations (the Procfile's release step)
    python -m app check      # report broken invariants; exit status 1 if any
    python -m app spend      # the month's spending against MONTHLY_BUDGET, in one table
    python -m app export [FILE]   # every story, as a zip (Markdown + stories.json)
    python -m app import FILE     # restore a backup zip, whole or not at all; stories
                                  # already here are skipped
    python -m app languages       # the languages with a catalogue (make messages)
    python -m app --version       # the version this is
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import asyncpg

from app.config import Settings, load_settings
from app.config_values import ConfigError
from app.dates import file_day
from app.db import DATABASE_UNAVAILABLE, Pool, connect_pool, database_url, migrate
from app.languages import TRANSLATED
from app.queue.check import check_invariants
from app.shelf.store import ShelfStore
from app.version import version

if TYPE_CHECKING:
    from app.shelf.imports import ImportResult

T = TypeVar("T")
# What a database nobody has migrated yet answers a command's first statement: the table,
# column or function (sql/functions/) is not there.
NOT_MIGRATED = (
    asyncpg.UndefinedTableError, asyncpg.UndefinedColumnError, asyncpg.UndefinedFunctionError,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app", description="Bedtime Stories")
    parser.add_argument("--version", action="version", version=f"bedtime-stories {version()}")
    parser.add_argument(
        "command", nargs="?", default="serve",
        choices=["serve", "worker", "migrate", "check", "spend", "export", "import",
                 "languages"],
    )
    parser.add_argument("file", nargs="?", help="export: the zip to write (default: "
                        "bedtime-stories-DATE.zip here); import: the backup to restore")
    args = parser.parse_args(argv)
    if args.command == "import" and not args.file:
        parser.error("import needs the backup FILE to restore")
    if args.file and args.command not in ("export", "import"):
        parser.error(f"{args.command} takes no FILE")
    if args.command == "languages":  # no settings needed: the records are the app's own
        print("\n".join(TRANSLATED))
        return 0
    try:
        settings = load_settings()
    except ConfigError as error:
        print(f"configuration error: {error}", file=sys.stderr)
        return 2
    if args.command == "migrate":
        return asyncio.run(run_migrations(settings))
    if args.command == "check":
        return asyncio.run(run_check(settings))
    if args.command == "spend":
        return asyncio.run(run_spend(settings))
    if args.command == "worker":
        return asyncio.run(run_worker(settings))
    if args.command == "export":
        return asyncio.run(run_export(settings, args.file))
    if args.command == "import":
        return asyncio.run(run_import(settings, args.file))
    return serve(settings)


# uvicorn's own wait for open connections at shutdown; the running jobs then get
# SHUTDOWN_GRACE_S (25 s), so the whole stop stays inside a PaaS's 30 s.
GRACEFUL_SHUTDOWN_S = 3


def serve(settings: Settings) -> int:
    """Without a password or ALLOW_OPEN only this machine is served, so listen only there."""
    import uvicorn

    from app.logs import log, setup_logging

    setup_logging()
    open_to_network = bool(settings.household_password or settings.allow_open)
    host = "0.0.0.0" if open_to_network else "127.0.0.1"
    log("listening", host=host, port=settings.port,
        note="all interfaces" if open_to_network
        else "this computer only: set HOUSEHOLD_PASSWORD to use it from a tablet")
    uvicorn.run("app.main:app", host=host, port=settings.port, proxy_headers=True,
                timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S)
    return 0


async def run_worker(settings: Settings) -> int:
    """Jobs and the sweeper with no HTTP server, until SIGTERM or SIGINT."""
    from app.logs import log, setup_logging
    from app.runtime import running_services

    setup_logging()
    received: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def on_signal(name: str) -> None:  # the first signal's name; a second changes nothing
        if not received.done():
            received.set_result(name)

    for signum in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(signum, on_signal, signum.name)
    try:
        async with running_services(settings):
            log("shutdown_requested", signal=await received)
    except DATABASE_UNAVAILABLE as error:
        print(f"worker: the database is unreachable: {error}", file=sys.stderr)
        return 1
    return 0


async def with_database(
    settings: Settings, command: str, work: Callable[[Pool], Awaitable[T]]
) -> T | None:
    """Run `work` on a connected pool; None (and one line on stderr) if the database is down
    or not migrated yet."""
    db = connect_pool(database_url(settings.database_url, settings.data_dir),
                      max_size=settings.database_pool_max, pgbouncer=settings.pgbouncer)
    try:
        await db.connect()
        return await work(db)
    except DATABASE_UNAVAILABLE as error:
        print(f"{command}: the database is unreachable: {error}", file=sys.stderr)
        return None
    except NOT_MIGRATED as error:  # the server's message alone: its HINT is a second line
        print(f"{command}: the database is not migrated ({error.message});"
              " run `python -m app migrate` first", file=sys.stderr)
        return None
    finally:
        await db.close()


async def run_migrations(settings: Settings) -> int:
    applied = await with_database(settings, "migrate", migrate)
    if applied is None:
        return 1
    print(f"migrate: {len(applied)} applied" + (f" ({', '.join(applied)})" if applied else ""))
    return 0


async def run_check(settings: Settings) -> int:
    report = await with_database(
        settings, "check", lambda db: check_invariants(db, settings)
    )
    if report is None:
        return 2
    print(report.format())
    return 1 if report.broken else 0


async def run_spend(settings: Settings) -> int:
    from app.money.ledger import Ledger, spend_table
    from app.runtime import meter_for

    meter = meter_for(settings)
    await asyncio.to_thread(meter.warm)
    month = await with_database(settings, "spend", lambda db: Ledger(db).month(meter))
    if month is None:
        return 2
    print(spend_table(month, meter.month_start().strftime("%B %Y"), settings.timezone))
    return 0


async def run_export(settings: Settings, file: str | None) -> int:
    """Write every story to a zip (after migrating, so any installation can export)."""
    from app.shelf.backup import export_zip

    async def export(db: Pool) -> bytes:
        await migrate(db)
        return await export_zip(ShelfStore(db), settings.tz)

    data = await with_database(settings, "export", export)
    if data is None:
        return 1
    path = Path(file or f"bedtime-stories-{file_day(datetime.now(UTC), settings.tz)}.zip")
    try:
        path.write_bytes(data)
    except OSError as error:
        print(f"export: cannot write {path}: {error.strerror}", file=sys.stderr)
        return 1
    print(f"export: wrote {path} ({len(data)} bytes)")
    return 0


async def run_import(settings: Settings, file: str) -> int:
    """Restore a backup, whole or not at all: stories already here (by their stable id)
    are skipped; a file with any story that is not valid writes nothing, and one line
    says which story, and why."""
    from app.shelf.archive import BackupError
    from app.shelf.backup_reading import check_backup
    from app.shelf.imports import import_backup

    try:
        with open(file, "rb") as backup:
            check_backup(backup)  # before the database: a file refused needs none

            async def restore(db: Pool) -> ImportResult:
                await migrate(db)
                return await import_backup(db, backup)

            result = await with_database(settings, "import", restore)
    except OSError as error:
        print(f"import: cannot read {file}: {error.strerror}", file=sys.stderr)
        return 1
    except BackupError as error:
        print(f"import: {file}: {error}", file=sys.stderr)
        return 1
    if result is None:
        return 1
    print(f"import: {result.restored} restored, {result.already_here} already here")
    return 0


if __name__ == "__main__":
    sys.exit(main())
