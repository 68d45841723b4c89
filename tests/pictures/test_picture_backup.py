"""Pictures in backups: a zip member per picture, named in stories.json, restored byte for
byte with nothing drawn; a picture that will not do refuses the whole file."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC
from io import BytesIO

import pytest

from app.db import connect_pool, migrate
from app.illustrating.small import PICTURE_MAX_BYTES
from app.queue.pictures import PictureStore
from app.queue.store import JobStore
from app.shelf.archive import BackupError
from app.shelf.backup import export_zip
from app.shelf.imports import import_backup
from app.shelf.store import ShelfStore
from tests.helpers.backups import document, entry, rows, stories_json, zipped
from tests.helpers.pictures import BOOT, DRAWN, stored_story
from tests.helpers.sql import fetch_val

pytestmark = pytest.mark.anyio


async def a_story_with_its_picture(db) -> int:
    store, pictures = JobStore(db), PictureStore(db)
    _, story_id = await stored_story(store, pictures)
    claimed = await store.claim_next(BOOT)
    assert claimed is not None and await pictures.complete(claimed.id, BOOT, DRAWN)
    return story_id


async def test_a_backup_carries_each_picture_and_restores_it_byte_for_byte(
        db, second_installation):
    await a_story_with_its_picture(db)
    await stored_story(JobStore(db), None)  # and one with no picture
    data = await export_zip(ShelfStore(db), UTC)
    document = stories_json(data)
    with_picture = [s for s in document["stories"] if "picture" in s]
    assert len(with_picture) == 1 and len(document["stories"]) == 2
    name = with_picture[0]["picture"]
    assert name == f"pictures/{with_picture[0]['uid']}.webp"
    with zipfile.ZipFile(BytesIO(data)) as archive:
        assert archive.read(name) == DRAWN.image
        assert archive.getinfo(name).compress_type == zipfile.ZIP_STORED

    async with connect_pool(second_installation) as other:
        await migrate(other)
        result = await import_backup(other, data)
        assert result.restored == 2
        assert await fetch_val(other, "SELECT image FROM story_pictures") == DRAWN.image
        assert await fetch_val(other, "SELECT job_id FROM story_pictures") is None
        assert await fetch_val(other, "SELECT count(*) FROM story_jobs"
                                      " WHERE kind = 'picture'") == 0  # nothing drawn
        small = await fetch_val(other, "SELECT octet_length(small) FROM story_pictures")
        assert 0 < small <= 30_000
        again = stories_json(await export_zip(ShelfStore(other), UTC))
    assert again["stories"] == document["stories"]


def with_picture(data: bytes | None, name: str | None = None) -> bytes:
    story = entry(1)
    member = name or f"pictures/{story['uid']}.webp"
    files = {"stories.json": b""}
    if data is not None:
        files[member] = data
    story["picture"] = member
    files["stories.json"] = json.dumps(document([entry(2), story])).encode()
    return zipped(files)


@pytest.mark.parametrize(("data", "name", "says"), [
    (b"not a picture at all", None, "not valid"),
    (b"\x89PNG\r\n\x1a\n" + b"0" * PICTURE_MAX_BYTES, None, "over 4 MB"),
    (None, None, "not in this zip"),
    (DRAWN.image, "../../etc/passwd", "not named as a backup names one"),
    (b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
     "pictures/7b0c1f3e-2a4d-4e5f-9a6b-1c2d3e4f5a6b.svg", "script"),
    (b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
     b'<use xlink:href="https://example.com/sprite.svg#star"/></svg>',
     "pictures/7b0c1f3e-2a4d-4e5f-9a6b-1c2d3e4f5a6b.svg", "a link outside the picture"),
    (b'<svg xmlns="http://www.w3.org/2000/svg"><use href="&#106;avascript:alert(1)"/></svg>',
     "pictures/7b0c1f3e-2a4d-4e5f-9a6b-1c2d3e4f5a6b.svg", "a link outside the picture"),
], ids=["not-a-picture", "too-big", "missing", "bad-name", "svg-with-script",
        "svg-with-outside-href", "svg-with-encoded-javascript"])
async def test_a_picture_that_will_not_do_refuses_the_whole_backup(db, data, name, says):
    with pytest.raises(BackupError) as refused:
        await import_backup(db, with_picture(data, name))
    assert says in str(refused.value)
    assert await rows(db) == (0, 0)  # not even the other story
