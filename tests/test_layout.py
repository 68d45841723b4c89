"""The layout is the architecture: each part imports only what lies below it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parent.parent / "app"

# part -> the parts of app it must never import
NEVER = {
    "stories": {"*"},  # the core types: nothing of the app's own but the logs
    "dates": {"*"},
    "ideas": {"queue", "shelf", "web", "security", "storytelling", "services", "main",
              "runtime"},  # pure: the core types only
    "storytelling": {"queue", "shelf", "web", "security", "services", "main", "runtime"},
    "illustrating": {"queue", "shelf", "web", "security", "services", "main", "runtime"},
    "queue": {"shelf", "web", "security", "services", "main", "runtime"},
    "shelf": {"web", "security", "services", "main", "runtime"},
    "security": {"web", "shelf", "queue", "storytelling", "services", "main", "runtime"},
    "web": {"services", "runtime", "main"},  # handed the services, never builds them
}
# The parts below the handlers: none of them imports app.web, not even for a type.
BELOW_WEB = ("queue", "security", "shelf", "storytelling", "illustrating")


def imported_parts(path: Path) -> set[str]:
    """The top-level parts of app a module imports (`app.queue.store` -> `queue`), type-only
    imports (under `if TYPE_CHECKING:`) left out."""
    tree = ast.parse(path.read_text())
    type_only = {id(node) for stmt in ast.walk(tree) if isinstance(stmt, ast.If)
                 and getattr(stmt.test, "id", "") == "TYPE_CHECKING"
                 for node in ast.walk(stmt)}
    parts = set()
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("app."):
            parts.add(node.module.split(".")[1])
        elif isinstance(node, ast.ImportFrom) and node.module == "app":
            parts.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            parts.update(a.name.split(".")[1] for a in node.names if a.name.startswith("app."))
    return parts


def modules_of(part: str) -> list[Path]:
    folder = APP / part
    return sorted(folder.glob("*.py")) if folder.is_dir() else [APP / f"{part}.py"]


def every_import(path: Path) -> set[str]:
    """Every module a file imports, wherever the statement is (type-only, inside a
    function) and however it is spelled (`from app.web import x` -> `app.web.x`)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom):  # relative: from . or .. of app
            package = path.parent.relative_to(APP.parent).parts[: 1 - node.level or None]
            module = ".".join([*package, *([node.module] if node.module else [])])
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def imports_web(path: Path) -> list[str]:
    return sorted(name for name in every_import(path) if name.split(".")[:2] == ["app", "web"])


@pytest.mark.parametrize("part", BELOW_WEB)
def test_nothing_below_the_handlers_imports_web(part):
    """The handlers, their templates' helpers and the middleware are app.web's; the domain
    below them (stores, sequels, backups, the guard, sessions) never reaches up for them."""
    modules = sorted((APP / part).rglob("*.py"))
    assert modules
    for module in modules:
        found = imports_web(module)
        assert not found, f"{module.relative_to(APP.parent)} imports {found}"


def test_the_web_check_sees_every_spelling(tmp_path):
    """The check above can fail: each way of importing app.web is caught."""
    for source in ("import app.web.routes", "from app.web import negotiation",
                   "from app.web.errors import error_body",
                   "if TYPE_CHECKING:\n    from app.web.inputs import services_of",
                   "def f():\n    from app.web.templates import render"):
        module = tmp_path / "bad.py"
        module.write_text(source + "\n")
        assert imports_web(module), source
    module = tmp_path / "good.py"
    module.write_text("from app.webhooks import x\nimport app.shelf.store\n")
    assert not imports_web(module)


@pytest.mark.parametrize("part", sorted(NEVER))
def test_no_part_imports_upwards(part):
    for module in modules_of(part):
        parts = imported_parts(module) - {part}
        forbidden = parts - {"logs"} if NEVER[part] == {"*"} else parts & NEVER[part]
        assert not forbidden, f"{module.relative_to(APP.parent)} imports app.{sorted(forbidden)}"


def test_the_job_store_never_imports_a_storyteller():
    assert "storytelling" not in imported_parts(APP / "queue" / "store.py")


def test_the_check_sees_an_upward_import(tmp_path):
    """The rule above can fail: a module that imports upwards is caught."""
    module = tmp_path / "bad.py"
    module.write_text("from app.web.routes import routes\nfrom app.stories import Story\n")
    assert imported_parts(module) == {"web", "stories"}


def test_every_route_is_declared_in_the_one_url_table():
    """Route(...) appears in app/web/routes.py and nowhere else (the static files' one
    route comes from their own Assets, which the table includes)."""
    declaring = {path.relative_to(APP).as_posix() for path in APP.rglob("*.py")
                 if "Route(" in path.read_text()}
    assert declaring == {"web/routes.py", "web/assets.py"}
