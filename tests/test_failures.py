"""One record per failure (app/failures.py), and everything else held to it: the database's
CHECK on `story_jobs.error_text`, the codes the SQL writes itself, the contract's list of
`error_code` values, and what each offers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.failures import (
    FAILURES,
    INTERNAL,
    NARRATION_FAILURES,
    PICTURE_FAILURES,
    STORY_FAILURES,
    Failure,
    Offer,
    failure_of,
)
from app.i18n import speaking
from tools.schema import SCHEMA_FILE

ROOT = Path(__file__).resolve().parents[1]
# CONTRACT.md's `GET /stories/jobs/{job_id}`: error_code "is one of", in its order.
CONTRACT_CODES = (
    "storyteller_failed", "storyteller_busy", "storyteller_timeout", "storyteller_unreachable",
    "storyteller_unreadable", "storyteller_empty", "key_refused", "model_unavailable",
    "declined", "cut_short", "stopped", "interrupted", "expired", "not_saved", "internal")
# The failures trying again cannot mend: the card says who can, and offers no "Try again".
NOTHING_TO_TRY = {"storyteller_empty", "key_refused", "model_unavailable", "declined"}


def check_codes(schema: str, name: str) -> list[str]:
    """The codes a CHECK constraint of sql/schema.sql allows (`x = ANY (ARRAY['a'::text,
    ...])`), in its order."""
    found = re.search(rf"CONSTRAINT {name} CHECK \(\((.*?)\)\),?\n", schema)
    assert found, f"no CHECK named {name} in sql/schema.sql"
    return re.findall(r"'([^']*)'::text", found.group(1))


def test_the_database_allows_exactly_the_records_codes():
    allowed = check_codes(SCHEMA_FILE.read_text(), "story_jobs_error_known")
    assert len(allowed) == len(set(allowed))
    assert set(allowed) == set(FAILURES), (
        "app/failures.py and migration 037's CHECK differ: add the code to both (a new "
        "migration) and run make schema")


def test_the_check_comparison_sees_a_code_missing_on_either_side():
    schema = SCHEMA_FILE.read_text()
    fewer = schema.replace("'over_budget'::text, ", "").replace(", 'over_budget'::text", "")
    assert set(check_codes(fewer, "story_jobs_error_known")) != set(FAILURES)
    assert set(check_codes(schema, "story_jobs_error_known")) != {*FAILURES, "a_new_one"}


# What the SQL writes as a job's error itself (the sweeps, a Stop, a skipped picture).
_WRITTEN = (re.compile(r"error_text\s*=\s*'([a-z_]+)'"),
            re.compile(r"THEN\s+'([a-z_]+)'\s+ELSE\s+(?:'interrupted'|:error_text)"),
            re.compile(r"cancel_requested_at IS NOT NULL\s+THEN\s+'([a-z_]+)'"),
            re.compile(r"'error_text',\s*'([a-z_]+)'"))


def test_every_code_the_sql_writes_itself_is_a_record():
    written = set()
    for path in [*(ROOT / "sql" / "queries").glob("*.sql"),
                 *(ROOT / "sql" / "functions").glob("*.sql")]:
        for pattern in _WRITTEN:
            written.update(pattern.findall(path.read_text()))
    assert {"stopped", "interrupted", "expired", "over_budget"} <= written  # all were seen
    assert written <= set(FAILURES), sorted(written - set(FAILURES))


def test_a_story_fails_with_one_of_the_contracts_codes_and_each_is_in_the_docs():
    assert tuple(failure.code for failure in STORY_FAILURES) == CONTRACT_CODES
    api = (ROOT / "docs" / "api.md").read_text()
    missing = [code for code in CONTRACT_CODES if f"`{code}`" not in api]
    assert not missing, f"docs/api.md does not name {missing}"


def test_codes_are_one_each_and_pictures_and_narrations_have_their_own():
    codes = [failure.code for failure in (*STORY_FAILURES, *PICTURE_FAILURES,
                                          *NARRATION_FAILURES)]
    assert len(codes) == len(set(codes)) == len(FAILURES)
    assert all(re.fullmatch(r"[a-z]+(_[a-z]+)*", code) for code in codes)
    assert {"over_budget", "illustrator_failed", "pictures_unsupported", "narrator_failed",
            "narration_unsupported"} <= set(FAILURES)


@pytest.mark.parametrize("failure", STORY_FAILURES, ids=lambda failure: failure.code)
def test_each_story_failure_has_its_card_words_and_says_what_can_be_done(failure: Failure):
    assert failure.what and failure.message
    if failure.code in NOTHING_TO_TRY:
        assert (failure.offer, failure.retry) == (Offer.NOTHING, False)
        assert failure.advice and "Nothing is lost" not in failure.advice
    else:
        assert (failure.offer, failure.retry) == (Offer.TRY_AGAIN, True)
        assert failure.code == "stopped" or "try again" in (failure.advice or "").lower()


def test_the_stop_says_cancelled_as_the_contracts_cancel_does():
    assert (FAILURES["stopped"].message, FAILURES["interrupted"].message,
            FAILURES["expired"].message) == ("cancelled", "interrupted", "expired")


def test_a_code_not_known_here_reads_as_internal():
    assert failure_of("a_newer_versions_code") is INTERNAL
    assert failure_of(None) is INTERNAL
    assert failure_of("storyteller_busy") is FAILURES["storyteller_busy"]


def test_the_message_is_said_in_the_current_language():
    busy = FAILURES["storyteller_busy"]
    assert busy.said == "the storyteller is busy (rate limited)"
    with speaking("xx"):  # a language with no catalogue: English
        assert busy.said == busy.message
