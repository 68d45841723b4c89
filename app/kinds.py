"""The kinds of job: one JobKind record each, and the one list of them.

    job.kind is PICTURE                  # Job.from_row reads story_jobs.kind with kind_of()
    claimable({Maker.STORYTELLER})       # ["story"]: what a worker without an illustrator claims
    CHARGES                              # the ledger's kinds (spend.kind) and their names

Every kind is a row of story_jobs, claimed, heartbeated, swept and completed by the same
guarded statements (DESIGN.md, "Kinds of job"). What differs is said here:

- claimed: in JOB_KINDS' order (claim_next_job takes a waiting story before any picture,
  and a picture before any narration),
  and only by a worker that has the kind's `maker`;
- drawn: by its `maker`, the writer the worker hands it to (app/queue/worker.py);
- what it costs: at its maker's model's price (Meter.billing), set aside before it runs
  (Meter.story_set_aside, Meter.picture_set_aside, Meter.narration_set_aside);
- charged: its call's ledger row carries its code (spend.kind), named on the spend page
  by its `label`.

The SQL's CHECKs on kind columns (story_jobs_kind_known, spend_kind_known, every constraint
that names a kind) are tested against these records (tests/test_kinds.py). Adding a kind:
docs/kinds.md, "Adding a kind of job".
"""

from __future__ import annotations

import enum
from collections.abc import Collection
from dataclasses import dataclass

from app.i18n import N_


class Maker(enum.StrEnum):
    """Who makes a kind of job, and so whose model prices it."""

    STORYTELLER = "storyteller"  # writes it: the worker's ChatWriter or BackgroundWriter
    ILLUSTRATOR = "illustrator"  # draws it: the worker's painter (ILLUSTRATOR=off: none)
    NARRATOR = "narrator"  # reads it aloud: the worker's reader (NARRATOR=off: none)


@dataclass(frozen=True)
class JobKind:
    code: str  # story_jobs.kind, and spend.kind of its calls
    maker: Maker
    label: str  # the spend page's row (N_: English, shown in the reader's language)

    def __str__(self) -> str:
        return self.code


STORY = JobKind("story", Maker.STORYTELLER, N_("Stories"))
PICTURE = JobKind("picture", Maker.ILLUSTRATOR, N_("Pictures"))  # a stored story's picture
# One part of a stored story read aloud (a long story is read in several parts, one job each).
NARRATION = JobKind("narration", Maker.NARRATOR, N_("Narrations"))

# In the order they are claimed: a picture never delays a story, a narration neither.
JOB_KINDS = (STORY, PICTURE, NARRATION)

# The ledger's kinds: each kind of job's calls under its code, and the one charge with no
# job of its own, the screening of a stored story (MODERATION=on; free at OpenAI, counted
# at 0: sql/queries/screening.sql).
MODERATION = "moderation"
CHARGES: dict[str, str] = {kind.code: kind.label for kind in JOB_KINDS} | {
    MODERATION: N_("Safety checks (free)")}


def kind_of(code: str) -> JobKind:
    """The record of a row's `kind`; ValueError for a code this release does not know."""
    for kind in JOB_KINDS:
        if kind.code == code:
            return kind
    raise ValueError(f"no kind of job is called {code!r}")


def claimable(makers: Collection[Maker]) -> list[str]:
    """The kinds a worker with these makers claims, in claim order (claim_next_job's
    `:kinds`): never one it could not make, nor one a newer release added."""
    return [kind.code for kind in JOB_KINDS if kind.maker in makers]
