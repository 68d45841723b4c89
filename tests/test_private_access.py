"""The app reaches into no object's private attributes but its own: a dependency's
release that renames one would break start-up (`databases`' pool was once reached as
`_database._backend._pool`)."""

from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app"


def private_accesses(source: str) -> list[str]:
    """`x._name` where x is not `self` or `cls`, and getattr(x, "_name"), as written."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
            found.append(ast.unparse(node))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "setattr", "hasattr") and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant)
                and str(node.args[1].value).startswith("_")
                and not str(node.args[1].value).startswith("__")):
            found.append(ast.unparse(node))
    return found


def test_the_check_sees_what_it_is_about():
    assert private_accesses("pool = self._database._backend._pool") == [
        "self._database._backend._pool", "self._database._backend"]
    assert private_accesses("getattr(engine, '_pool')") == ["getattr(engine, '_pool')"]
    assert private_accesses("self._pool = other.pool; cls._cache; x.__class__") == []


def test_no_module_of_the_app_touches_another_objects_private_attributes():
    found = {str(path.relative_to(APP.parent)): accesses
             for path in sorted(APP.rglob("*.py"))
             if (accesses := private_accesses(path.read_text()))}
    assert found == {}
