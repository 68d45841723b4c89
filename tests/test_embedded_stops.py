"""The embedded PostgreSQL stops with the app: `python -m app serve` with no DATABASE_URL,
stopped by SIGTERM, by SIGINT, or by a Ctrl-C at `make run` (SIGINT to the whole process
group), leaves no postgres running for its data directory; one left running by a crash
is taken over at the next start and stops with it. The start-up line names the version."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.version import version
from tests.helpers.database import postgres_dir
from tests.helpers.fake_llm import free_port

ROOT = Path(__file__).resolve().parent.parent
START_S = 120  # a first start makes the data directory: initdb, on a busy machine


@pytest.fixture
def folder() -> Iterator[Path]:
    """Where the app runs (its .data there): outside pytest's tree, which a pytest session
    starting meanwhile sets to mode 0700, out of reach of the server's own system user."""
    path = postgres_dir().parent
    yield path
    shutil.rmtree(path, ignore_errors=True)


def postgres_pids(pgdata: Path) -> list[int]:
    """The postgres processes serving `pgdata` (its postmaster and children)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if command and command[0].endswith(b"postgres") and str(pgdata).encode() in command:
            pids.append(int(entry.name))
    return pids


def start(folder: Path, *command: str) -> tuple[subprocess.Popen[bytes], Path]:
    """The app, serving from `folder` (its .data there) in a process group of its own."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DATABASE_", "OPENAI_", "TEST_DATABASE"))}
    env |= {"PORT": str(free_port()), "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    log = folder / f"app-{time.monotonic_ns()}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(list(command or (sys.executable, "-m", "app", "serve")),
                                   cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    deadline = time.monotonic() + START_S
    while "event=started" not in log.read_text():
        assert process.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)
    return process, log


def stopped(process: subprocess.Popen[bytes], log: Path) -> str:
    assert process.wait(timeout=60) == 0 or process.returncode in (-2, 2, 130), log.read_text()
    return log.read_text()


@pytest.mark.slow
@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT", "Ctrl-C"])
def test_the_embedded_postgres_stops_with_the_app(folder, how):
    pgdata = folder / ".data" / "postgres"
    process, log = start(folder)
    assert f"version={version()}" in log.read_text()  # the start-up line names it
    assert postgres_pids(pgdata)
    if how == "Ctrl-C":  # the terminal signals the whole foreground group
        os.killpg(process.pid, signal.SIGINT)
    else:
        process.send_signal(getattr(signal, how))
    output = stopped(process, log)
    assert "Traceback" not in output, output
    assert postgres_pids(pgdata) == []


@pytest.mark.slow
def test_make_runs_ctrl_c_stops_the_embedded_postgres(folder):
    pgdata = folder / ".data" / "postgres"
    # make run from folder (its .data there), on this suite's venv as it is (STAMP= : no
    # reinstall is asked of make here).
    process, log = start(folder, "make", "--no-print-directory", "-f", str(ROOT / "Makefile"),
                         "run", f"VENV={ROOT / '.venv'}", "STAMP=", "PYTHON=false")
    assert postgres_pids(pgdata)
    os.killpg(process.pid, signal.SIGINT)
    process.wait(timeout=60)
    deadline = time.monotonic() + 30  # make returns at once; the app finishes its stop
    while postgres_pids(pgdata):
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)


@pytest.mark.slow
def test_a_postgres_left_by_a_crash_is_taken_over_and_stops_with_the_next_run(folder):
    pgdata = folder / ".data" / "postgres"
    crashed, _ = start(folder)
    crashed.kill()  # the app's process alone, as a crash or an OOM kill ends it
    crashed.wait(timeout=30)
    left = postgres_pids(pgdata)
    assert left  # the server it started runs on
    process, log = start(folder)
    assert "event=embedded_postgres_taken_over" in log.read_text()
    assert set(left) & set(postgres_pids(pgdata))  # the same server, taken over
    process.send_signal(signal.SIGTERM)
    stopped(process, log)
    assert postgres_pids(pgdata) == []
