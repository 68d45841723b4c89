"""tools/outdated.py (make outdated): the lock's pins that pip's index knows newer releases
of, one line each, and only the lock's."""

from __future__ import annotations

import importlib.util
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "outdated.py"
spec = importlib.util.spec_from_file_location("outdated", TOOL)
assert spec is not None and spec.loader is not None
outdated = importlib.util.module_from_spec(spec)
spec.loader.exec_module(outdated)

LOCK = """\
openai==3.57.0 \\
    # via bedtime-stories
SQLAlchemy==2.0.59 ; python_version >= '3.11'
typing-extensions==4.15.0
"""


def test_the_lock_s_pins_are_read_by_their_normalised_names():
    assert outdated.pins(LOCK) == {"openai": "3.57.0", "sqlalchemy": "2.0.59",
                                   "typing-extensions": "4.15.0"}


def test_only_pins_of_the_lock_are_named_with_their_pin_and_the_newest():
    pip_says = [{"name": "uv", "version": "0.9", "latest_version": "1.0"},  # not a pin
                {"name": "typing_extensions", "version": "4.15.0", "latest_version": "4.16.0"},
                {"name": "openai", "version": "3.57.0", "latest_version": "3.63.0"}]
    assert outdated.behind(outdated.pins(LOCK), pip_says) == [
        "openai 3.57.0 -> 3.63.0", "typing-extensions 4.15.0 -> 4.16.0"]
