"""An import keeps the household's cap of child profiles across what is there already, and
restores its profiles and its stories in one transaction: all or nothing. Two imports (or
an import and an add) racing at the cap are serialised by the profiles' lock."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC

import asyncpg
import pytest

from app.db import connect_pool, migrate
from app.errors import Invalid
from app.queue.store import JobStore
from app.shelf.archive import BackupError
from app.shelf.backup import export_zip
from app.shelf.children import CHILDREN_MAX, Children
from app.shelf.imports import import_backup
from app.shelf.store import ShelfStore
from app.stories import Child
from tests.helpers.backups import document, entry, rows, run_cli, zipped
from tests.helpers.locks import wait_until_blocked
from tests.helpers.sql import fetch_val

pytestmark = pytest.mark.anyio


def profiles(count: int, name: str = "Child") -> list[Child]:
    return [Child(id=0, name=f"{name} {number}", age=5) for number in range(1, count + 1)]


def backup(children: list[Child], stories: int = 2) -> bytes:
    """A backup of a few stories and these child profiles."""
    entries = [entry(number) for number in range(stories, 0, -1)]
    children_json = [{"name": child.name, "age": child.age} for child in children]
    return zipped({"stories.json": json.dumps(document(entries) | {"children": children_json})
                   .encode()})


async def household(db) -> tuple[tuple[int, int], int]:
    """(stories, jobs) and how many profiles: what an import writes."""
    return await rows(db), await fetch_val(db, "SELECT count(*) FROM children")


async def test_a_second_import_past_the_cap_is_refused_in_one_line_and_changes_nothing(db):
    store = JobStore(db)
    first = await import_backup(store.db, backup(profiles(60, "Mia")))
    assert first.children_restored == 60
    before = await household(db)
    with pytest.raises(BackupError) as refused:
        await import_backup(store.db, backup(profiles(60, "Theo")))
    message = str(refused.value)
    assert "\n" not in message and "120" in message and str(CHILDREN_MAX) in message
    assert await household(db) == before  # neither its profiles nor its stories


async def test_profiles_already_here_do_not_count_twice_against_the_cap(db):
    store = JobStore(db)
    await import_backup(store.db, backup(profiles(60)))
    again = await import_backup(store.db, backup(profiles(100)))  # 60 of them here already
    assert again.children_restored == 40
    assert await fetch_val(db, "SELECT count(*) FROM children") == CHILDREN_MAX


async def test_the_households_own_export_restores_after_two_imports(db, second_installation):
    store = JobStore(db)
    await import_backup(store.db, backup(profiles(60, "Mia")))
    with pytest.raises(BackupError):
        await import_backup(store.db, backup(profiles(60, "Theo")))
    exported = await export_zip(ShelfStore(db), UTC)
    async with connect_pool(second_installation) as other:
        await migrate(other)
        restored = await import_backup(other, exported)
        assert await fetch_val(other, "SELECT count(*) FROM children") == 60
    assert (restored.restored, restored.children_restored) == (2, 60)


@pytest.mark.slow
async def test_the_command_line_refuses_an_import_past_the_cap_in_one_line(
    db, database_url, tmp_path
):
    await import_backup(db, backup(profiles(60, "Mia")))
    before = await household(db)
    file = tmp_path / "theo.zip"
    file.write_bytes(backup(profiles(60, "Theo")))
    result = await asyncio.to_thread(run_cli, database_url, tmp_path, "import", str(file))
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"import: {file}: this backup would take the household to 120")
    assert await household(db) == before


async def test_an_import_cut_off_while_restoring_profiles_leaves_no_story_either(
    db, database_url
):
    """The profiles are written in the stories' transaction: an import that dies among
    them (its connection gone) leaves the shelf as it was, stories included."""
    data = backup(profiles(3), stories=3)
    async with connect_pool(database_url) as holder, holder.transaction() as connection:
        await connection.execute("LOCK TABLE children IN EXCLUSIVE MODE")  # inserts wait
        importing = asyncio.create_task(import_backup(db, data))
        await wait_until_blocked(db, "import_child")
        await db.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                         " WHERE query LIKE '/* import\\_child */%'")
        with pytest.raises((asyncpg.PostgresError, asyncpg.InterfaceError)):  # its connection
            await importing
    assert await household(db) == ((0, 0), 0)


async def test_two_imports_racing_at_the_cap_cannot_both_pass(db, database_url):
    """One import holds the profiles' lock (its 60 not committed yet); the other waits on
    it, then counts them, and is refused."""
    async with connect_pool(database_url) as holder, holder.transaction() as connection:
        assert await Children(connection).restore(profiles(60, "Mia"), on=connection) == 60
        racing = asyncio.create_task(import_backup(db, backup(profiles(60, "Theo"))))
        await wait_until_blocked(db, "lock_children")
    with pytest.raises(BackupError, match="120"):
        await racing
    assert await household(db) == ((0, 0), 60)


async def test_an_add_racing_an_import_at_the_cap_waits_for_it_and_is_refused(
    db, database_url
):
    async with connect_pool(database_url) as holder, holder.transaction() as connection:
        await Children(connection).restore(profiles(CHILDREN_MAX), on=connection)
        adding = asyncio.create_task(Children(db).add(Child(id=0, name="One Too Many")))
        await wait_until_blocked(db, "lock_children")
    with pytest.raises(Invalid, match=f"up to {CHILDREN_MAX}"):
        await adding
    assert await fetch_val(db, "SELECT count(*) FROM children") == CHILDREN_MAX
