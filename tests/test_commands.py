"""The admin commands (app/__main__.py) on a database nobody has migrated yet: one line
that says what to do, never a traceback."""

from __future__ import annotations

import pytest

from tests.helpers.backups import run_cli

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("command", ["check", "spend"])
async def test_a_command_on_an_unmigrated_database_says_to_migrate_first(
    command, second_installation, tmp_path
):
    done = run_cli(second_installation, tmp_path, command)
    assert done.returncode == 2 and done.stdout == ""
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"{command}: the database is not migrated")
    assert line.endswith("run `python -m app migrate` first")
