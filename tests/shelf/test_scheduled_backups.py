"""Scheduled backups: once per turn whichever number of processes run, the download's own
zip, the newest BACKUP_KEEP of the app's files kept (no other file touched), and a failure
logged once and shown on every process's home page until a backup succeeds."""

from __future__ import annotations

import asyncio
import errno
import io
import logging
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest

from app.db import connect_pool
from app.queue.store import JobStore
from app.shelf.backup_files import BACKUP_FILE, backup_name, failure_cause, failure_reason
from app.shelf.schedule import Schedules
from app.shelf.scheduled import BACKUP_SCHEDULE, FAILURE_CAUSES, ScheduledBackups
from app.shelf.store import ShelfStore
from tests.helpers.app import serve
from tests.helpers.backups import a_shelf, stories_json
from tests.helpers.sql import fetch_one, fetch_val

pytestmark = pytest.mark.anyio

HOUR_S = 3600.0


def backups_of(db, folder: Path, *, every_s: float = HOUR_S, keep: int = 14) -> ScheduledBackups:
    """One process's scheduled backups, on its own pool `db`."""
    return ScheduledBackups(Schedules(db), ShelfStore(db), folder=folder, every_s=every_s,
                            keep=keep, timezone=UTC)


def app_backups(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if BACKUP_FILE.fullmatch(p.name))


async def make_due(db) -> None:
    """The turn comes round (as the interval passing would make it)."""
    await db.execute(f"UPDATE schedules SET next_at = now() WHERE name = '{BACKUP_SCHEDULE}'")


def backup_errors(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records
            if r.levelno == logging.ERROR and "event=backup_failed" in r.getMessage()]


@pytest.mark.slow
async def test_two_processes_sharing_a_database_write_one_backup_per_turn_between_them(
    db, database_url, tmp_path
):
    await a_shelf(JobStore(db))
    folders = [tmp_path / "a", tmp_path / "b"]
    for folder in folders:
        folder.mkdir()
    async with connect_pool(database_url) as other:
        first, second = backups_of(db, folders[0]), backups_of(other, folders[1])
        await asyncio.gather(first.schedules.ensure(BACKUP_SCHEDULE, every_s=HOUR_S),
                             second.schedules.ensure(BACKUP_SCHEDULE, every_s=HOUR_S))
        for turn in range(1, 4):
            # Both look at once, as many times as they like: one writes the turn's backup.
            await asyncio.gather(first.tick(), second.tick(), first.tick(), second.tick())
            written = app_backups(folders[0]) + app_backups(folders[1])
            assert len(written) == turn, written
            await asyncio.sleep(1.01)  # the next turn's file is named by a later second
            await make_due(db)
    assert await fetch_val(db, "SELECT count(*) FROM schedules") == 1


async def test_the_claim_gives_a_due_turn_to_one_of_two_racing_processes(db, database_url):
    """Held on a row lock, both claims wait; released, one wins and the other gets no row."""
    schedules = Schedules(db)
    await schedules.ensure(BACKUP_SCHEDULE, every_s=HOUR_S)
    async with connect_pool(database_url) as other:
        holder = await asyncpg.connect(database_url)
        try:
            transaction = holder.transaction()
            await transaction.start()
            await holder.execute("SELECT 1 FROM schedules WHERE name = $1 FOR UPDATE",
                                 BACKUP_SCHEDULE)
            claims = [asyncio.create_task(Schedules(pool).claim(BACKUP_SCHEDULE))
                      for pool in (db, other)]
            while await fetch_val(db, "SELECT count(*) FROM pg_stat_activity"
                                  " WHERE wait_event_type = 'Lock'"
                                  " AND query LIKE '/* claim\\_schedule */%'") < 2:
                await asyncio.sleep(0.01)
            await transaction.commit()
            turns = await asyncio.gather(*claims)
        finally:
            await holder.close()
    assert sum(turn is not None for turn in turns) == 1
    won = next(turn for turn in turns if turn is not None)
    assert HOUR_S - 5 < won.due_in_s <= HOUR_S
    assert await schedules.claim(BACKUP_SCHEDULE) is None  # not due again for an hour


async def test_a_late_turn_keeps_to_the_schedule_and_an_outage_brings_no_burst(db):
    schedules = Schedules(db)
    await schedules.ensure(BACKUP_SCHEDULE, every_s=HOUR_S)
    await db.execute("UPDATE schedules SET next_at = now() - interval '10 hours 20 minutes'")
    turn = await schedules.claim(BACKUP_SCHEDULE)
    assert turn is not None and 39 * 60 - 5 < turn.due_in_s <= 40 * 60  # on the grid
    assert await schedules.claim(BACKUP_SCHEDULE) is None


async def test_a_turn_left_by_a_process_that_died_is_taken_again_after_its_lease(db):
    """Claimed, then neither done nor failed (its process died writing it): after the
    lease another process takes it, the schedule's next turn where it was; a turn that
    was done (or failed) is not taken again."""
    schedules = Schedules(db)
    await schedules.ensure(BACKUP_SCHEDULE, every_s=24 * HOUR_S)
    left = await schedules.claim(BACKUP_SCHEDULE)  # ... and its process dies
    assert left is not None
    next_at = await fetch_val(db, "SELECT next_at FROM schedules")
    assert await schedules.claim(BACKUP_SCHEDULE) is None  # within the lease: still its own
    await db.execute("UPDATE schedules SET claimed_at = claimed_at - interval '31 minutes'")
    again = await schedules.claim(BACKUP_SCHEDULE)  # the default lease, passed
    assert again is not None and again.claimed_at > left.claimed_at
    assert await fetch_val(db, "SELECT next_at FROM schedules") == next_at
    await schedules.succeeded(BACKUP_SCHEDULE, again, file="bedtime-stories.zip")
    assert await schedules.claim(BACKUP_SCHEDULE, lease_s=0) is None  # done: nothing left
    await db.execute("UPDATE schedules SET last_ok_at = NULL")  # left again, this time
    failing = await schedules.claim(BACKUP_SCHEDULE, lease_s=0)
    assert failing is not None
    await schedules.failed(BACKUP_SCHEDULE, failing, reason="the disk is full")
    assert await schedules.claim(BACKUP_SCHEDULE, lease_s=0) is None  # failed: said so


async def test_a_changed_interval_takes_effect_at_the_next_start_and_a_restart_changes_nothing(
    db,
):
    schedules = Schedules(db)
    await schedules.ensure(BACKUP_SCHEDULE, every_s=24 * HOUR_S)
    assert await schedules.claim(BACKUP_SCHEDULE) is not None  # the first, at once
    assert await schedules.due_in_s(BACKUP_SCHEDULE) > 23.9 * HOUR_S
    await schedules.ensure(BACKUP_SCHEDULE, every_s=24 * HOUR_S)  # a restart
    assert await schedules.due_in_s(BACKUP_SCHEDULE) > 23.9 * HOUR_S
    await schedules.ensure(BACKUP_SCHEDULE, every_s=36)  # BACKUP_EVERY_H=0.01, deployed
    assert 30 < await schedules.due_in_s(BACKUP_SCHEDULE) <= 36
    # An older process still running follows the row: the turn after is 36 s on, too.
    await db.execute("UPDATE schedules SET next_at = now()")
    turn = await schedules.claim(BACKUP_SCHEDULE)
    assert turn is not None and 35 < turn.due_in_s <= 36


async def test_the_scheduled_backup_is_the_zip_the_download_serves(make_app, db, tmp_path):
    await a_shelf(JobStore(db))
    async with serve(make_app()) as client:
        download = (await client.get("/stories/backup.zip")).content
    backups = backups_of(db, tmp_path)
    await backups.schedules.ensure(BACKUP_SCHEDULE, every_s=HOUR_S)
    before = datetime.now(UTC).replace(microsecond=0)
    await backups.tick()
    [name] = [p.name for p in tmp_path.iterdir()]  # no temporary file left behind
    assert BACKUP_FILE.fullmatch(name)
    stamp = datetime.strptime(name, "bedtime-stories-%Y%m%dT%H%M%SZ.zip").replace(tzinfo=UTC)
    assert before <= stamp <= datetime.now(UTC)
    written = (tmp_path / name).read_bytes()
    with zipfile.ZipFile(io.BytesIO(written)) as ours, zipfile.ZipFile(io.BytesIO(download)) as dl:
        assert ours.namelist() == dl.namelist()
        for member in ours.namelist():
            if member != "stories.json":
                assert ours.read(member) == dl.read(member), member
    ours_json, download_json = stories_json(written), stories_json(download)
    ours_json.pop("exported_at"), download_json.pop("exported_at")
    assert ours_json == download_json and ours_json["count"] == 3
    state = await backups.schedules.state(BACKUP_SCHEDULE)
    assert state is not None and state.last_file == name and state.last_error is None


async def test_only_the_newest_backups_are_kept_and_no_other_file_is_touched(db, tmp_path):
    old = [backup_name(datetime(year, 1, 1, tzinfo=UTC)) for year in (2020, 2021, 2022)]
    others = [
        "notes.txt",
        "bedtime-stories-2026-11-29.zip",  # a download's name
        "bedtime-stories-20200101T000000Z.zip.bak",
        "my-bedtime-stories-20200101T000000Z.zip",
        "bedtime-stories-20200101T000000.zip",
        "bedtime-stories-2020010T000000Z.zip",
    ]
    for name in old + others:
        (tmp_path / name).write_bytes(b"kept as it is")
    (tmp_path / "bedtime-stories-20190101T000000Z.zip").mkdir()  # a folder, not a file
    backups = backups_of(db, tmp_path, keep=2)
    await backups.schedules.ensure(BACKUP_SCHEDULE, every_s=HOUR_S)
    await backups.tick()
    kept = app_backups(tmp_path)
    assert len(kept) == 3 and kept[:2] == ["bedtime-stories-20190101T000000Z.zip", old[2]]
    assert kept[2].startswith(f"bedtime-stories-{datetime.now(UTC).year}")
    for name in others:
        assert (tmp_path / name).read_bytes() == b"kept as it is", name


async def test_a_failing_folder_logs_one_error_and_every_home_page_says_so_until_a_backup_succeeds(
    make_app, db, tmp_path, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    folder = tmp_path / "volume"
    backups = backups_of(db, folder)  # another process, with BACKUP_DIR
    await backups.schedules.ensure(BACKUP_SCHEDULE, every_s=HOUR_S)
    async with serve(make_app()) as client:  # this one has none: its page says so too
        assert "The last backup failed" not in (await client.get("/")).text

        await backups.tick()
        [error] = backup_errors(caplog)
        assert f'reason="the folder {folder} does not exist"' in error.getMessage()
        page = (await client.get("/")).text
        # Plain words for the family: the folder's path is the log's, for whoever runs the app.
        assert ("The last backup failed: its folder cannot be found. "
                "Last good backup: never.") in page
        assert str(tmp_path) not in page

        folder.mkdir()
        await make_due(db)
        await backups.tick()
        assert "The last backup failed" not in (await client.get("/")).text
        state = await backups.schedules.state(BACKUP_SCHEDULE)
        assert state is not None and state.last_ok_at is not None
        good = f"{state.last_ok_at.day} {state.last_ok_at:%B} {state.last_ok_at:%Y, %H:%M}"

        folder.rename(tmp_path / "elsewhere")
        folder.write_text("a file where the folder was")
        await make_due(db)
        await backups.tick()
        assert len(backup_errors(caplog)) == 2  # one line each
        page = (await client.get("/")).text
        assert ("The last backup failed: its folder cannot be found. "
                f"Last good backup: {good}.") in page
        assert str(tmp_path) not in page
    assert len(app_backups(tmp_path / "elsewhere")) == 1


async def test_a_schedule_no_process_keeps_any_more_says_nothing(make_app, db, tmp_path):
    backups = backups_of(db, tmp_path / "missing")
    await backups.schedules.ensure(BACKUP_SCHEDULE, every_s=HOUR_S)
    await backups.tick()
    assert await backups.schedules.state(BACKUP_SCHEDULE) is not None
    # BACKUP_DIR was unset everywhere: nobody claims, and after an interval the row is old.
    await db.execute("UPDATE schedules SET next_at = now() - interval '61 minutes'")
    async with serve(make_app()) as client:
        assert "The last backup failed" not in (await client.get("/")).text


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (errno.ENOSPC, "the disk is full"),
        (errno.EACCES, "no permission to write in /backups"),
        (errno.EPERM, "no permission to write in /backups"),
        (errno.ENOENT, "the folder /backups does not exist"),
        (errno.ENOTDIR, "/backups is not a folder"),
        (errno.EROFS, "the disk of /backups is read-only"),
    ],
)
def test_a_failure_is_said_in_a_short_phrase(code, reason):
    assert failure_reason(OSError(code, "strerror"), Path("/backups")) == reason


@pytest.mark.parametrize(("code", "cause"), [
    (errno.ENOSPC, "disk_full"), (errno.EACCES, "no_permission"),
    (errno.ENOENT, "folder_missing"), (errno.ENOTDIR, "folder_missing"),
    (errno.EROFS, "read_only"), (errno.EIO, "not_written"),
])
def test_the_page_is_told_a_cause_each_said_in_plain_words(code, cause):
    assert failure_cause(OSError(code, "strerror")) == cause
    assert cause in FAILURE_CAUSES


async def test_every_process_with_a_backup_folder_runs_the_schedule_from_start_to_stop(
    make_app, db, tmp_path, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    await a_shelf(JobStore(db))
    async with serve(make_app(backup_dir=tmp_path, backup_every_h=1)) as client:
        for _ in range(200):  # the first backup is due at once
            if app_backups(tmp_path):
                break
            await asyncio.sleep(0.05)
        assert len(app_backups(tmp_path)) == 1
        assert (await client.get("/healthz")).status_code == 200
    row = await fetch_one(db, "SELECT every_s, last_error FROM schedules")
    assert row["every_s"] == HOUR_S and row["last_error"] is None
    assert "event=backups_scheduled" in caplog.text


async def test_an_unusable_backup_folder_is_said_at_start_up_and_start_up_goes_on(
    make_app, tmp_path, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    folder = tmp_path / "not-mounted"
    async with serve(make_app(backup_dir=folder)) as client:
        assert (await client.get("/healthz")).status_code == 200
        assert (await client.get("/stories")).status_code == 200
    [line] = [r.getMessage() for r in caplog.records
              if "event=backup_folder_unusable" in r.getMessage()]
    assert f'reason="the folder {folder} does not exist"' in line
