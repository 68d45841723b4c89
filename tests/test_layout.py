"""The layout is the architecture: each part imports only what lies below it.

LAYERS is the one list of every module of app/ and its layer, lowest first; a module may
import its own layer and those below, never one above, and no import (at the top of a
file, inside a function, or for types alone) closes a circle."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parent.parent / "app"

# The layers, lowest first, and every module of app/ in one of them (a package by its
# own name: "queue" is app/queue/__init__.py). A new module is added here, to its layer.
LAYERS: dict[str, tuple[str, ...]] = {
    # The core types and small pure helpers: no I/O, nothing of the parts above.
    "core": ("app", "stories", "dates", "logs", "backoff", "errors", "config_values",
             "dsn",  # a database URL's options, read once: what each connection is opened with
             "requests", "finishing", "idea_words", "ideas", "version",
             "failures",  # why a job failed: one record per code, its words marked N_
             "kinds",  # the kinds of job: one record each, claimed, made and charged
             # the languages and lengths: one record each, everything else derives from them
             "languages", "lengths", "titles",
             # the household's language: the catalogues, which one a request reads, and
             # its dates, numbers and lists (money is the money layer's: money.amounts)
             "i18n.catalogues", "i18n.choice", "i18n", "i18n.formats"),
    # PostgreSQL: where it is, the pool, the migrations, the named statements.
    "database": ("embedded", "db", "queries"),
    # The model: the provider calls and the demo storyteller.
    "storytelling": ("storytelling", "storytelling.availability", "storytelling.capped",
                     "storytelling.capped_transport", "storytelling.demo",
                     "storytelling.demo_arabic", "storytelling.endpoints",
                     "storytelling.final_response", "storytelling.limits",
                     "storytelling.models", "storytelling.moderation", "storytelling.openai",
                     "storytelling.prompt", "storytelling.provider", "storytelling.readiness",
                     "storytelling.reader", "storytelling.responses", "storytelling.retrieves",
                     "storytelling.shaping",
                     "storytelling.shutdowns", "storytelling.streaming"),
    # Prices, the ledger, the budget (and how their settings read).
    "money": ("money", "money.amounts", "money.chart", "money.ledger", "money.meter",
              "money.prices", "money.settings", "money.tokens"),
    # The settings, read once: they name the prices and budget they parse.
    "config": ("config",),
    "illustrating": ("illustrating", "illustrating.demo", "illustrating.openai_images",
                     "illustrating.prompt", "illustrating.small", "illustrating.svg"),
    # Stories read aloud: the narrators (Chat Completions' audio, a speech server), the
    # audio checked and joined, the words cut into parts.
    "narrating": ("narrating", "narrating.audio", "narrating.chat_audio", "narrating.parts",
                  "narrating.speech"),
    "queue": ("queue", "queue.background_writer", "queue.chat_writer", "queue.check",
              "queue.control", "queue.estimates", "queue.intake", "queue.intake_params",
              "queue.jobs", "queue.liveness", "queue.narration_writer", "queue.narrations",
              "queue.picture_writer", "queue.pictures",
              "queue.processes", "queue.refusals", "queue.screener", "queue.startup",
              "queue.store", "queue.storing", "queue.sweeper", "queue.unfinished",
              "queue.wakeup", "queue.worker", "queue.writing"),
    "security": ("security", "security.clients", "security.crosssite", "security.csrf",
                 "security.guard", "security.headers", "security.limits",
                 "security.secret_key", "security.sessions"),
    "shelf": ("shelf", "shelf.archive", "shelf.backup", "shelf.backup_files",
              "shelf.backup_json", "shelf.backup_narrations", "shelf.backup_pictures",
              "shelf.backup_reading",
              "shelf.children", "shelf.household", "shelf.imports",
              "shelf.schedule", "shelf.scheduled", "shelf.sequels", "shelf.shares",
              "shelf.store", "shelf.story_form"),
    # The long-lived parts of one running app, built by the lifespan, handed to the web.
    "services": ("services",),
    "web": ("web", "web.access", "web.assets", "web.backups", "web.cards", "web.children",
            "web.compression", "web.errors", "web.form", "web.generate", "web.inputs",
            "web.jobs", "web.login", "web.narrations", "web.negotiation", "web.offline",
            "web.pages",
            "web.pictures", "web.preferences", "web.routes", "web.shares", "web.spend",
            "web.stories", "web.story_page", "web.templates", "web.unfinished", "web.language"),
    # What a process runs, the app factory, the command line.
    "process": ("runtime", "main", "__main__"),
}

# part -> the parts of app it must never import
NEVER = {
    "stories": {"*"},  # the core types: nothing of the app's own but the logs (and the
    # languages' records: ALWAYS)
    "dates": {"*"},
    "ideas": {"queue", "shelf", "web", "security", "storytelling", "services", "main",
              "runtime"},  # pure: the core types only
    "storytelling": {"queue", "shelf", "web", "security", "services", "main", "runtime"},
    "illustrating": {"queue", "shelf", "web", "security", "services", "main", "runtime"},
    "narrating": {"queue", "shelf", "web", "security", "services", "main", "runtime",
                  "illustrating"},
    "queue": {"shelf", "web", "security", "services", "main", "runtime"},
    "shelf": {"web", "security", "services", "main", "runtime"},
    "security": {"web", "shelf", "queue", "storytelling", "services", "main", "runtime"},
    "web": {"services", "runtime", "main"},  # handed the services, never builds them
}
# What any part may import: the logs, and the story languages' records (pure data: the
# language a story is in is one of its core facts).
ALWAYS = {"logs", "languages", "idea_words"}
# The parts below the handlers: none of them imports app.web, not even for a type.
BELOW_WEB = ("queue", "security", "shelf", "storytelling", "illustrating", "narrating")


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
        forbidden = parts - ALWAYS if NEVER[part] == {"*"} else parts & NEVER[part]
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


# -- every module in its layer, no circle, nothing upwards ---------------------------------


def dotted(path: Path) -> str:
    parts = path.relative_to(APP.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_files() -> dict[str, Path]:
    return {dotted(path): path for path in sorted(APP.rglob("*.py"))}


def layer_of() -> dict[str, int]:
    return {("app" if name == "app" else f"app.{name}"): rank
            for rank, names in enumerate(LAYERS.values()) for name in names}


def import_graph(files: dict[str, Path]) -> dict[str, set[str]]:
    """Each module -> the modules of app it imports, by any statement anywhere in it (at
    the top, inside a function, under TYPE_CHECKING); `from app.web import x` counts as
    app.web.x when that is a module, else as app.web."""
    graph = {}
    for name, path in files.items():
        found = set()
        for imported in every_import(path):
            while imported and imported not in files:
                imported = imported.rpartition(".")[0]
            if imported and imported not in (name, "app"):
                found.add(imported)
        graph[name] = found
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: each strongly connected set of two or more modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(graph.get(module, ())):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            circle = []
            while True:
                member = stack.pop()
                circle.append(member)
                if member == module:
                    break
            if len(circle) > 1:
                found.append(sorted(circle))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def upward_imports(graph: dict[str, set[str]], layers: dict[str, int]) -> list[str]:
    names = list(LAYERS)
    return [f"{module} ({names[layers[module]]}) imports {other} ({names[layers[other]]})"
            for module, imported in sorted(graph.items()) for other in sorted(imported)
            if layers[other] > layers[module]]


def test_every_module_of_app_has_its_layer():
    listed = [name for names in LAYERS.values() for name in names]
    assert len(listed) == len(set(listed)), "a module is listed twice"
    assert set(layer_of()) == set(module_files())


def test_no_import_circle_even_inside_a_function():
    assert cycles(import_graph(module_files())) == []


def test_nothing_imports_a_layer_above_its_own():
    assert upward_imports(import_graph(module_files()), layer_of()) == []


def test_the_circle_check_sees_an_import_hidden_in_a_function(tmp_path):
    (tmp_path / "a.py").write_text("from app.b import x\n")
    (tmp_path / "b.py").write_text("def f():\n    from app.a import y\n")
    files = {"app.a": tmp_path / "a.py", "app.b": tmp_path / "b.py"}
    assert cycles(import_graph(files)) == [["app.a", "app.b"]]
    assert cycles({"app.a": {"app.b"}, "app.b": set()}) == []


def test_the_layer_check_sees_an_upward_import():
    layers = {"app.stories": 0, "app.web.routes": len(LAYERS) - 2}
    assert upward_imports({"app.stories": {"app.web.routes"}, "app.web.routes": set()},
                          layers) == ["app.stories (core) imports app.web.routes (web)"]


@pytest.mark.parametrize("part", ["queue", "shelf", "storytelling", "security", "web"])
def test_a_package_s_may_use_names_every_part_it_imports(part):
    """Each package's docstring says what it may use; the docstring is kept true."""
    doc = ast.get_docstring(ast.parse((APP / part / "__init__.py").read_text())) or ""
    may_use = doc.split("May use", 1)[1].split("Never", 1)[0].split("None of them", 1)[0]
    named = set(re.findall(r"\bapp\.(\w+)", may_use))
    used = set().union(*(imported_parts(module) for module in (APP / part).glob("*.py")))
    assert used - {part} <= named, f"app/{part}/__init__.py omits {sorted(used - named - {part})}"
