"""The pins that have fallen behind the registry: each installed pin of the lock
(requirements-dev.txt, which holds requirements.txt's) against the newest release pip's
own index knows, as one WARNING line each. It never fails: a pin behind is news for
whoever keeps the lock (raise the range in pyproject.toml if needed, then `make lock`),
not a broken build; CI prints the list.

    .venv/bin/python tools/outdated.py      # make outdated
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", re.MULTILINE)


def pins(lock: str) -> dict[str, str]:
    """{normalised name: version} of a lock file's `name==version` lines."""
    return {normalised(name): version for name, version in _PIN.findall(lock)}


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def behind(pinned: dict[str, str], outdated: list[dict[str, str]]) -> list[str]:
    """`pip list --outdated --format=json`'s entries that are pins of the lock, as lines."""
    lines = []
    for entry in sorted(outdated, key=lambda entry: normalised(entry["name"])):
        name = normalised(entry["name"])
        if name in pinned:
            lines.append(f"{name} {pinned[name]} -> {entry['latest_version']}")
    return lines


def main() -> int:
    pinned = pins((ROOT / "requirements-dev.txt").read_text())
    answer = subprocess.run([sys.executable, "-m", "pip", "list", "--outdated",
                             "--format=json", "--disable-pip-version-check"],
                            capture_output=True, text=True, check=False)
    if answer.returncode != 0:
        print(f"outdated: WARNING: could not ask the registry: {answer.stderr.strip()[:200]}")
        return 0
    lines = behind(pinned, json.loads(answer.stdout or "[]"))
    for line in lines:
        print(f"outdated: WARNING: {line}")
    print(f"outdated: {len(lines)} of {len(pinned)} pins behind the registry"
          + ("; raise them with make lock" if lines else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
