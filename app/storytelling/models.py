"""The models the installed `openai` library knows, and the ones it says are going away.

    known = chat_models()          # read from openai/types/shared/chat_model.py
    "gpt-6-luna" in known.names    # listed
    known.deprecated.get(model)    # its announced shutdown date; None: listed, no date

The library's generated type files carry the provider's model list (a `Literal[...]`) and,
in the docstring under it, a "Deprecated values" block with each model's announced
shutdown date. The files are read as text, without importing the library (that takes most
of a second), and whatever cannot be found or read gives an empty answer, never an error:
this only feeds warnings and tests, nothing depends on it to run.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

# Where each list lives inside the installed package (the first that exists is read).
CHAT_MODEL_FILES = ("types/shared/chat_model.py", "types/chat_model.py")
IMAGE_MODEL_FILES = ("types/image_model.py", "types/shared/image_model.py")
SPEECH_MODEL_FILES = ("types/audio/speech_model.py",)
DEPRECATED_HEADING = "Deprecated values:"

_QUOTED = re.compile(r'"([^"]+)"')
_ISO_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
# The prose form some entries use: "was shut down on October 23, 2026".
_PROSE_DATE = re.compile(r"\b([A-Z][a-z]+ \d{1,2}, \d{4})\b")


@dataclass(frozen=True)
class ModelList:
    """One of the library's model lists: every name, and those it marks deprecated, each
    with its announced shutdown date (None: deprecated with no date given)."""

    names: tuple[str, ...] = ()
    deprecated: dict[str, date | None] = field(default_factory=dict)

    def is_current(self, model: str) -> bool:
        """Listed, and not marked deprecated."""
        return model in self.names and model not in self.deprecated


def chat_models() -> ModelList:
    """The library's `ChatModel` list."""
    return read_model_list(_library_file(CHAT_MODEL_FILES))


def image_models() -> ModelList:
    """The library's `ImageModel` list."""
    return read_model_list(_library_file(IMAGE_MODEL_FILES))


def speech_models() -> ModelList:
    """The library's `SpeechModel` list (the speech API's: NARRATOR=speech)."""
    return read_model_list(_library_file(SPEECH_MODEL_FILES))


def _library_file(candidates: tuple[str, ...]) -> Path | None:
    """The first of `candidates` in the installed openai package, found without importing it."""
    try:
        spec = importlib.util.find_spec("openai")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        for candidate in candidates:
            path = Path(folder) / candidate
            if path.is_file():
                return path
    return None


def read_model_list(path: Path | None) -> ModelList:
    """The names of the file's first `Literal[...]` alias and the deprecated block of the
    docstring under it; an empty list when the file is missing or not of that shape."""
    if path is None:
        return ModelList()
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, SyntaxError, ValueError):
        return ModelList()
    body = tree.body
    for index, node in enumerate(body):
        names = _literal_names(node)
        if names is None:
            continue
        docstring = ""
        if index + 1 < len(body):
            following = body[index + 1]
            if (isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)):
                docstring = following.value.value
        return ModelList(names=names, deprecated=parse_deprecated(docstring))
    return ModelList()


def _literal_names(node: ast.stmt) -> tuple[str, ...] | None:
    """`X: TypeAlias = Literal["a", "b"]` (or `X = Literal[...]`): its strings."""
    value = node.value if isinstance(node, ast.AnnAssign | ast.Assign) else None
    if not isinstance(value, ast.Subscript):
        return None
    target = value.value
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
    if name != "Literal":
        return None
    items = value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice]
    return tuple(item.value for item in items
                 if isinstance(item, ast.Constant) and isinstance(item.value, str))


def parse_deprecated(docstring: str) -> dict[str, date | None]:
    """{model: announced shutdown date or None} from a "Deprecated values:" block, whose
    entries are `- "a", "b": <sentence with the date>` (wrapped over lines)."""
    _, found, block = docstring.partition(DEPRECATED_HEADING)
    if not found:
        return {}
    entries: list[str] = []
    for line in block.splitlines():
        stripped = line.strip()
        if stripped.startswith("- "):
            entries.append(stripped[2:])
        elif stripped and entries:
            entries[-1] += " " + stripped
    deprecated: dict[str, date | None] = {}
    for entry in entries:
        names_part, colon, sentence = entry.partition('":')
        if not colon:
            continue
        when = _shutdown_date(sentence)
        for name in _QUOTED.findall(names_part + '"'):
            deprecated[name] = when
    return deprecated


def _shutdown_date(sentence: str) -> date | None:
    iso = _ISO_DATE.search(sentence)
    if iso:
        try:
            return date.fromisoformat(iso.group(1))
        except ValueError:
            return None
    prose = _PROSE_DATE.search(sentence)
    if prose:
        try:
            return datetime.strptime(prose.group(1), "%B %d, %Y").date()
        except ValueError:
            return None
    return None
