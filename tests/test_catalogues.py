"""The catalogues are whole: every .po compiles with its language's plural rule, every
string the app, the templates and the scripts hand to gettext is translated in each, and
no template shows a family a word outside {% trans %} or _() (make messages, app/i18n).
"""

from __future__ import annotations

import ast
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.plurals import get_plural
from jinja2 import Environment

from app.i18n import UI_LANGUAGES, ngettext, speaking
from app.i18n.catalogues import compile_catalog, po_path, read_catalog

ROOT = Path(__file__).resolve().parents[1]
TRANSLATED = [language for language in UI_LANGUAGES if language != "en"]

# Words in templates that are no language's: the text-size buttons' letters.
NOT_WORDS = {"Aa", "A−", "A+"}
# Attributes a reader sees or hears.
SHOWN_ATTRIBUTES = {"alt", "title", "placeholder", "aria-label", "aria-valuetext", "label"}
GETTEXT_CALLS = {"_", "gettext", "ngettext"}
_LETTER = re.compile(r"[^\W\d_]")
_PROSE = re.compile(r"[A-Z][a-z]|[a-z]{2,} [a-z]{2,}")


def used_strings() -> dict[str, str | tuple[str, ...]]:
    """What make messages extracts (babel.cfg): {msgid: the id, or its singular and plural}."""
    with (ROOT / "babel.cfg").open() as config:
        method_map, options_map = parse_mapping_cfg(config)
    found: dict[str, str | tuple[str, ...]] = {}
    for _, _, message, _, _ in extract_from_dir(str(ROOT), method_map, options_map,
                                                keywords=DEFAULT_KEYWORDS):
        key = message if isinstance(message, str) else message[0]
        found[key] = message
    return found


@pytest.fixture(scope="module")
def used() -> dict[str, str | tuple[str, ...]]:
    return used_strings()


def test_the_code_uses_strings_the_catalogues_can_hold(used):
    assert len(used) > 100
    assert "You’re offline" in used  # a script's (static/shelf.js)
    assert "Nothing is lost: you can simply try again." in used  # the app's (N_)


@pytest.mark.parametrize("language", TRANSLATED)
def test_each_catalogue_compiles_with_its_plural_rule(language):
    catalog = read_catalog(po_path(language), language)
    assert catalog.num_plurals == get_plural(language).num_plurals  # CLDR's, by Babel
    assert catalog.num_plurals == {"pl": 3, "ar": 6, "uk": 3, "ja": 1}.get(
        language, catalog.num_plurals)
    header = dict(catalog.mime_headers)["Plural-Forms"]
    assert header.startswith(f"nplurals={catalog.num_plurals};"), header
    translations = compile_catalog(catalog)
    assert translations.gettext("Library") != "Library"


@pytest.mark.parametrize("language", TRANSLATED)
def test_each_catalogue_translates_every_string_the_code_uses(language, used):
    catalog = read_catalog(po_path(language), language)
    missing = []
    for key, message in used.items():
        entry = catalog.get(key)
        forms = entry.string if entry is not None else None
        whole = (all(forms) and len(forms) == catalog.num_plurals
                 if isinstance(forms, tuple) else bool(forms))
        if entry is None or entry.fuzzy or not whole:
            missing.append(key)
        elif isinstance(message, tuple) != isinstance(entry.id, tuple):
            missing.append(key)  # a plural where the code has one string, or the other way
    assert not missing, f"{language}: {len(missing)} untranslated (make messages), {missing[:5]}"


@pytest.mark.parametrize("language", TRANSLATED)
def test_placeholders_survive_translation(language, used):
    catalog = read_catalog(po_path(language), language)
    for key in used:
        entry = catalog.get(key)
        if entry is None:
            continue
        ids = entry.id if isinstance(entry.id, tuple) else (entry.id,)
        strings = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        wanted = set(re.findall(r"%\((\w+)\)", ids[-1]))
        for string in strings:
            if string:  # a plural form may leave out the number (Arabic's one and two)
                assert set(re.findall(r"%\((\w+)\)", string)) <= wanted | set(
                    re.findall(r"%\((\w+)\)", ids[0])), (language, key, string)


class _ShownText(HTMLParser):
    """The words a template's markup shows (Jinja's parts stood in for by a mark)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.words: list[str] = []
        self._skipping = 0  # inside <code>, <script> or <style>: no language's words

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("code", "script", "style"):
            self._skipping += 1
        self.words += [value for name, value in attrs if name in SHOWN_ATTRIBUTES and value]

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "script", "style") and self._skipping:
            self._skipping -= 1

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.words.append(data)


def untranslated(source: str) -> list[str]:
    """What a template shows outside {% trans %} and _(): its markup's words, and prose in
    its expressions' strings ("story" if n == 1 else "stories")."""
    markup, found, in_trans, call_depth, depth, previous = [], [], False, None, 0, None
    in_class = False  # {% block body_class %}: a class name, no words
    for _, kind, value in Environment(extensions=["jinja2.ext.i18n"]).lex(source):
        if kind == "whitespace":
            continue
        if kind == "data":
            if not in_trans and not in_class:
                markup.append(value)
            continue
        if kind == "name" and value == "trans" and previous == "block_begin":
            in_trans = True
        elif kind == "name" and value == "endtrans":
            in_trans = False
        elif kind == "name" and value == "body_class" and previous == "block":
            in_class = True
        elif kind == "name" and value == "endblock":
            in_class = False
        elif kind in ("variable_begin", "block_begin"):
            markup.append("⁂")  # an expression: no words of its own
        elif kind == "operator" and value == "(":
            depth += 1
            if previous in GETTEXT_CALLS and call_depth is None:
                call_depth = depth
        elif kind == "operator" and value == ")":
            if call_depth == depth:
                call_depth = None
            depth -= 1
        elif kind == "string" and call_depth is None and _PROSE.search(value):
            found.append(value[1:-1])  # the lexer's string keeps its quotes
        previous = value if kind == "name" else kind
    parser = _ShownText()
    parser.feed("".join(markup))
    found += [word.strip() for word in parser.words
              if _LETTER.search(word.replace("⁂", "")) and word.strip() not in NOT_WORDS]
    return found


@pytest.mark.parametrize("template", sorted(
    path.name for path in (ROOT / "templates").glob("*.html")))
def test_no_template_shows_a_word_outside_the_catalogue(template):
    assert untranslated((ROOT / "templates" / template).read_text()) == []


def test_the_template_check_finds_words_outside_the_catalogue():
    assert untranslated('<p>Hello <b>{{ name }}</b></p>') == ["Hello"]
    assert untranslated('<img alt="A moon" src="x">') == ["A moon"]
    assert untranslated('{{ "story" if n == 1 else "many stories" }}') == ["many stories"]
    assert untranslated('<p>{{ _("Hello") }} {% trans %}Hi {{ n }}{% endtrans %}</p>') == []
    assert untranslated('<p>{{ money(5) }} · <code>UI_LANGUAGE</code></p>') == []


@pytest.mark.parametrize(("language", "count", "said"), [
    ("pl", 1, "1 bajka"), ("pl", 3, "3 bajki"), ("pl", 5, "5 bajek"), ("pl", 22, "22 bajki"),
    ("ar", 1, "حكاية واحدة"), ("ar", 2, "حكايتان"), ("ar", 5, "5 حكايات"),
    ("ar", 11, "11 حكاية"), ("fr", 1, "1 histoire "), ("fr", 2, "2 histoires"),
    ("uk", 1, "1 казка"), ("uk", 3, "3 казки"), ("uk", 5, "5 казок"), ("uk", 11, "11 казок"),
    ("uk", 21, "21 казка"), ("uk", 22, "22 казки"), ("ja", 1, "あと1話"), ("ja", 5, "あと5話"),
])
def test_a_count_takes_its_languages_form(language, count, said):
    with speaking(language):
        line = ngettext("%(left)s story left today", "%(left)s stories left today", count)
    assert said in line % {"left": count}


# Where a refusal's words reach a page (error.html translates them with tr()): a message
# raised here must be marked for the catalogue, N_("...") or gettext("..."), never bare.
# (The JSON API's own refusals, such as app/requests.py's, name fields, and say them in a
# family's words with `said`; the queue's control and pictures are refused on pages too.)
REFUSING_MODULES = [*sorted((ROOT / "app" / "web").glob("*.py")),
                    ROOT / "app" / "queue" / "control.py", ROOT / "app" / "queue" / "pictures.py"]
APP_ERRORS = {"AppError", "NotFound", "Conflict", "BadRequest", "Invalid", "Busy",
              "Unavailable", "TooLarge", "Forbidden", "Unauthorized"}


def bare_refusals(source: str) -> list[str]:
    """The messages raised as an AppError without going through the catalogue."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)):
            continue
        call = node.exc
        name = getattr(call.func, "id", None) or getattr(call.func, "attr", None)
        if name not in APP_ERRORS or not call.args:
            continue
        if name == "Invalid" and any(keyword.arg == "said" for keyword in call.keywords):
            continue  # `said` is the family's words; the message is the API's
        message = call.args[0]
        if isinstance(message, ast.Constant | ast.JoinedStr):
            found.append(ast.unparse(message))
    return found


@pytest.mark.parametrize("module", [str(path.relative_to(ROOT)) for path in REFUSING_MODULES])
def test_a_refusal_a_page_shows_is_in_the_catalogue(module):
    assert bare_refusals((ROOT / module).read_text()) == []


def test_the_refusal_check_finds_a_bare_message():
    assert bare_refusals('raise NotFound("There is nothing here.")') == [
        "'There is nothing here.'"]
    assert bare_refusals('raise errors.Conflict(f"No {x}")') == ["f'No {x}'"]
    assert bare_refusals('raise NotFound(N_("There is nothing here."))') == []
    assert bare_refusals('raise Invalid("age must be 1 to 12", said=gettext("Age?"))') == []


@pytest.mark.parametrize("language", TRANSLATED)
def test_each_catalogue_s_header_names_the_project_not_babel_s_placeholders(language):
    """A translator opening a catalogue reads whose it is, not Babel's blanks
    (docs/translating.md)."""
    header = po_path(language).read_text(encoding="utf-8").split("\n\n", 1)[0]
    for placeholder in ("FULL NAME", "EMAIL@ADDRESS", "FIRST AUTHOR", "ORGANIZATION",
                        " VERSION", "LL@li.org"):
        assert placeholder not in header, (language, placeholder)
