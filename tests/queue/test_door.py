"""Every paid job comes in by one door: the intake (app/queue/intake.py) sets it aside against
the month's budget before it is accepted, and a story's first picture is made with its story
(app/queue/storing.py), set aside the same way; a story read aloud comes in by the intake
too, a job per part. These tests fail when a job is made any other
way: a handler (or any module) calling the statements that make jobs, or a new statement
that inserts one."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

from app.queries import load_queries

APP = Path(__file__).resolve().parents[2] / "app"

# The statements that make a job, and the one module that runs each.
JOB_MAKERS = {"intake_job": "queue/store.py", "insert_picture_job": "queue/pictures.py",
              "insert_narration_jobs": "queue/narrations.py",
              # a story restored from a backup: completed at once, no call, nothing paid
              "import_job": "shelf/imports.py"}
# The methods that run them for a paid job, and the modules allowed to call them: the door.
DOOR = {"intake": {"queue/intake.py"}, "make_job": {"queue/intake.py", "queue/storing.py"},
        "make_parts": {"queue/intake.py"}}
# How a statement makes a job: by the functions that insert one, or by a plain INSERT.
MAKES_A_JOB = re.compile(r"\b(intake_job|insert_picture_job|insert_narration_jobs|insert_job)"
                         r"\s*\(|"
                         r"INSERT\s+INTO\s+story_jobs\b", re.IGNORECASE)


@cache
def modules() -> dict[str, ast.Module]:
    """app/'s modules, parsed once for the module's tests (a second each, on a busy machine)."""
    return {path.relative_to(APP).as_posix(): ast.parse(path.read_text(), str(path))
            for path in APP.rglob("*.py")}


def test_only_the_known_statements_make_a_job():
    makers = {name for name, sql in load_queries().items() if MAKES_A_JOB.search(sql)}
    assert makers == set(JOB_MAKERS)


def test_each_statement_that_makes_a_job_is_run_by_its_one_module():
    strings = {module: {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)}
               for module, tree in modules().items()}
    for name, home in JOB_MAKERS.items():
        assert {module for module, found in strings.items() if name in found} == {home}, name


def test_paid_jobs_are_made_only_through_the_door_and_always_with_the_budget():
    callers: dict[str, set[str]] = {method: set() for method in DOOR}
    for module, tree in modules().items():
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in DOOR and module not in (
                        "queue/store.py", "queue/pictures.py", "queue/narrations.py")):
                callers[node.func.attr].add(module)
                keywords = {keyword.arg for keyword in node.keywords}
                # Set aside against the month: the budget and this job's most possible cost.
                assert {"budget", "set_aside"} <= keywords or None in keywords, (
                    module, node.lineno)
    assert callers == DOOR
