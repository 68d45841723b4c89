"""An import restores the whole backup or writes nothing: every story is checked (types,
ranges, dates, text as the worker cleans it) before any is written, and a refusal is one
line naming the story and the field, never a traceback."""

from __future__ import annotations

import json

import pytest

from app.shelf.archive import BackupError
from app.shelf.imports import import_backup
from tests.helpers.backups import backup_zip, entry, rows, run_cli
from tests.helpers.sql import fetch_all

pytestmark = pytest.mark.anyio


async def refused(db, entries: list[dict[str, object]]) -> BackupError:
    """The import's refusal of these entries, having checked that it wrote nothing."""
    before = await rows(db)
    with pytest.raises(BackupError) as caught:
        await import_backup(db, backup_zip(entries))
    assert await rows(db) == before
    assert "\n" not in str(caught.value)
    return caught.value


async def test_lone_surrogates_in_the_texts_are_cleaned_and_every_story_restored(db):
    entries = [entry(3, title="Hoot\ud800 Night"), entry(2, child_name="Mi\udfffa"),
               entry(1, prompt="a fox\ud800 in the snow", body="Snow\ud83d fell. The end.")]
    result = await import_backup(db, backup_zip(entries))
    assert (result.restored, result.already_here) == (3, 0)
    stored = await fetch_all(db, "SELECT s.title, s.body, j.prompt, j.child_name"
                                 "  FROM stories s JOIN story_jobs j ON j.id = s.job_id")
    texts = {value for row in stored for value in row.values()}
    assert {"Hoot Night", "Mia", "a fox in the snow", "Snow fell. The end."} <= texts


@pytest.mark.parametrize("field", ["prompt", "title", "body"])
async def test_a_text_that_is_only_a_lone_surrogate_refuses_the_file(db, field):
    error = await refused(db, [entry(3), entry(2), entry(1, **{field: "\ud800"})])
    assert error.field == field and str(error).startswith("story 3 (uid ")


@pytest.mark.parametrize("created_at", [
    "9999-12-31T23:00:00-14:00",  # past year 9999 in UTC
    "0001-01-01T00:00:00+14:00",  # before year 1 in UTC
    "1969-12-31T23:59:59Z",
    "2099-01-01T00:00:00Z",
    "2026-11-29T20:01:02",  # no time zone
    "yesterday",
    "",
])
async def test_a_date_out_of_range_refuses_the_whole_file(db, created_at):
    bad = entry(1, created_at=created_at)
    error = await refused(db, [entry(3), entry(2), bad])
    assert error.field == "created_at"
    assert str(error).startswith(f"story 3 (uid {bad['uid']}, “Night 1”)")
    assert "created_at" in str(error)


@pytest.mark.parametrize(("field", "value"), [
    ("uid", "not-a-uuid"), ("uid", None), ("uid", 7),
    ("title", ""), ("title", "   "), ("title", None), ("title", ["Night"]),
    ("body", ""), ("body", 3),
    ("prompt", ""), ("prompt", " \t "), ("prompt", "x" * 501), ("prompt", 5), ("prompt", None),
    ("child_name", "x" * 41), ("child_name", 7),
    ("age", 0), ("age", 13), ("age", "5"), ("age", True), ("age", 5.0),
    ("length", "huge"), ("length", 2),
    ("created_at", None), ("created_at", 1700000000),
    ("favourite", "yes"), ("favourite", None),
    ("model", 5), ("model", {"name": "m"}),
    ("prompt_tokens", -1), ("prompt_tokens", 2**31), ("prompt_tokens", "12"),
    ("completion_tokens", 1.5), ("completion_tokens", False),
    ("sequel_of", "not-a-uuid"), ("sequel_of", 4),
    ("previously", 5),
])
async def test_a_field_of_the_wrong_type_or_range_refuses_the_file(db, field, value):
    error = await refused(db, [entry(2), entry(1, **{field: value})])
    assert error.field == field, str(error)
    assert str(error).startswith("story 2") and field in str(error)


async def test_a_story_that_is_not_an_object_refuses_the_file(db):
    error = await refused(db, [entry(2), "a story"])  # type: ignore[list-item]
    assert str(error).startswith("story 2 is not valid")


async def test_the_same_uid_twice_refuses_the_file(db):
    first = entry(2)
    error = await refused(db, [first, entry(1, uid=first["uid"])])
    assert error.field == "uid" and "story 1" in str(error) and str(error).startswith("story 2")


async def test_a_file_of_good_stories_is_restored_in_one_go(db):
    entries = [entry(n) for n in range(5, 0, -1)]
    entries[3] |= {"age": None, "child_name": None, "prompt_tokens": None, "model": None}
    result = await import_backup(db, backup_zip(entries))
    assert (result.restored, result.already_here) == (5, 0)
    assert await rows(db) == (5, 5)
    again = await import_backup(db, backup_zip(entries))
    assert (again.restored, again.already_here) == (0, 5)


@pytest.mark.slow
async def test_the_command_line_refuses_a_bad_file_in_one_line_and_writes_nothing(
    db, database_url, tmp_path
):
    bad = entry(1, created_at="9999-12-31T23:00:00-14:00")
    backup = tmp_path / "family.zip"
    backup.write_bytes(backup_zip([entry(3), entry(2), bad]))
    result = run_cli(database_url, tmp_path, "import", str(backup))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"import: {backup}: story 3 (uid {bad['uid']}")
    assert "created_at" in lines[0]
    assert await rows(db) == (0, 0)

    surrogate = tmp_path / "surrogate.json"  # stories.json alone, "\ud800" as JSON writes it
    surrogate.write_text(json.dumps({"format": "bedtime-stories-backup", "version": 1,
                                     "stories": [entry(2), entry(1, prompt="\ud800")]}))
    result = run_cli(database_url, tmp_path, "import", str(surrogate))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "prompt" in result.stderr
    assert await rows(db) == (0, 0)
