"""One home for the kinds of job: app/kinds.py's records, and every kind the SQL names held
to them. The CHECKs that list the kinds a row may have (story_jobs_kind_known,
spend_kind_known in sql/schema.sql, what the migrations make) are the records' exactly, and
every kind a constraint, an index, a view, a function or a named statement compares a kind
column with is one of them: a kind added in one place only fails here, not in a family's
evening."""

from __future__ import annotations

import re
from datetime import UTC
from pathlib import Path

import pytest

from app.kinds import (
    CHARGES,
    JOB_KINDS,
    MODERATION,
    NARRATION,
    PICTURE,
    STORY,
    Maker,
    claimable,
    kind_of,
)
from app.money.meter import Meter
from app.money.prices import PriceTable

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "sql" / "schema.sql"
CODES = {kind.code for kind in JOB_KINDS}

# A kind column (kind, claimed_kind, j.kind) compared with literals, as pg_dump writes it
# (`kind = ANY (ARRAY['story'::text, ...])`, `kind <> 'story'::text`) and as the files of
# statements do (`kind = 'story'`, `kind IN ('story', ...)`), or a kind in a row's JSON
# (`'kind', 'picture'`).
_NAMED = re.compile(
    r"\b(?:\w+\.)?(?:claimed_)?kind\s*(?:=|<>|!=|IS\s+(?:NOT\s+)?DISTINCT\s+FROM)\s*"
    r"(?:ANY\s*\(\s*ARRAY\[(?P<array>[^\]]*)\]|(?P<one>'\w+'))"
    r"|\bkind\s+IN\s*\((?P<list>[^)]*)\)|'kind',\s*(?P<json>'\w+')", re.IGNORECASE)


def kinds_named(sql: str) -> set[str]:
    """Every kind the SQL compares a kind column with, or writes as a row's kind."""
    return {literal for match in _NAMED.finditer(sql) for text in match.groups() if text
            for literal in re.findall(r"'(\w+)'", text)}


def checks(table: str) -> dict[str, str]:
    """A table's CHECK constraints in sql/schema.sql, by name."""
    body = re.search(rf"CREATE TABLE public\.{table} \((.*?)\n\);", SCHEMA.read_text(), re.S)
    assert body, f"no table {table} in sql/schema.sql"
    return dict(re.findall(r"CONSTRAINT (\w+) CHECK (.*?),?$", body[1], re.M))


@pytest.mark.parametrize(("table", "check", "known"), [
    ("story_jobs", "story_jobs_kind_known", CODES),
    ("spend", "spend_kind_known", set(CHARGES)),
])
def test_the_checks_that_list_the_kinds_are_the_records(table, check, known):
    assert kinds_named(checks(table)[check]) == known, (
        f"{table}.{check} differs from app/kinds.py: a migration (and make schema) or a record "
        "is missing")


@pytest.mark.parametrize(("table", "known"), [("story_jobs", CODES), ("spend", set(CHARGES))])
def test_every_check_on_a_kind_names_only_the_records(table, known):
    on_kinds = {name: check for name, check in checks(table).items() if kinds_named(check)}
    assert len(on_kinds) >= (4 if table == "story_jobs" else 1)  # the reader sees them
    for name, check in on_kinds.items():
        assert kinds_named(check) <= known, (table, name, sorted(kinds_named(check) - known))


def test_every_kind_the_sql_names_is_a_record_s():
    files = [SCHEMA, *sorted((ROOT / "sql" / "queries").glob("*.sql")),
             *sorted((ROOT / "sql" / "functions").glob("*.sql"))]
    named = {path.relative_to(ROOT).as_posix(): kinds_named(path.read_text()) for path in files}
    assert {kind for found in named.values() for kind in found} == set(CHARGES)
    for path, found in named.items():
        assert found <= set(CHARGES), (path, sorted(found - set(CHARGES)))


def test_the_reader_sees_each_way_the_sql_names_a_kind():
    """The tests above can fail: a kind the records lack is seen wherever it is written."""
    assert kinds_named("CHECK ((kind = ANY (ARRAY['story'::text, 'narration'::text])))") == {
        "story", "narration"}
    assert kinds_named("CHECK (((kind <> 'story'::text) OR (x IS NULL)))") == {"story"}
    assert kinds_named("(NOT (claimed_kind IS DISTINCT FROM 'narration'::text))") == {
        "narration"}
    assert kinds_named("WHERE j.kind = 'narration' AND status = 'pending'") == {"narration"}
    assert kinds_named("CHECK (kind IN ('story', 'narration'))") == {"story", "narration"}
    assert kinds_named("jsonb_build_object('kind', 'narration', 'of', 1)") == {"narration"}
    assert kinds_named("WHERE status = 'pending' AND claimed_kind = kind") == set()


def test_each_kind_is_claimed_in_its_order_and_only_by_a_worker_that_makes_it():
    assert [kind.code for kind in JOB_KINDS] == claimable(Maker) == [
        "story", "picture", "narration"]
    assert claimable({Maker.STORYTELLER}) == ["story"]
    assert claimable({Maker.ILLUSTRATOR}) == ["picture"]
    assert claimable({Maker.STORYTELLER, Maker.NARRATOR}) == ["story", "narration"]
    assert [kind_of(code) for code in claimable(Maker)] == [STORY, PICTURE, NARRATION]
    with pytest.raises(ValueError, match="lullaby"):
        kind_of("lullaby")  # a newer release's kind: this one never claims it


def test_each_kind_is_priced_at_its_maker_s_model_and_charged_under_its_code():
    meter = Meter(PriceTable(), budget_micros=None, timezone=UTC,
                  story_model="a-story-model", image_model="an-image-model",
                  voice_model="a-voice-model")
    assert {kind.code: meter.model_of(kind) for kind in JOB_KINDS} == {
        "story": "a-story-model", "picture": "an-image-model", "narration": "a-voice-model"}
    assert list(CHARGES) == [*(kind.code for kind in JOB_KINDS), MODERATION]
    assert all(CHARGES.values())  # each named on the spend page
