"""The family's idea, and a sequel's title, stand in the quotation marks of the page's
language: «…» on an Arabic page, „…“ on a German one, on a story's card, in "Not finished
yet" and under a story's title. English marks laid right to left face away from the words
they hold (”…“ as a reader sees them)."""

from __future__ import annotations

import pytest

from app.queue.store import JobStore
from tests.helpers.app import serve
from tests.helpers.jobs import cut_short
from tests.helpers.shelving import shelve

pytestmark = pytest.mark.anyio

IDEA = "قطة صغيرة تبحث عن القمر"
WORDS = "ليلى والقمر\n\nفي مساء هادئ، حين طلع القمر مستديرًا فضيًا، كان"
MARKS = {"ar": ("«", "»"), "de": ("„", "“"), "en": ("“", "”")}


@pytest.mark.parametrize("language", list(MARKS))
async def test_an_idea_is_quoted_in_the_page_s_own_marks(make_app, db, language):
    store = JobStore(db)
    stopped = await cut_short(store, IDEA, WORDS, language="ar")
    first = await shelve(store, "first", title="ليلى والقمر", language="ar")
    await shelve(store, "next", title="ليلى والنجوم", sequel_of=first, language="ar")
    opening, closing = MARKS[language]
    quoted = f"{opening}<bdi>{IDEA}</bdi>{closing}"
    async with serve(make_app(worker_concurrency=0)) as client:
        headers = {"Accept-Language": language}
        card = (await client.get(f"/stories/jobs/{stopped.id}", headers=headers)).text
        library = (await client.get("/stories", headers=headers)).text
        story = (await client.get(f"/stories/{first}", headers=headers)).text
    assert f'<p class="job-prompt">{quoted}</p>' in card
    assert f'<span class="meta">{quoted} · ' in library
    assert f"{opening}<bdi>ليلى والنجوم</bdi>{closing}</a>" in story  # what happened next
    if language != "en":
        for page in (card, library, story):
            assert "“<bdi>" not in page and "</bdi>”" not in page
