"""One vocabulary: each language and each length is one record (app/languages.py,
app/lengths.py), and every other list of them derives from the records or is held to them
here: the SQL CHECKs on every column that names one (sql/schema.sql, what the migrations
make: tests/test_migrations.py), the library search's languages, `make messages`, the
catalogues, the form, the docs. A language added in one place only fails here, not in a
family's request."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from babel import Locale
from babel.messages.plurals import get_plural

from app.i18n.catalogues import LOCALE_DIR
from app.languages import DEFAULT_LANGUAGE, LANGUAGES, TRANSLATED, direction, language_of
from app.lengths import BY_NAME, LENGTHS, length_of, reading_minutes

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = (ROOT / "sql" / "schema.sql").read_text()
_TABLE = re.compile(r"CREATE TABLE public\.(\w+) \((.*?)\n\);", re.S)
_ANY = r"\(\({column} = ANY \(ARRAY\[(?P<values>[^\]]*)\]\)\)\)"


def tables(schema: str) -> dict[str, str]:
    return {match[1]: match[2] for match in _TABLE.finditer(schema)}


def checked_values(body: str, column: str) -> list[set[str]]:
    """The values each CHECK of a table allows a column, one set per CHECK
    (`CHECK ((language = ANY (ARRAY['en'::text, ...])))`)."""
    return [set(re.findall(r"'([^']*)'::text", match["values"]))
            for match in re.finditer(_ANY.format(column=column), body)]


def columns_named(schema: str, column: str) -> dict[str, list[set[str]]]:
    """Every table with a column of this name, and the values its CHECKs allow it."""
    return {name: checked_values(body, column) for name, body in tables(schema).items()
            if re.search(rf"^\s+{column} text\b", body, re.M)}


@pytest.mark.parametrize(("column", "record"), [("language", LANGUAGES), ("length", BY_NAME)])
def test_every_column_that_names_one_is_checked_against_the_records(column, record):
    found = columns_named(SCHEMA, column)
    # story_jobs and children for both; the household's pages' language too.
    assert {"story_jobs", "children"} <= set(found)
    for table, checks in found.items():
        assert checks, f"{table}.{column} has no CHECK naming its values"
        for allowed in checks:
            assert allowed == set(record), (table, column, sorted(allowed ^ set(record)))


def test_the_check_reader_sees_a_language_missing_from_a_check():
    """The test above can fail: a CHECK one language short (or one too many) is seen."""
    short = SCHEMA.replace(", 'ja'::text]", "]", 1)
    assert any(allowed != set(LANGUAGES)
               for checks in columns_named(short, "language").values() for allowed in checks)
    unchecked = re.sub(r"CONSTRAINT children_language_check CHECK [^\n]*\n", "", SCHEMA)
    assert columns_named(unchecked, "language")["children"] == []


def test_the_library_searches_every_language_with_its_own_stems():
    stems = re.search(r"FUNCTION public\.library_stems_query.*?unnest\(ARRAY\[(.*?)\]\)",
                      SCHEMA, re.S)
    assert stems is not None
    assert re.findall(r"'(\w+)'", stems[1]) == list(LANGUAGES)
    config = re.search(r"FUNCTION public\.story_search_config.*?\$\$(.*?)\$\$", SCHEMA, re.S)
    assert config is not None
    assert dict(re.findall(r"WHEN '(\w+)' THEN '(\w+)'", config[1])) == {
        tag: language.search_config for tag, language in LANGUAGES.items()
        if language.search_config}


def test_make_messages_reads_its_languages_from_the_app():
    recipe = (ROOT / "Makefile").read_text().split("\nmessages:", 1)[1].split("\n\n", 1)[0]
    assert "python -m app languages" in recipe
    assert not re.search(r"^LANGUAGES\s*:?=", (ROOT / "Makefile").read_text(), re.M)
    said = subprocess.run([sys.executable, "-m", "app", "languages"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.split()
    assert said == list(TRANSLATED) == [tag for tag in LANGUAGES if tag != DEFAULT_LANGUAGE]


def test_every_language_but_english_has_its_catalogue_and_no_other_has_one():
    catalogues = {path.parent.parent.name for path in LOCALE_DIR.glob("*/LC_MESSAGES/*.po")}
    assert catalogues == set(TRANSLATED)


@pytest.mark.parametrize("tag", list(LANGUAGES))
def test_each_record_agrees_with_babel(tag):
    """Its own name and its direction are CLDR's; its plural rule is Babel's alone."""
    language, locale = LANGUAGES[tag], Locale.parse(tag)
    assert language.tag == tag
    assert language.name.lower() == locale.get_display_name(tag).split(" (")[0].lower()
    assert language.english == locale.get_display_name("en").split(" (")[0]
    assert language.direction == ("rtl" if locale.character_order == "right-to-left" else "ltr")
    assert get_plural(tag).num_plurals >= 1


def test_a_tag_with_a_region_or_unknown_finds_its_record_or_english():
    assert language_of("es-MX").tag == "es" and language_of("AR").direction == "rtl"
    assert language_of("sv") is language_of(None) is LANGUAGES[DEFAULT_LANGUAGE]
    assert direction("ar-EG") == "rtl" and direction("uk") == direction("ja") == "ltr"


def test_a_length_s_minutes_and_caps_derive_from_its_words():
    assert LENGTHS == ("short", "medium", "long")
    assert [length_of(name).minutes for name in LENGTHS] == [2, 4, 7]
    english = language_of("en")
    assert [length_of(name).cap(english) for name in LENGTHS] == [360, 720, 1260]
    assert [length_of(name).char_cap(english) for name in LENGTHS] == [4320, 8640, 15120]


def test_a_language_without_spaces_counts_characters_for_the_same_reading_time():
    """Japanese has no words to count: a length is the characters read aloud in the same
    time (contract: `language`), and its cap counts them too."""
    japanese = language_of("ja")
    assert not japanese.spaced and all(language.spaced for language in LANGUAGES.values()
                                       if language.tag != "ja")
    for name in LENGTHS:
        length = length_of(name)
        asked = length.size(japanese)
        assert asked * 60 / japanese.read_aloud_per_minute == length.seconds
        assert length.cap(japanese) == int(asked * 1.5)
    assert japanese.count("ふくろうは ねむりました。\n") == 12
    two_minutes = "ふくろうはねむりました。" * 42  # 504 characters: about two minutes aloud
    assert reading_minutes(two_minutes, "ja") == 2
    assert reading_minutes(two_minutes, "en") == 1  # one "word" in English


def test_the_form_says_each_length_s_minutes_from_its_record():
    template = (ROOT / "templates" / "_story_form.html").read_text()
    assert "minutes=2" not in template and "length.minutes" in template


def test_the_docs_name_every_language():
    docs = (ROOT / "docs" / "languages.md").read_text()
    for language in LANGUAGES.values():
        assert language.english in docs, language.english
    assert "## Adding a language" in docs


def test_every_list_of_language_tags_in_the_docs_names_every_language():
    """A paragraph of the docs that lists the tags (`pl`, `ar`, ...) lists them all."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    lists = 0
    for page in pages:
        for paragraph in page.read_text().split("\n\n"):
            named = set(re.findall(r"`([a-z]{2})`", paragraph)) & set(LANGUAGES)
            if len(named) >= 4:  # a list of them, not one named in passing
                lists += 1
                assert named == set(LANGUAGES), (page.name, sorted(set(LANGUAGES) - named))
    assert lists >= 2  # docs/configuration.md's UI_LANGUAGE, docs/api.md's `language`
