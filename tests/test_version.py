"""A deployer can tell which release runs and what it brought: one SemVer version, in
pyproject.toml alone, shown by `python -m app --version` (and /healthz, the start-up
line: tests/web/test_api.py, tests/test_embedded_stops.py), and CHANGELOG.md in Keep a
Changelog's form with that version as its newest release."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from app.version import version

ROOT = Path(__file__).resolve().parent.parent
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
RELEASE = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", re.MULTILINE)


def test_the_version_is_pyprojects_and_semver():
    written = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert version() == written
    assert SEMVER.match(written)


@pytest.mark.slow
def test_python_m_app_says_its_version():
    result = subprocess.run([sys.executable, "-m", "app", "--version"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"bedtime-stories {version()}"


def test_the_changelog_keeps_a_changelog_with_this_version_as_its_newest_release():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "[Keep a Changelog](https://keepachangelog.com/en/1.1.0/)" in text
    assert "[Semantic Versioning](https://semver.org/spec/v2.0.0.html)" in text
    assert text.index("## [Unreleased]") < text.index(f"## [{version()}]")
    releases = RELEASE.findall(text)
    assert releases[0][0] == version()
    numbers = [tuple(int(part) for part in number.split(".")) for number, _ in releases]
    assert numbers == sorted(numbers, reverse=True) and len(set(numbers)) == len(numbers)
    assert [day for _, day in releases] == sorted((day for _, day in releases), reverse=True)
    assert releases[-1][0] == "0.1.0"


def test_a_license_is_there_and_named_in_pyproject():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
