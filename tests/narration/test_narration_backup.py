"""Narrations in backups: a zip member per part, named in stories.json, restored byte for
byte with nothing read aloud; a part that will not do refuses the whole file."""

from __future__ import annotations

import json
import zipfile
from io import BytesIO

import pytest

from app.db import connect_pool, migrate
from app.shelf.archive import BackupError
from app.shelf.imports import import_backup
from tests.helpers.app import ACCEPT_JSON, serve
from tests.helpers.narrations import LONG, LONG_STORY, ask_narration, narration_when
from tests.helpers.pictures import story_of
from tests.helpers.sql import fetch_val

pytestmark = pytest.mark.anyio


async def narrated_backup(make_app, fake_llm) -> tuple[bytes, bytes, dict]:
    """A backup of a story read aloud in three parts: (the zip, the narration as served,
    the story JSON's narration)."""
    fake_llm.story = LONG_STORY
    async with serve(make_app(narrator="speech", voice_model="kokoro", voice="af_heart")
                     ) as client:
        story_id = await story_of(client, LONG)
        await ask_narration(client, story_id)
        narration = await narration_when(client, story_id)
        served = (await client.get(narration["url"])).content
        backup = (await client.get("/stories/backup.zip")).content
    return backup, served, narration


def rezipped(data: bytes, change) -> bytes:
    """The backup with its members changed by `change(name, bytes) -> bytes`."""
    out = BytesIO()
    with zipfile.ZipFile(BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            target.writestr(info.filename, change(info.filename, source.read(info)))
    return out.getvalue()


async def test_a_backup_carries_the_narration_and_restores_it_byte_for_byte(
        make_app, fake_llm, second_installation, settings):
    backup, served, narration = await narrated_backup(make_app, fake_llm)
    with zipfile.ZipFile(BytesIO(backup)) as archive:
        [story] = json.loads(archive.read("stories.json"))["stories"]
        parts = story["narration"]
        assert [part["part"] for part in parts] == [0, 1, 2]
        assert all(part["file"] == f"narrations/{story['uid']}/{part['part']}.mp3"
                   for part in parts)
        assert b"".join(archive.read(part["file"]) for part in parts) == served
        assert archive.getinfo(parts[0]["file"]).compress_type == zipfile.ZIP_STORED
    calls = fake_llm.audio.total_calls()

    async with connect_pool(second_installation) as other:
        await migrate(other)
        assert (await import_backup(other, backup)).restored == 1
        assert await fetch_val(other, "SELECT count(*) FROM story_jobs"
                                      " WHERE kind = 'narration'") == 0  # nothing read
        assert await fetch_val(other, "SELECT count(*) FROM story_narration_parts") == 3
    async with serve(make_app(database_url=second_installation, narrator="off")) as client:
        [listed] = (await client.get("/stories", headers=ACCEPT_JSON)).json()["stories"]
        story = (await client.get(f"/stories/{listed['story_id']}", headers=ACCEPT_JSON)).json()
        assert story["narration"]["status"] == "ready"
        assert story["narration"]["seconds"] == narration["seconds"]
        again = await client.get(story["narration"]["url"])
        assert again.content == served and again.headers["etag"]
    assert fake_llm.audio.total_calls() == calls


@pytest.mark.parametrize("spoil", ["not audio", "missing", "renamed", "unmatched"])
async def test_a_narration_part_that_will_not_do_refuses_the_whole_backup(
        make_app, fake_llm, second_installation, spoil):
    backup, _, _ = await narrated_backup(make_app, fake_llm)

    def change(name: str, data: bytes) -> bytes:
        if name == "stories.json":
            document = json.loads(data)
            parts = document["stories"][0]["narration"]
            if spoil == "missing":
                parts[1]["file"] = parts[1]["file"].replace("/1.mp3", "/7.mp3")
            if spoil == "renamed":
                parts[0]["file"] = "../../etc/passwd"
            if spoil == "unmatched":
                parts[2]["parts"] = 4
            return json.dumps(document).encode()
        if spoil == "not audio" and name.endswith("/2.mp3"):
            return b"<html>not audio</html>"
        return data

    async with connect_pool(second_installation) as other:
        await migrate(other)
        with pytest.raises(BackupError, match="narration"):
            await import_backup(other, rezipped(backup, change))
        assert await fetch_val(other, "SELECT count(*) FROM stories") == 0
        assert await fetch_val(other, "SELECT count(*) FROM story_narration_parts") == 0
