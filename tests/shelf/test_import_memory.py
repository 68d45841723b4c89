"""Reading a backup takes bounded memory, whatever the file: each import runs in a process
of its own, which reports its peak resident memory when it is done (VmHWM: ru_maxrss
would count the memory of the test process it was forked from, too)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import uuid
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.shelf.archive import BackupError
from app.shelf.backup import build_zip
from app.shelf.imports import import_backup
from app.shelf.store import BackupStory
from app.stories import StoryRequest
from tests.helpers.backups import REPO, backup_zip, document, entry, rows, with_size_in_directory

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)"),
]

PEAK_MAX_MB = 150
# Run in the child: the import (or only its check, with no database), then the peak. The
# address space is capped, so an import that runs away fails there, not the machine.
CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, resource.RLIM_INFINITY))
mode, file = sys.argv[1:]
if mode == "check":
    from app.shelf.archive import BackupError
    from app.shelf.backup_reading import check_backup
    try:
        with open(file, "rb") as backup:
            print(f"{check_backup(backup)} stories")
        code = 0
    except BackupError as error:
        print(f"refused: {error}")
        code = 1
else:
    from app.__main__ import main
    code = main(["import", file])
sys.stdout.flush()
with open("/proc/self/status") as status:
    peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
print(f"peak_kib={peak}", file=sys.stderr)
sys.exit(code)
"""


@dataclass
class Run:
    code: int
    out: str
    err: str
    peak_mb: float


def measured(mode: str, file: Path, database_url: str = "") -> Run:
    env = {**os.environ, "PYTHONPATH": str(REPO), "DATABASE_URL": database_url}
    done = subprocess.run([sys.executable, "-c", CHILD, mode, str(file)], cwd=file.parent,
                          env=env, capture_output=True, text=True, timeout=300)
    peak = [line for line in done.stderr.splitlines() if line.startswith("peak_kib=")]
    assert peak, done.stderr[-2000:]
    err = "\n".join(line for line in done.stderr.splitlines() if not line.startswith("peak_"))
    return Run(done.returncode, done.stdout, err, int(peak[0].split("=")[1]) / 1024)


def streamed_zip(path: Path, head: bytes, repeat: bytes, times: int, tail: bytes) -> Path:
    """A zip whose stories.json is head + repeat * times + tail, written a piece at a time."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("stories.json", "w") as member:
            member.write(head)
            chunk = repeat * (1 << 20)
            for _ in range(times // (1 << 20)):
                member.write(chunk)
            member.write(tail)
    return path


HEAD = b'{"format": "bedtime-stories-backup", "version": 1, '
# ~199 MB of stories.json in ~200 KB of zip, each a different shape of the same bomb.
BOMBS = {
    "stories_of_braces": (HEAD + b'"stories": [', b"{},", 66 << 20, b"{}]}"),
    "one_story_of_braces": (HEAD + b'"stories": [[', b"{},", 66 << 20, b"{}]]}"),
    "a_field_of_braces": (HEAD + b'"exported_at": [', b"{},", 66 << 20, b'{}], "stories": []}'),
    "a_field_of_zeros": (HEAD + b'"count": [', b"0,", 99 << 20, b'0], "stories": []}'),
    "nested_deep": (HEAD + b'"stories": [', b"[", 198 << 20, b"]}"),
}


@pytest.mark.parametrize("shape", BOMBS)
@pytest.mark.slow
def test_a_zip_bomb_inside_the_size_cap_is_refused_in_little_memory(tmp_path, shape):
    bomb = streamed_zip(tmp_path / "bomb.zip", *BOMBS[shape])
    assert bomb.stat().st_size < 300_000
    with zipfile.ZipFile(bomb) as archive:
        assert 190_000_000 < archive.getinfo("stories.json").file_size < 200 * 1024 * 1024
    run = measured("check", bomb)
    assert run.code == 1 and run.out.startswith("refused: "), (run.out, run.err)
    assert run.peak_mb < PEAK_MAX_MB, f"{shape}: peak {run.peak_mb:.0f} MB"
    print(f"{shape}: refused, peak {run.peak_mb:.0f} MB")


@pytest.mark.slow
def test_the_command_line_refuses_the_bomb_in_one_line(tmp_path, database_url):
    bomb = streamed_zip(tmp_path / "bomb.zip", *BOMBS["stories_of_braces"])
    run = measured("import", bomb, database_url)
    assert run.code == 1 and "Traceback" not in run.err
    assert run.err.startswith(f"import: {bomb}: story 1 is not valid") and "\n" not in run.err
    assert run.peak_mb < PEAK_MAX_MB, f"peak {run.peak_mb:.0f} MB"
    print(f"bomb via the command line: peak {run.peak_mb:.0f} MB")


def a_story(number: int, body: str) -> BackupStory:
    return BackupStory(
        uid=uuid.uuid4(), title=f"Night {number} “under the stars”", body=body,
        created_at=datetime.now(UTC) - timedelta(minutes=number),
        request=StoryRequest(prompt=f"a sleepy owl, night {number}", child_name="Mia", age=5,
                             length="long"),
        model="demo", prompt_tokens=12, completion_tokens=900)


@pytest.mark.slow
def test_a_few_thousand_stories_are_imported_in_little_memory(tmp_path, database_url):
    body = "Once upon a time, a little owl couldn’t sleep. " * 40  # ~2 KB, not Latin-1
    stories = [a_story(number, body) for number in range(3000, 0, -1)]
    backup = tmp_path / "family.zip"
    backup.write_bytes(build_zip(stories, UTC, exported_at=datetime.now(UTC)))
    run = measured("import", backup, database_url)
    assert run.code == 0, run.err
    assert "3000 restored, 0 already here" in run.out
    assert run.peak_mb < PEAK_MAX_MB, f"peak {run.peak_mb:.0f} MB"
    print(f"3000 stories ({backup.stat().st_size // 1024} KB zip): peak {run.peak_mb:.0f} MB")


@pytest.mark.slow
def test_a_large_valid_backup_is_read_in_little_memory(tmp_path):
    """20,000 long stories (~110 MB of stories.json, whose texts held at once would take
    over 400 MB): checked one at a time."""
    body = "Once upon a time, a little owl couldn’t sleep 🦉. " * 110  # ~5.5 KB, not UCS-2
    backup = tmp_path / "stories.json"
    with backup.open("w") as file:
        file.write(json.dumps(document([]))[:-2])  # up to the stories' "["
        for number in range(20_000, 0, -1):
            story = entry(number, body=body, title=f"Night {number}")
            file.write(("" if number == 20_000 else ",") + json.dumps(story, ensure_ascii=False))
        file.write("]}")
    size_mb = backup.stat().st_size >> 20
    assert size_mb > 100
    run = measured("check", backup)
    backup.unlink()  # 120 MB: not left behind in pytest's temporary folders
    assert run.code == 0 and run.out.strip() == "20000 stories", (run.out, run.err)
    assert run.peak_mb < PEAK_MAX_MB, f"peak {run.peak_mb:.0f} MB"
    print(f"20000 stories ({size_mb} MB): peak {run.peak_mb:.0f} MB")


def test_a_zip_listing_a_great_many_files_is_refused_in_little_memory(tmp_path):
    listing = tmp_path / "listing.zip"  # 32,000 files of long names: a 5 MB list of files
    with zipfile.ZipFile(listing, "w") as archive:
        archive.writestr("stories.json", json.dumps(document([entry(1)])))
        for number in range(32_000):
            archive.writestr(f"{number:0120}", b"")
    run = measured("check", listing)
    assert run.code == 1 and "too many files" in run.out, run.out
    assert run.peak_mb < PEAK_MAX_MB
    print(f"a 32,000-file zip: refused, peak {run.peak_mb:.0f} MB")


@pytest.mark.parametrize("size", [10, 300 * 1024 * 1024])
async def test_a_zip_whose_directory_lies_about_a_size_is_refused(db, size):
    data = with_size_in_directory(backup_zip([entry(2), entry(1)]), b"stories.json", size)
    with pytest.raises(BackupError):
        await import_backup(db, data)
    assert await rows(db) == (0, 0)


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
async def test_a_zip_compressed_as_no_backup_is_refused(db, method):
    """bzip2 and lzma are decompressed by zipfile in unbounded pieces: not read at all."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=method) as archive:
        archive.writestr("stories.json", json.dumps(document([entry(1)])))
    with pytest.raises(BackupError, match="compressed"):
        await import_backup(db, buffer.getvalue())
    assert await rows(db) == (0, 0)
