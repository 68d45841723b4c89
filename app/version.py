"""The running version, written once: pyproject.toml's `version` (SemVer; CHANGELOG.md
says what each one brought).

    version()        # "0.6.0"

Read from pyproject.toml beside the app (a platform deploys the whole repository), else
from the installed package's metadata; "unknown" if neither is there.
"""

from __future__ import annotations

import functools
import tomllib
from importlib import metadata
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
DISTRIBUTION = "bedtime-stories"


@functools.cache
def version() -> str:
    try:
        found = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["version"]
        return str(found)
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        pass
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"
