"""The real tier's own rules (tests/real_model, make test-real): its build comes from locks
with every file's hash and is cached by them, it says how far it is and stops at its limit,
and where it cannot be built it is skipped with the reason, except in CI, where that fails
it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.helpers.llama_server import _env_tool, build
from tests.helpers.platform import ROOT


def test_the_cache_is_outside_the_clone_and_keyed_by_the_locks(monkeypatch, tmp_path):
    tool = _env_tool()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = tool.cache_dir()
    assert first.parent == tmp_path / "cache" / "bedtime-stories" and ROOT not in first.parents
    for index, lock in enumerate(tool.LOCKS):
        changed = tmp_path / lock.name
        changed.write_text(lock.read_text().replace("==", "== ", 1))
        locks = list(tool.LOCKS)
        locks[index] = changed
        monkeypatch.setattr(tool, "LOCKS", tuple(locks))
        assert tool.cache_dir() != first, lock.name
        monkeypatch.undo()
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for pin, other in (("WEIGHTS_SHA256", "0" * 64), ("CMAKE_ARGS", "-DGGML_NATIVE=OFF")):
        monkeypatch.setattr(tool, pin, other)
        assert tool.cache_dir() != first, pin
        monkeypatch.undo()
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert tool.cache_dir() == first


def _entries(lock: Path) -> list[tuple[str, list[str]]]:
    """Each requirement of a lock and the hashes under it (a line ending in \\ continues)."""
    text = re.sub(r"\\\n\s*", " ", lock.read_text())
    lines = (line.split("#")[0].strip() for line in text.splitlines())
    return [(line.split(" --hash=")[0].strip(), re.findall(r"--hash=sha256:[0-9a-f]{64}", line))
            for line in lines if line]


def test_every_file_the_tier_installs_is_pinned_with_its_hash():
    for lock in _env_tool().LOCKS:
        entries = _entries(lock)
        assert entries, lock
        for requirement, hashes in entries:
            assert re.match(r"^[a-z0-9._-]+==\S+( ;.*)?$", requirement), requirement
            assert hashes, f"{lock.name}: {requirement} has no hash"


def test_the_locks_pin_what_their_inputs_ask_for():
    # A pin changed in an .in without `make lock-real` is caught here, not on a fresh machine.
    for lock in _env_tool().LOCKS:
        pinned = {Requirement(r.split(" ;")[0]).name: Requirement(r.split(" ;")[0]).specifier
                  for r, _ in _entries(lock)}
        for line in lock.with_suffix(".in").read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                wanted = Requirement(line)
                assert wanted.name in pinned, f"{lock.name} lacks {wanted.name}: make lock-real"
                (version,) = (spec.version for spec in pinned[wanted.name])
                assert wanted.specifier.contains(version), f"{lock.name}: {wanted} ({version})"
    assert _env_tool().llama_cpp_pin() == "llama-cpp-python[server]==0.3.36"


SLOW_CHILD = """
import subprocess, sys, time
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print(grandchild.pid, flush=True)
print("[7/120] /usr/bin/c++ -O3 -DNDEBUG -c /tmp/x/vendor/llama.cpp/ggml/src/ggml.c", flush=True)
time.sleep(60)
"""


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


def test_a_build_past_its_limit_is_stopped_with_one_clear_line(monkeypatch, tmp_path, capsys):
    tool = _env_tool()
    monkeypatch.setattr(tool, "PROGRESS_S", 0.2)
    log = tmp_path / "build.log"
    with pytest.raises(SystemExit) as stopped:
        tool._run([sys.executable, "-c", SLOW_CHILD], log, time.monotonic(), 1.5)
    message = str(stopped.value)
    assert message == ("real model: the llama-cpp-python build passed its 0.025-minute limit "
                       "(REAL_MODEL_BUILD_MINUTES) and was stopped at: [7/120] compiling ggml.c")
    # Progress lines came while it ran, and the compiler's own processes were stopped too.
    assert "building, [7/120] compiling ggml.c" in capsys.readouterr().out
    grandchild = int(log.read_text().split()[0])
    until = time.monotonic() + 10
    while not _gone(grandchild) and time.monotonic() < until:
        time.sleep(0.05)
    assert _gone(grandchild)


def test_the_tier_reports_the_limit_in_its_skip_or_failure(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("REAL_MODEL_BUILD_MINUTES", "0")
    assert build(tmp_path / "build.log") == (
        "the llama-cpp-python build failed (real model: the llama-cpp-python build passed its "
        "0-minute limit (REAL_MODEL_BUILD_MINUTES) and was stopped at: starting); "
        f"see {tmp_path / 'build.log'}")


def test_the_limit_is_read_in_minutes(monkeypatch):
    tool = _env_tool()
    monkeypatch.delenv("REAL_MODEL_BUILD_MINUTES", raising=False)
    assert tool.limit_seconds() == 40 * 60
    monkeypatch.setenv("REAL_MODEL_BUILD_MINUTES", "90")
    assert tool.limit_seconds() == 90 * 60
    monkeypatch.setenv("REAL_MODEL_BUILD_MINUTES", "90m")
    with pytest.raises(SystemExit, match="REAL_MODEL_BUILD_MINUTES='90m': give the build's"):
        tool.limit_seconds()


def test_without_a_compiler_the_build_says_why(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    assert build(tmp_path / "build.log") == "no c++, cc on PATH to build llama-cpp-python"


def _tier(tmp_path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "REAL_MODEL_REQUIRED")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q",
         "-rs", "-m", "real_model", "tests/real_model", "-k", "profile"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**clean, "XDG_CACHE_HOME": str(tmp_path), "PATH": str(tmp_path / "none"), **env})


@pytest.mark.parametrize("ci", [{"CI": "true"}, {"REAL_MODEL_REQUIRED": "1"}],
                         ids=["CI", "REAL_MODEL_REQUIRED"])
@pytest.mark.slow
def test_in_ci_a_tier_that_cannot_run_fails(tmp_path, ci):
    run = _tier(tmp_path, **ci)
    assert run.returncode == 1, run.stdout
    assert "the real tier must run here: no c++, cc on PATH" in run.stdout


@pytest.mark.slow
def test_elsewhere_a_tier_that_cannot_run_is_skipped_with_the_reason(tmp_path):
    run = _tier(tmp_path)
    assert run.returncode == 0, run.stdout
    assert "1 skipped" in run.stdout and "no c++, cc on PATH" in run.stdout
