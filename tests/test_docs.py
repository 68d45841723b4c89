"""The docs that must stay true: the module map is generated from the code, and the state
machine's one table (docs/architecture.md) is checked against the statements it names."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from app.queries import load_queries

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"
_CODE = re.compile(r"`([^`]+)`")


@pytest.mark.slow
def test_the_module_map_is_current():
    result = subprocess.run([sys.executable, "tools/module_map.py", "--check"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def state_table() -> list[tuple[str, list[str], list[str]]]:
    """(statement, function files, guard fragments) for each row of the state table."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## The state machine", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not line.startswith("| `"):
            continue
        names = _CODE.findall(cells[0])
        files = [name for name in names[1:] if name.startswith("sql/functions/")]
        rows.append((names[0], files, _CODE.findall(cells[2])))
    return rows


def normalised(sql: str) -> str:
    return " ".join(sql.split())


def statement_text(name: str, files: list[str]) -> str:
    parts = [load_queries().get(name, "")]
    parts += [(ROOT / file).read_text(encoding="utf-8") for file in files]
    return normalised("\n".join(parts))


def missing_guards(rows: list[tuple[str, list[str], list[str]]],
                   text_of=statement_text) -> list[str]:
    return [f"{name}: {guard}" for name, files, guards in rows for guard in guards
            if normalised(guard) not in text_of(name, files)]


_SETS_STATE = re.compile(
    r"\bUPDATE story_jobs\s+SET\b(?:(?!\bWHERE\b).)*?\b(status|claimed_by)\s*=", re.S)
_MAKES_OR_DROPS = re.compile(r"\b(DELETE FROM story_jobs|(intake_job|insert_job|"
                             r"insert_picture_job|insert_narration_jobs)\s*\()")


def status_writers() -> set[str]:
    """Every named statement that moves a job: sets its status or its owner, makes a job,
    drops one."""
    return {name for name, sql in load_queries().items()
            if _SETS_STATE.search(sql) or _MAKES_OR_DROPS.search(sql)}


def test_the_state_table_has_a_row_for_every_status_write_and_no_other():
    names = [name for name, _, _ in state_table()]
    assert len(names) == len(set(names))
    assert set(names) == status_writers()


def test_every_guard_in_the_state_table_stands_in_its_statement():
    rows = state_table()
    assert all(guards for _, _, guards in rows)
    assert missing_guards(rows) == []


@pytest.mark.parametrize(("name", "guard"), [
    ("claim_next_job", "FOR UPDATE SKIP LOCKED"),
    ("fail_job", "status = 'running' AND claimed_by = :boot_id"),
    ("intake_job", "ON CONFLICT (idempotency_key) DO NOTHING"),
])
def test_the_check_sees_a_guard_the_statement_lost(name, guard):
    def without_the_guard(statement: str, files: list[str]) -> str:
        text = statement_text(statement, files)
        return text.replace(normalised(guard), "") if statement == name else text

    rows = state_table()
    assert missing_guards(rows) == []
    assert missing_guards(rows, without_the_guard) == [f"{name}: {guard}"]
