"""An evening in Spanish, Arabic, Ukrainian and Japanese at the three sizes, and a Polish
grandmother's shared page, as screenshots in test-artifacts/languages/ (to look at, not to
commit).

    .venv/bin/python tools/language_screenshots.py

It runs tests/browser/test_browser_languages_evening.py, which also checks each page is
laid out well and, in Arabic, Ukrainian and Japanese, shows no English left over (Arabic
reading right to left).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    # -m browser: every evening, the variants (which make test leaves out) too.
    return subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-m",
                            "browser", "tests/browser/test_browser_languages_evening.py"],
                           cwd=ROOT)


if __name__ == "__main__":
    raise SystemExit(main())
