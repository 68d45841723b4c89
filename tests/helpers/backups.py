"""Backup files for the import's tests: stories.json entries as an export writes them,
the zip around them, the rows an import could have written, and the command line.

    data = backup_zip([entry(1), entry(2, prompt="a fox")])
    before = await rows(db); ...; assert await rows(db) == before   # nothing written
    await a_shelf(store)                                            # to export
"""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import uuid
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from app.db import Pool
from app.queue.store import JobStore
from app.shelf.store import ShelfStore
from tests.helpers.shelving import shelve
from tests.helpers.sql import fetch_val

REPO = Path(__file__).resolve().parents[2]


def entry(number: int, **fields: object) -> dict[str, object]:
    """Story `number` of a backup, made `number` minutes ago; `fields` replace its own."""
    made = datetime.now(UTC) - timedelta(minutes=number)
    story: dict[str, object] = {
        "uid": str(uuid.uuid5(uuid.NAMESPACE_OID, f"story-{number}-{uuid.uuid4()}")),
        "title": f"Night {number}",
        "body": f"Once upon a time there was story {number}. Goodnight.",
        "created_at": made.isoformat(),
        "prompt": f"a sleepy owl, night {number}",
        "child_name": "Mia",
        "age": 5,
        "length": "short",
        "favourite": False,
        "model": "demo",
        "prompt_tokens": 12,
        "completion_tokens": 340,
        "sequel_of": None,
        "previously": None,
        "file": f"stories/night-{number}.md",
    }
    return story | fields


def document(entries: list[dict[str, object]]) -> dict[str, object]:
    return {"format": "bedtime-stories-backup", "version": 1,
            "exported_at": datetime.now(UTC).isoformat(), "count": len(entries),
            "stories": entries}


def backup_zip(entries: list[dict[str, object]]) -> bytes:
    """A backup zip holding these entries (`\\ud800` in a text is written as JSON's escape)."""
    return zipped({"stories.json": json.dumps(document(entries)).encode()})


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


async def rows(db: Pool) -> tuple[int, int]:
    """(stories, jobs): what an import writes."""
    return (await fetch_val(db, "SELECT count(*) FROM stories"),
            await fetch_val(db, "SELECT count(*) FROM story_jobs"))


def with_size_in_directory(data: bytes, name: bytes, size: int) -> bytes:
    """The zip with the uncompressed size its central directory gives `name` changed."""
    at = data.index(b"PK\x01\x02")
    while data[at + 46: at + 46 + len(name)] != name:
        at = data.index(b"PK\x01\x02", at + 1)
    return data[:at + 24] + struct.pack("<L", size) + data[at + 28:]


async def a_shelf(store: JobStore) -> dict[str, int]:
    """A few weeks of stories: a favourite, a sequel, one with no child, one deleted."""
    owl = await shelve(store, "k1", title="Mia and the Gentle Journey", child_name="Mia", age=5,
                       prompt="a sleepy owl", length="short",
                       body="Once upon a time, Mia met Hoot.\n\nThey slept. Goodnight.")
    sequel = await shelve(store, "k2", title="Mia and Hoot Again", child_name="Mia", age=5,
                          prompt="what happens next", sequel_of=owl)
    plain = await shelve(store, "k3", title="Élodie’s 月 Night: “quotes” & <tags>",
                         prompt="a moon & a spoon: \"quoted\"")
    gone = await shelve(store, "k4", title="Deleted", prompt="a mistake")
    await ShelfStore(store.db).set_favourite(plain, True)
    await ShelfStore(store.db).delete_story(gone)
    return {"owl": owl, "sequel": sequel, "plain": plain, "gone": gone}


def run_cli(database_url: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m app ARGS` against this database, as a household runs it."""
    env = {**os.environ, "DATABASE_URL": database_url, "PYTHONPATH": str(REPO)}
    for name in ("OPENAI_API_KEY", "HOUSEHOLD_PASSWORD", "STORYTELLER"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def stories_json(data: bytes) -> dict:
    """The backup's stories.json."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return json.loads(archive.read("stories.json"))
