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

import pytest

from app.queue.store import JobStore
from app.shelf.store import ShelfStore
from tests.helpers.app import ACCEPT_JSON, serve
from tests.helpers.shelving import shelve
from tests.helpers.sql import execute

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]

# (stored created_at, household time zone): each one's local time falls outside years 1-9999.
EDGES = [
    pytest.param("9999-12-31T23:30Z", "Europe/Paris", id="year-10000-in-paris"),
    pytest.param("0001-01-01T01:00Z", "America/New_York", id="year-0-in-new-york"),
    # asyncpg reads PostgreSQL's infinities as datetime.max and datetime.min, in UTC.
    pytest.param("infinity", "Europe/Paris", id="infinity-in-paris"),
    pytest.param("-infinity", "America/New_York", id="minus-infinity-in-new-york"),
]


async def shelve_at(db, created_at: str) -> int:
    """A story on the shelf, then its created_at set to `created_at` directly."""
    story_id = await shelve(JobStore(db), "edge", title="The Last Night", child_name="Mia")
    await execute(db, "UPDATE stories SET created_at = CAST(CAST(:at AS text) AS timestamptz)"
                      " WHERE id = :id", {"at": created_at, "id": story_id})
    return story_id


def run_cli(database_url: str, cwd: Path, timezone: str,
            *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m app ...` against this test's database, in the household's time zone."""
    env = {**os.environ, "DATABASE_URL": database_url, "PYTHONPATH": str(REPO), "TZ": timezone}
    for name in ("OPENAI_API_KEY", "HOUSEHOLD_PASSWORD", "STORYTELLER"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("created_at", "timezone"), EDGES)
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
async def test_the_command_line_exports_a_story_dated_at_the_edge_of_the_calendar(
    db, database_url, tmp_path, created_at, timezone
):
    await shelve_at(db, created_at)
    backup = tmp_path / "family.zip"
    exported = run_cli(database_url, tmp_path, timezone, "export", str(backup))
    assert exported.returncode == 0, exported.stderr
    with zipfile.ZipFile(backup) as archive:
        assert json.loads(archive.read("stories.json"))["count"] == 1
