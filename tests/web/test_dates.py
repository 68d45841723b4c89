"""A story whose date cannot be shown in the household's time zone still shows everywhere
(issue 20, item 3): at the edges of the calendar, where the local time would be year 10000
or year 0, every page, download and export still answers, with the date as stored in UTC."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import asyncpg
import pytest

from app.queue.store import JobStore
from app.shelf.store import ShelfStore
from tests.helpers.app import ACCEPT_JSON, serve
from tests.helpers.shelving import shelve
from tests.helpers.sql import execute, fetch_one

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]

# (stored created_at, household time zone): each one's local time falls outside years 1-9999.
EDGES = [
    pytest.param("9999-12-31T23:30Z", "Europe/Paris", id="year-10000-in-paris"),
    pytest.param("0001-01-01T01:00Z", "America/New_York", id="year-0-in-new-york"),
    # The last and first moments the database keeps (migration 015 refuses any beyond).
    pytest.param("9999-12-31T23:59:59.999999Z", "Pacific/Kiritimati", id="last-moment-at-+14"),
    pytest.param("0001-01-01T00:00:00Z", "Pacific/Niue", id="first-moment-at-11"),
]


@pytest.mark.parametrize("moment", ["infinity", "-infinity", "10000-01-01T00:00Z",
                                    "0044-03-15T12:00Z BC"])
@pytest.mark.slow
async def test_a_moment_the_app_could_not_read_back_is_never_stored(db, moment):
    story_id = await shelve(JobStore(db), "edge", title="The Last Night")
    with pytest.raises(asyncpg.CheckViolationError):
        await shelve_at_id(db, story_id, moment)
    with pytest.raises(asyncpg.CheckViolationError):
        await execute(db, "UPDATE story_jobs SET created_at = CAST(CAST(:at AS text) AS"
                          " timestamptz)", {"at": moment})


async def shelve_at(db, created_at: str) -> int:
    """A story on the shelf, then its created_at set to `created_at` directly."""
    story_id = await shelve(JobStore(db), "edge", title="The Last Night", child_name="Mia")
    await shelve_at_id(db, story_id, created_at)
    return story_id


async def shelve_at_id(db, story_id: int, created_at: str) -> None:
    await execute(db, "UPDATE stories SET created_at = CAST(CAST(:at AS text) AS timestamptz)"
                      " WHERE id = :id", {"at": created_at, "id": story_id})


def run_cli(database_url: str, cwd: Path, timezone: str,
            *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m app ...` against this test's database, in the household's time zone."""
    env = {**os.environ, "DATABASE_URL": database_url, "PYTHONPATH": str(REPO), "TZ": timezone}
    for name in ("OPENAI_API_KEY", "HOUSEHOLD_PASSWORD", "STORYTELLER"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("created_at", "timezone"), EDGES)
@pytest.mark.slow
async def test_every_page_shows_a_story_dated_at_the_edge_of_the_calendar(
    make_app, db, created_at, timezone
):
    story_id = await shelve_at(db, created_at)
    async with serve(make_app(timezone=timezone), from_own_pages=True) as client:
        for path in ("/", "/stories", f"/stories/{story_id}"):
            page = await client.get(path)
            assert page.status_code == 200, path
            assert "The Last Night" in page.text, path

        api = await client.get(f"/stories/{story_id}", headers=ACCEPT_JSON)
        assert api.status_code == 200 and api.json()["created_at"].endswith("Z")
        listing = await client.get("/stories", headers=ACCEPT_JSON)
        assert listing.status_code == 200 and listing.json()["stories"][0]["created_at"]

        markdown = await client.get(f"/stories/{story_id}/markdown")
        assert markdown.status_code == 200
        assert markdown.text.startswith("# The Last Night\n") and "- Written: " in markdown.text
        assert '-the-last-night-' in markdown.headers["content-disposition"]

        backup = await client.get("/stories/backup.zip")
        assert backup.status_code == 200
        with zipfile.ZipFile(io.BytesIO(backup.content)) as archive:
            document = json.loads(archive.read("stories.json"))
            assert document["count"] == 1
            assert archive.read(document["stories"][0]["file"]).startswith(b"# The Last Night")


@pytest.mark.parametrize(("created_at", "timezone"), EDGES)
async def test_recently_deleted_shows_a_story_dated_at_the_edge_of_the_calendar(
    make_app, db, created_at, timezone
):
    story_id = await shelve_at(db, created_at)
    await ShelfStore(db).delete_story(story_id)
    async with serve(make_app(timezone=timezone), from_own_pages=True) as client:
        page = await client.get("/stories/deleted")
        assert page.status_code == 200 and "The Last Night" in page.text


@pytest.mark.slow
async def test_a_date_past_local_year_9999_is_shown_as_stored_in_utc(make_app, db):
    story_id = await shelve_at(db, "9999-12-31T23:30Z")
    async with serve(make_app(timezone="Europe/Paris"), from_own_pages=True) as client:
        page = (await client.get(f"/stories/{story_id}")).text
        library = (await client.get("/stories")).text
        markdown = await client.get(f"/stories/{story_id}/markdown")
    assert '<time datetime="9999-12-31T23:30:00Z">31 December 9999</time>' in page
    assert "31 December 9999, 23:30 UTC" in library
    assert "- Written: 31 December 9999, 23:30 UTC" in markdown.text
    assert 'filename="9999-12-31-2330-the-last-night-' in markdown.headers[
        "content-disposition"]


@pytest.mark.parametrize(("created_at", "timezone"), EDGES)
@pytest.mark.slow
async def test_the_command_line_exports_a_story_dated_at_the_edge_of_the_calendar(
    db, database_url, tmp_path, created_at, timezone
):
    await shelve_at(db, created_at)
    backup = tmp_path / "family.zip"
    exported = run_cli(database_url, tmp_path, timezone, "export", str(backup))
    assert exported.returncode == 0, exported.stderr
    with zipfile.ZipFile(backup) as archive:
        assert json.loads(archive.read("stories.json"))["count"] == 1


async def test_moments_stored_out_of_range_before_migration_015_are_clamped(db):
    story_id = await shelve(JobStore(db), "edge", title="The Last Night")
    await execute(db, "ALTER TABLE stories DROP CONSTRAINT stories_created_at_readable,"
                      " DROP CONSTRAINT stories_deleted_at_readable")
    await execute(db, "ALTER TABLE story_jobs DROP CONSTRAINT story_jobs_dates_readable")
    await shelve_at_id(db, story_id, "infinity")
    await execute(db, "UPDATE story_jobs SET completed_at = '-infinity'")
    migration = REPO / "sql" / "migrations" / "015_dates_in_range.sql"
    async with db.transaction() as connection:
        await connection.execute(migration.read_text())
    row = await fetch_one(db, "SELECT s.created_at::text AS made, j.completed_at::text AS done"
                              " FROM stories s JOIN story_jobs j ON j.id = s.job_id")
    assert row["made"].startswith("9999-12-31 23:59:59.999999")
    assert row["done"].startswith("0001-01-01 00:00:00")
