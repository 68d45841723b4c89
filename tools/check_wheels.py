"""Every pin in the locks installs on a Python this machine may not have (3.14, say):
a wheel for it on Linux (x86_64 and aarch64), or else a source distribution.

    python tools/check_wheels.py 3.14        # exit 1, naming each pin that has neither

pip itself decides what a wheel is good for (`pip download --python-version --platform`);
only the fallback asks PyPI's JSON API whether a source distribution exists.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCKS = ("requirements.txt", "requirements-dev.txt")
PLATFORMS = {
    "x86_64": ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
               "linux_x86_64"],
    "aarch64": ["manylinux_2_28_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64",
                "linux_aarch64"],
}
_PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s;]+)")


def pins() -> list[str]:
    found = {}
    for lock in LOCKS:
        for line in (ROOT / lock).read_text().splitlines():
            match = _PIN.match(line)
            if match:
                found[match.group(1).lower()] = f"{match.group(1)}=={match.group(2)}"
    return sorted(found.values())


def has_wheel(pin: str, python: str, platforms: list[str], folder: str) -> bool:
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
               "--only-binary=:all:", "--python-version", python, "--dest", folder]
    for platform in platforms:
        command += ["--platform", platform]
    return subprocess.run([*command, pin], capture_output=True).returncode == 0


def has_source(pin: str) -> bool:
    name, version = pin.split("==")
    with urllib.request.urlopen(f"https://pypi.org/pypi/{name}/{version}/json", timeout=30) as r:
        files = json.load(r)["urls"]
    return any(f["packagetype"] == "sdist" for f in files)


def main(python: str) -> int:
    missing = []
    with tempfile.TemporaryDirectory() as folder:
        for pin in pins():
            for machine, platforms in PLATFORMS.items():
                if not has_wheel(pin, python, platforms, folder) and not has_source(pin):
                    missing.append(f"{pin} ({machine})")
    if missing:
        print(f"check-wheels: no wheel and no source for Python {python}: {', '.join(missing)}")
        return 1
    print(f"check-wheels: all {len(pins())} pins install on Python {python} (x86_64, aarch64)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "3.14"))
