"""tools/system-packages waits for apt's lock, a bounded wait, and when apt still fails it
says why in apt's own words; run here against a stand-in apt-get on an empty machine."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCKED = ("E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 "
          "(unattended-upgr)")


def stand_in(folder: Path, name: str, script: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)


def run(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """The script as root with apt, with neither package installed; apt-get's calls."""
    bin_dir, calls = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    for tool in ("mktemp", "grep", "sed", "tail", "rm"):  # what the script itself uses
        (bin_dir / tool).symlink_to(shutil.which(tool))
    stand_in(bin_dir, "id", "echo 0")
    stand_in(bin_dir, "service", "exit 0")
    stand_in(bin_dir, "apt-get",
             f'echo "$@" >> {calls}\n'
             'case "$*" in *install*) echo "Reading package lists..." >&2\n'
             f'  echo "{LOCKED}" >&2; exit 100;; esac')
    env = {"PATH": f"{bin_dir}:/nonexistent", "SYSTEM_BIN_DIRS": str(tmp_path / "empty"),
           "APT_LOCK_WAIT_S": "120"}
    result = subprocess.run(["/bin/bash", str(ROOT / "tools" / "system-packages"), *args],
                            env=env, capture_output=True, text=True, timeout=60)
    return result, calls.read_text().splitlines() if calls.exists() else []


def test_apt_waits_for_its_lock_and_a_failure_says_why(tmp_path):
    result, calls = run(tmp_path)
    assert result.returncode == 0, result.stderr  # the tests that need them are skipped
    assert [call.split()[2] for call in calls] == ["update", "install", "install"]
    assert [call.split()[-1] for call in calls[1:]] == ["chromium", "pgbouncer"]
    assert all("DPkg::Lock::Timeout=120" in call for call in calls), calls
    assert "apt-get could not install chromium:" in result.stdout
    assert f"system-packages:   {LOCKED}" in result.stdout
    assert "Reading package lists" not in result.stdout  # only apt's errors
    assert "tests that need chromium pgbouncer are skipped" in result.stdout


def test_ci_fails_when_apt_could_not_install(tmp_path):
    result, _ = run(tmp_path, "--required")
    assert result.returncode == 1
