"""Restore from the page: the library's "Import a backup" form posts the zip, which is
restored whole or not at all, as `python -m app import` does, and says so in its words."""

from __future__ import annotations

import html
from datetime import UTC

import pytest

from app.queue.store import JobStore
from app.shelf.backup import export_zip
from app.shelf.children import Children, parse_child
from app.shelf.store import ShelfStore
from app.web import backups
from tests.helpers.app import serve
from tests.helpers.backups import a_shelf, backup_zip, entry, rows, run_cli

pytestmark = pytest.mark.anyio


def upload(data: bytes, name: str = "family.zip") -> dict[str, tuple[str, bytes, str]]:
    return {"backup": (name, data, "application/zip")}


async def test_the_library_offers_the_import_form_beside_the_download(client):
    page = (await client.get("/stories")).text
    assert 'href="/stories/backup.zip"' in page
    assert 'action="/stories/import"' in page and 'enctype="multipart/form-data"' in page
    assert "Import a backup" in page and 'type="file"' in page


async def test_a_backup_imported_from_the_page_says_how_many_stories_and_children_came_back(
    make_app, db, second_installation
):
    await a_shelf(JobStore(db))
    await Children(db).add(parse_child({"name": "Mia", "age": 5}))
    data = await export_zip(ShelfStore(db), UTC)
    async with serve(make_app(database_url=second_installation), from_own_pages=True) as client:
        first = await client.post("/stories/import", files=upload(data))
        assert first.status_code == 200
        assert "3 stories came back, and 1 child profile." in first.text
        library = (await client.get("/stories")).text
        assert "Mia and the Gentle Journey" in library and "Mia and Hoot Again" in library
        again = await client.post("/stories/import", files=upload(data))
        assert again.status_code == 200
        assert "0 stories came back (3 were here already)." in again.text


async def test_a_bad_backup_is_refused_on_the_page_in_the_command_line_s_words_and_writes_nothing(
    make_app, db, database_url, tmp_path
):
    bad = entry(1, created_at="9999-12-31T23:00:00-14:00")
    data = backup_zip([entry(3), entry(2), bad])
    file = tmp_path / "family.zip"
    file.write_bytes(data)
    cli = run_cli(database_url, tmp_path, "import", str(file))
    refusal = cli.stderr.strip().removeprefix(f"import: {file}: ")
    assert refusal.startswith("story 3 (uid ")
    async with serve(make_app(), from_own_pages=True) as client:
        page = await client.post("/stories/import", files=upload(data))
    assert page.status_code == 422
    assert "This file can't be restored, so nothing was changed." in html.unescape(page.text)
    assert refusal in html.unescape(page.text)  # and what exactly, for whoever set it up
    assert 'action="/stories/import"' in page.text  # the form, to try another file
    assert await rows(db) == (0, 0)


async def test_no_file_or_a_file_that_is_not_a_backup_is_refused_in_one_line(make_app, db):
    async with serve(make_app(), from_own_pages=True) as client:
        empty = await client.post("/stories/import", files=upload(b"", name=""))
        assert empty.status_code == 422 and "Choose a backup file" in empty.text
        notes = await client.post("/stories/import", files=upload(b"my notes", "notes.txt"))
        assert notes.status_code == 422
        assert "this is neither a story backup zip nor its stories.json" in notes.text
        form = await client.post("/stories/import", data={"backup": "family.zip"})
        assert form.status_code == 422 and "Choose a backup file" in form.text
    assert await rows(db) == (0, 0)


async def test_an_import_posted_from_another_site_is_refused_and_writes_nothing(make_app, db):
    async with serve(make_app()) as client:
        response = await client.post("/stories/import", files=upload(backup_zip([entry(1)])),
                                     headers={"Origin": "http://evil.example"})
    assert response.status_code == 403
    assert await rows(db) == (0, 0)


async def test_an_upload_past_the_bound_is_refused_and_writes_nothing(make_app, db, monkeypatch):
    data = backup_zip([entry(n) for n in range(1, 40)])
    monkeypatch.setattr(backups, "IMPORT_MAX_BYTES", len(data) // 2)
    async with serve(make_app(), from_own_pages=True) as client:
        response = await client.post("/stories/import", files=upload(data))
        assert response.status_code == 413
        # The import's own page, as for any other refusal, with the form to try again.
        assert "Nothing was restored" in response.text and "too large" in response.text
        assert 'action="/stories/import"' in response.text
        chunked = await client.post(  # no Content-Length: counted as it arrives
            "/stories/import", content=_chunks(data),
            headers={"Content-Type": "multipart/form-data; boundary=x"})
        assert chunked.status_code == 413
    assert await rows(db) == (0, 0)


async def _chunks(data: bytes):
    body = (b'--x\r\nContent-Disposition: form-data; name="backup"; filename="f.zip"\r\n'
            b"Content-Type: application/zip\r\n\r\n" + data + b"\r\n--x--\r\n")
    for start in range(0, len(body), 1024):
        yield body[start:start + 1024]
