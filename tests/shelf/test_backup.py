"""Backups: export every story to a zip (Markdown to read, stories.json to restore) and
import it into another installation, as often as you like, without duplicates."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC

import pytest

from app.db import connect_pool
from app.queue.check import Invariants
from app.queue.store import JobStore
from app.shelf.archive import BackupError
from app.shelf.backup import export_zip
from app.shelf.backup_reading import check_backup, read_stories
from app.shelf.imports import import_backup
from app.shelf.store import ShelfStore
from tests.helpers.app import serve
from tests.helpers.backups import a_shelf, run_cli, stories_json
from tests.helpers.sql import fetch_all, fetch_val

pytestmark = pytest.mark.anyio


@pytest.mark.slow
async def test_export_then_import_gives_the_same_library_and_twice_no_duplicates(
    db, second_installation
):
    await a_shelf(JobStore(db))
    data = await export_zip(ShelfStore(db), UTC)
    exported = stories_json(data)
    assert exported["format"] == "bedtime-stories-backup" and exported["count"] == 3
    assert "Deleted" not in {s["title"] for s in exported["stories"]}

    async with connect_pool(second_installation) as other:
        from app.db import migrate

        await migrate(other)
        store = JobStore(other)
        first = await import_backup(store.db, data)
        assert (first.restored, first.already_here) == (3, 0)
        again = await import_backup(store.db, data)
        assert (again.restored, again.already_here) == (0, 3)
        assert await fetch_val(other, "SELECT count(*) FROM stories") == 3
        assert await fetch_val(other, "SELECT count(*) FROM story_jobs") == 3
        restored = stories_json(await export_zip(ShelfStore(store.db), UTC))
        library = [(s.title, s.favourite, s.sequel_of_title)
                   for s in (await ShelfStore(store.db).library()).stories]
        for check in ("check_completed_without_story", "check_unreachable_stories"):
            assert await Invariants(store.db).ids(check) == []
        jobs = await fetch_all(other, "SELECT status, created_at, completed_at FROM story_jobs")
        assert {job["status"] for job in jobs} == {"completed"}
        # Made and finished at the story's own time (an old story is no "latest request").
        assert all(job["completed_at"] == job["created_at"] for job in jobs)

    assert restored["stories"] == exported["stories"]  # everything, uids and times included
    original = [(s.title, s.favourite, s.sequel_of_title)
                for s in (await ShelfStore(db).library()).stories]
    assert library == original  # favourites first, the sequel after its story
    back_home = await import_backup(db, data)  # into the installation it came from
    assert (back_home.restored, back_home.already_here) == (0, 3)


async def test_the_markdown_files_are_plain_text(db):
    ids = await a_shelf(JobStore(db))
    data = await export_zip(ShelfStore(db), UTC)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = [name for name in archive.namelist() if name.endswith(".md")]
        assert len(names) == 3 and all(name.startswith("stories/") for name in names)
        assert all(name.isascii() and " " not in name for name in names)
        texts = {name: archive.read(name).decode("utf-8") for name in names}
    for name, text in texts.items():
        assert "\x00" not in text and text.startswith("# "), name
        assert "- Written: " in text and "- About: " in text and "\n---\n" in text
    owl = next(text for text in texts.values() if "Gentle Journey" in text)
    assert "- For: Mia, age 5" in owl and "- About: a sleepy owl" in owl
    assert "Once upon a time, Mia met Hoot.\n\nThey slept. Goodnight." in owl
    sequel = next(text for text in texts.values() if "Hoot Again" in text)
    assert "- Continues: Mia and the Gentle Journey" in sequel
    entries = stories_json(data)["stories"]
    assert {entry["file"] for entry in entries} == set(names)
    assert ids  # (the deleted one is in neither)


async def test_a_file_that_is_not_a_backup_is_refused_and_writes_nothing(db):
    store = JobStore(db)
    for data, reason in ((b"hello", "neither"), (b'{"format": "x"}', "not a story backup"),
                         (b'{"format": "bedtime-stories-backup", "version": 9}', "version"),
                         (_zip({"other.txt": "x"}), "no stories.json")):
        with pytest.raises(BackupError, match=reason):
            await import_backup(store.db, data)
    broken = {"format": "bedtime-stories-backup", "version": 1, "stories": [
        {"uid": "0b6f2a4e-5c1d-4f8e-9a3b-2c7d1e0f4a5b", "title": "Fine", "body": "Text.",
         "created_at": "2026-11-29T20:01:02Z", "prompt": "a fox", "length": "short"},
        {"uid": "not-a-uuid", "title": "T", "body": "B", "created_at": "2026-11-29T20:01:02Z",
         "prompt": "a fox"},
    ]}
    with pytest.raises(BackupError, match="story 2"):
        await import_backup(store.db, json.dumps(broken).encode())
    assert await fetch_val(db, "SELECT count(*) FROM stories") == 0
    broken["stories"] = broken["stories"][:1]
    assert check_backup(json.dumps(broken).encode()) == 1  # stories.json alone will do


def _zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


@pytest.mark.slow
async def test_the_command_line_exports_and_imports(db, database_url, second_installation,
                                                    tmp_path):
    await a_shelf(JobStore(db))
    backup = tmp_path / "family.zip"
    exported = run_cli(database_url, tmp_path, "export", str(backup))
    assert exported.returncode == 0, exported.stderr
    assert f"wrote {backup}" in exported.stdout and zipfile.is_zipfile(backup)
    default = run_cli(database_url, tmp_path, "export")
    assert default.returncode == 0 and list(tmp_path.glob("bedtime-stories-*.zip"))

    first = run_cli(second_installation, tmp_path, "import", str(backup))  # not even migrated
    assert first.returncode == 0, first.stderr
    assert "3 restored, 0 already here" in first.stdout
    second = run_cli(second_installation, tmp_path, "import", str(backup))
    assert "0 restored, 3 already here" in second.stdout

    (tmp_path / "notes.txt").write_text("not a backup")
    refused = run_cli(second_installation, tmp_path, "import", str(tmp_path / "notes.txt"))
    assert refused.returncode == 1 and "import:" in refused.stderr
    assert "Traceback" not in refused.stderr
    missing = run_cli(second_installation, tmp_path, "import", str(tmp_path / "nope.zip"))
    assert missing.returncode == 1 and "cannot read" in missing.stderr
    assert run_cli(second_installation, tmp_path, "import").returncode == 2  # no FILE


async def test_download_all_and_one_story(make_app, db):
    ids = await a_shelf(JobStore(db))
    async with serve(make_app(), from_own_pages=True) as client:
        library = (await client.get("/stories")).text
        assert 'href="/stories/backup.zip"' in library
        response = await client.get("/stories/backup.zip")
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/zip"
        assert response.headers["content-disposition"].startswith("attachment; filename=")
        assert stories_json(response.content)["count"] == 3
        one = await client.get(f"/stories/{ids['owl']}/markdown")
        assert one.status_code == 200
        assert one.headers["content-type"] == "text/markdown; charset=utf-8"
        assert one.headers["content-disposition"].endswith('.md"')
        assert one.text.startswith("# Mia and the Gentle Journey\n")
        story_page = (await client.get(f"/stories/{ids['owl']}")).text
        assert f'href="/stories/{ids["owl"]}/markdown"' in story_page
        assert "data-print" in story_page
        assert (await client.get(f"/stories/{ids['gone']}/markdown")).status_code == 404


async def test_the_backup_needs_a_signed_in_household(make_app, db):
    await a_shelf(JobStore(db))
    app = make_app(household_password="moonbeam", api_token="t0ken", allow_open=False)
    async with serve(app) as client:
        response = await client.get("/stories/backup.zip")
        assert response.status_code in (302, 303, 307)
        assert response.headers["location"].startswith("/login")
        bearer = await client.get("/stories/backup.zip",
                                  headers={"Authorization": "Bearer t0ken"})
        assert bearer.status_code == 200 and zipfile.is_zipfile(io.BytesIO(bearer.content))


def test_an_imported_title_is_cleaned_as_a_written_one_is():
    """Bidi overrides and zero-width characters never reach a title, however it came: a
    backup's title is cleaned as a storyteller's is, and one with nothing visible left
    gets the fallback title (the shared page's <title> shows it raw)."""
    stories = [{"uid": f"0b6f2a4e-5c1d-4f8e-9a3b-2c7d1e0f4a5{n}", "title": title,
                "body": "Text.", "created_at": "2026-11-29T20:01:02Z", "prompt": "a fox"}
               for n, title in enumerate(["\u202eThe Fox\u200b", "\u200b\u2066\u2069"])]
    backup = json.dumps({"format": "bedtime-stories-backup", "version": 1,
                         "stories": stories}).encode()
    assert [story.title for story in read_stories(backup)] == ["The Fox", "A Bedtime Story"]
