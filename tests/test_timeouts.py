"""Every bound on a wait in app/ is `asyncio.timeout`, never `asyncio.wait_for`.

On Python 3.11, wait_for swallows a cancel that lands just as the awaited call finishes
(bpo-42130; rewritten on timeouts in 3.12): the family's stop then cancels a follow that
goes on reading, and the stop never takes effect. asyncio.timeout has no such window."""

from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app"


def wait_for_calls(source: str) -> list[int]:
    """The lines of `source` that call asyncio.wait_for (or a bare, imported wait_for)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            called = node.func
            name = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", "")
            if name == "wait_for" and not (isinstance(called, ast.Attribute)
                                           and ast.unparse(called.value) != "asyncio"):
                lines.append(node.lineno)
    return lines


def test_no_wait_is_bounded_by_wait_for():
    found = {str(path.relative_to(APP)): lines for path in sorted(APP.rglob("*.py"))
             if (lines := wait_for_calls(path.read_text(encoding="utf-8")))}
    assert found == {}


def test_the_check_sees_both_spellings_and_not_a_locator():
    assert wait_for_calls("import asyncio\nasync def f(x):\n    await asyncio.wait_for(x, 1)\n"
                          ) == [3]
    assert wait_for_calls("from asyncio import wait_for\nasync def f(x):\n"
                          "    await wait_for(x, 1)\n") == [3]
    assert wait_for_calls("async def f(page):\n    await page.locator('p').wait_for()\n") == []
