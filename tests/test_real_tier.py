"""The real tier's own rules (tests/real_model, make test-real): its build is cached by
every pin, and where it cannot be built it is skipped with the reason, except in CI,
where that fails it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers.llama_server import _env_tool, build
from tests.helpers.platform import ROOT


def test_the_cache_is_outside_the_clone_and_keyed_by_every_pin(monkeypatch, tmp_path):
    tool = _env_tool()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = tool.cache_dir()
    assert first.parent == tmp_path / "bedtime-stories" and ROOT not in first.parents
    for pin, other in (("LLAMA_CPP", "llama-cpp-python[server]==0.3.35"),
                       ("WEIGHTS_SHA256", "0" * 64), ("CMAKE_ARGS", "-DGGML_NATIVE=OFF")):
        monkeypatch.setattr(tool, pin, other)
        assert tool.cache_dir() != first, pin
        monkeypatch.undo()
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert tool.cache_dir() == first


def test_without_a_compiler_the_build_says_why(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    assert build(tmp_path / "build.log") == (
        "no cmake, c++, cc on PATH to build llama-cpp-python")


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
    assert "the real tier must run here: no cmake, c++, cc on PATH" in run.stdout


@pytest.mark.slow
def test_elsewhere_a_tier_that_cannot_run_is_skipped_with_the_reason(tmp_path):
    run = _tier(tmp_path)
    assert run.returncode == 0, run.stdout
    assert "1 skipped" in run.stdout and "no cmake, c++, cc on PATH" in run.stdout
