"""The catalogues, one per language, read from their .po files once per process.

    translations("es").gettext("Library")     # "Biblioteca"
    script_words("es")                        # '{"Reconnecting…": "Reconectando…", ...}'

The .po files are compiled here, in memory (Babel's reader and writer), rather than at
build time: no compiled file to forget or to fall out of date, and a read-only slug
serves them all the same. Each takes a few milliseconds, once, when a page first needs it.
The scripts' strings (those whose place in the .po is under static/) are handed to each
page as JSON, so static/*.js say them in the page's language with no second request.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from gettext import GNUTranslations, NullTranslations
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Babel is imported when a catalogue is first read: start-up need not wait
    from babel.messages import Catalog

LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"
DOMAIN = "messages"
SCRIPTS = "static/"  # where the scripts' strings come from (babel.cfg)


@dataclass(frozen=True)
class Catalogue:
    translations: NullTranslations
    script_words: str  # JSON: {English: translation} for the scripts' strings ("" for none)


_ENGLISH = Catalogue(NullTranslations(), "")
_loaded: dict[str, Catalogue] = {}
_lock = threading.Lock()


def po_path(language: str) -> Path:
    return LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po"


def read_catalog(path: Path, language: str) -> Catalog:
    """One .po file (raises on a file that does not parse)."""
    from babel.messages import pofile

    with path.open("rb") as source:
        return pofile.read_po(source, locale=language, abort_invalid=True)


def compile_catalog(catalog: Catalog) -> GNUTranslations:
    from babel.messages import mofile

    compiled = BytesIO()
    mofile.write_mo(compiled, catalog)
    compiled.seek(0)
    return GNUTranslations(fp=compiled)


def _load(language: str) -> Catalogue:
    path = po_path(language)
    if not path.is_file():
        return _ENGLISH
    catalog = read_catalog(path, language)
    words = {message.id: message.string for message in catalog
             if message.id and isinstance(message.id, str) and message.string
             and not message.fuzzy
             and any(place.startswith(SCRIPTS) for place, _ in message.locations)}
    return Catalogue(compile_catalog(catalog),
                     json.dumps(words, ensure_ascii=False, sort_keys=True) if words else "")


def catalogue(language: str) -> Catalogue:
    """The language's catalogue; English, and a language with no file, say the source."""
    found = _loaded.get(language)
    if found is not None:
        return found
    with _lock:
        if language not in _loaded:
            _loaded[language] = _load(language)
        return _loaded[language]


def translations(language: str) -> NullTranslations:
    return catalogue(language).translations


def script_words(language: str) -> str:
    return catalogue(language).script_words
