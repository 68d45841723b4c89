"""A standing campaign against the import: Hypothesis makes backup files out of a real
export (odd types in every field, dates at the calendar's edges, lone surrogates, huge
texts, repeated uids, missing and extra fields, small zip bombs, bytes that are no zip,
zips cut short or damaged). For each file: the whole backup is restored or nothing is
written, nothing but BackupError is raised, and afterwards the home page, the library and
the backup export still work (and the export can be read back)."""

from __future__ import annotations

import copy
import io
import json
import re
import uuid
import zipfile
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from app.queue.store import JobStore
from app.shelf.archive import BackupError
from app.shelf.backup import export_zip
from app.shelf.backup_reading import check_backup
from app.shelf.imports import import_backup
from app.shelf.store import ShelfStore
from tests.helpers.backups import a_shelf, rows, with_size_in_directory, zipped
from tests.helpers.campaigns import examples

pytestmark = pytest.mark.anyio

CAMPAIGN = settings(max_examples=examples(400), deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])

STORY_FIELDS = ["uid", "title", "body", "created_at", "prompt", "child_name", "age", "length",
                "favourite", "model", "prompt_tokens", "completion_tokens", "sequel_of",
                "previously", "file"]
TEXT_FIELDS = ["title", "body", "prompt", "child_name", "previously", "model", "uid",
               "created_at"]
DOCUMENT_FIELDS = ["format", "version", "exported_at", "count", "stories"]
SURROGATES = ["\ud800", "\udfff", "\ud83d", "\udc00\ud800"]

edge_dates = st.one_of(
    st.sampled_from([
        "0001-01-01T00:00:00Z", "0001-01-01T00:00:00+14:00", "0001-01-01T00:00:00-14:00",
        "9999-12-31T23:59:59.999999Z", "9999-12-31T23:00:00-14:00", "9999-12-31T10:00:00+14:00",
        "1970-01-01T00:00:00Z", "1969-12-31T23:59:59.999999Z", "1970-01-01T01:00:00+01:00",
        "2026-11-29T20:01:02", "2026-02-30T00:00:00Z", "2026-11-29T20:01:02+24:00",
        "2026-11-29 20:01:02+01:00", "20261129T200102Z", "garbage", "", "2026", "NaN",
    ]),
    st.builds(
        lambda moment, offset: moment.replace(tzinfo=offset).isoformat(),
        st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)),
        st.none() | st.timedeltas(min_value=-timedelta(hours=23, minutes=59),
                                  max_value=timedelta(hours=23, minutes=59)).map(timezone),
    ),
    st.timedeltas(min_value=-timedelta(days=3), max_value=timedelta(days=3)).map(
        lambda ahead: (datetime.now(UTC) + ahead).isoformat()),
)
surrogate_texts = st.builds(lambda before, odd, after: before + odd + after,
                            st.text(max_size=8), st.sampled_from(SURROGATES),
                            st.text(max_size=8))
huge_texts = st.sampled_from([41, 201, 501, 1001, 100_000, 600_000]).map(lambda n: "é" * n)
odd_values = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, 12, 13, -1, 2**31 - 1, 2**31, 2**63]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
    st.sampled_from(["short", "medium", "long", "true", "5", " ", "\x00", "\r\n"]),
    surrogate_texts, huge_texts, edge_dates, st.uuids().map(str),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=4), st.integers(),
                                                         max_size=2),
)


# A change to the document, as a damaged or hand-made backup might have it: (what, which
# story, which field, the value). Drawn before the test runs, applied to the export in it.
changes = st.one_of(
    st.tuples(st.just("set"), st.integers(0, 9), st.sampled_from(STORY_FIELDS), odd_values),
    st.tuples(st.just("set"), st.integers(0, 9), st.just("created_at"), edge_dates),
    st.tuples(st.just("set"), st.integers(0, 9), st.sampled_from(TEXT_FIELDS),
              surrogate_texts | huge_texts),
    st.tuples(st.just("set"), st.integers(0, 9), st.text(max_size=12), odd_values),  # extra
    st.tuples(st.just("drop"), st.integers(0, 9), st.sampled_from(STORY_FIELDS), st.none()),
    st.tuples(st.just("repeat"), st.integers(0, 9), st.none(), st.integers(0, 9)),
    st.tuples(st.just("rotate"), st.integers(1, 9), st.none(), st.none()),
    st.tuples(st.just("document"), st.none(), st.sampled_from(DOCUMENT_FIELDS), odd_values),
    st.tuples(st.just("document_drop"), st.none(), st.sampled_from(DOCUMENT_FIELDS),
              st.none()),
)


def changed(document: dict, change: tuple) -> None:
    what, number, field, value = change
    stories = document.get("stories")
    if what == "document":
        document[field] = value
    elif what == "document_drop":
        document.pop(field, None)
    elif not isinstance(stories, list) or not stories:
        return
    elif what == "rotate":
        document["stories"] = stories[number % len(stories):] + stories[:number % len(stories)]
    elif not isinstance(story := stories[number % len(stories)], dict):
        return
    elif what == "set":
        story[field] = value
    elif what == "drop":
        story.pop(field, None)
    elif what == "repeat":  # the same story, uid and all, once more
        stories.insert(value % (len(stories) + 1), dict(story))


def renew_uids(document: dict) -> None:
    """New uids (sequel links kept), so the stories are new to this shelf."""
    renewed: dict[str, str] = {}
    for story in document["stories"]:
        renewed[story["uid"]] = story["uid"] = str(uuid.uuid4())
    for story in document["stories"]:
        if story.get("sequel_of") in renewed:
            story["sequel_of"] = renewed[story["sequel_of"]]


def encoded(document: dict, *, ascii_only: bool, zipped_up: bool) -> bytes:
    """The document as a zip (the usual backup) or as stories.json alone; a lone surrogate
    as JSON's \\u escape (ascii_only), or raw, which is no UTF-8."""
    raw = json.dumps(document, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    return zipped({"stories.json": raw, "stories/readme.md": b"# not read"}) if zipped_up else raw


@pytest.fixture
async def exported(db) -> dict:
    """A real export of a few stories (a favourite, a sequel, one with no child), as a
    document, from the shelf the campaign then imports into."""
    await a_shelf(JobStore(db))
    data = await export_zip(ShelfStore(db), UTC)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {"zip": data, "document": json.loads(archive.read("stories.json"))}


async def imported_whole_or_not_at_all(db, data: bytes) -> int | None:
    """Import the file: either every story is restored (or already here) and exactly
    their rows written, or BackupError and no row written. The stories restored."""
    before = await rows(db)
    try:
        result = await import_backup(db, data)
    except BackupError as error:
        assert "\n" not in str(error) and str(error)
        assert await rows(db) == before
        event(f"refused: {error.field or re.sub(r'[0-9]+', 'N', str(error))[:45]}")
        return None
    stories, jobs = await rows(db)
    assert stories - before[0] == jobs - before[1] == result.restored
    event("restored" if result.restored else "all already here")
    return result.restored + result.already_here


async def still_works(client) -> None:
    """The household's pages and the export, after whatever the import did."""
    assert (await client.get("/")).status_code == 200
    assert (await client.get("/stories")).status_code == 200
    export = await client.get("/stories/backup.zip")
    assert export.status_code == 200
    assert check_backup(export.content) >= 3  # what was imported can be read back


@pytest.mark.campaign
@CAMPAIGN
@given(renew=st.booleans(), edits=st.lists(changes, min_size=1, max_size=3),
       ascii_only=st.booleans(), zipped_up=st.booleans())
@pytest.mark.slow
async def test_a_mutated_export_is_imported_whole_or_not_at_all(
    db, client, exported, renew, edits, ascii_only, zipped_up
):
    document = copy.deepcopy(exported["document"])
    if renew:
        renew_uids(document)
    for change in edits:
        changed(document, change)
    data = encoded(document, ascii_only=ascii_only, zipped_up=zipped_up)
    total = await imported_whole_or_not_at_all(db, data)
    if total is not None:
        assert total == len(document["stories"])
    await still_works(client)


def braces_bomb(repeat: bytes, times: int) -> bytes:
    head = b'{"format": "bedtime-stories-backup", "version": 1, "stories": ['
    return zipped({"stories.json": head + repeat * times + b"{}]}"})


damaged_files = st.one_of(
    st.binary(max_size=2000),
    st.builds(braces_bomb, st.sampled_from([b"{},", b"[", b"0,", b" ", b'"\\ud800",', b"{}"]),
              st.integers(1000, 400_000)),
)


somewhere = st.floats(min_value=0, max_value=1, exclude_max=True)
damages = st.one_of(
    st.tuples(st.just("cut"), somewhere),  # a download that stopped short
    st.tuples(st.just("bytes"), st.lists(st.tuples(somewhere, st.integers(0, 255)),
                                         min_size=1, max_size=8)),  # a disk's flipped bytes
    st.tuples(st.just("lying_size"), st.integers(0, 2**32 - 1)),
    st.tuples(st.just("json_cut"), somewhere),
    st.tuples(st.just("other"), damaged_files),
)


def damaged(export: dict, damage: tuple) -> bytes:
    what, how = damage
    backup: bytes = export["zip"]
    if what == "cut":
        return backup[:int(how * len(backup))]
    if what == "bytes":
        flipped = bytearray(backup)
        for where, value in how:
            flipped[int(where * len(backup))] = value
        return bytes(flipped)
    if what == "lying_size":
        return with_size_in_directory(backup, b"stories.json", how)
    if what == "json_cut":
        raw = json.dumps(export["document"]).encode()
        return raw[:int(how * len(raw))]
    return how


@pytest.mark.campaign
@CAMPAIGN
@given(damage=damages)
@pytest.mark.slow
async def test_a_damaged_file_is_imported_whole_or_not_at_all(db, client, exported, damage):
    await imported_whole_or_not_at_all(db, damaged(exported, damage))
    await still_works(client)
