"""The story form: what it shows (the home page's, and the fragment a post returns with
its errors) and what this device remembers of it.

Who a story is for is the form's explicit choice (`for`: a profile's id, "other" with the
name and age fields, or a sequel's "earlier": the same children). This device remembers
the form's last choice (the `story_form` cookie, set by the form's own posts), so a
one-tap story never changes whom the next typed idea is for.
"""

from __future__ import annotations

import base64
import binascii
import enum
import json
import secrets
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response

from app.i18n import current
from app.ideas import form_ideas
from app.languages import LANGUAGES
from app.lengths import BY_NAME
from app.money.ledger import BudgetNotes
from app.requests import CHILD_NAME_MAX_CHARS, FIELDS, PROMPT_MAX_CHARS
from app.shelf.sequels import next_prompts
from app.shelf.story_form import choose_for
from app.stories import Child
from app.web.preferences import PREFERENCE_MAX_AGE_S
from app.web.spend import budget_notes, lengths_closed, why_no_story

if TYPE_CHECKING:  # built by the lifespan, handed in
    from app.services import Services

# The form's languages, each named in its own language.
LANGUAGE_CHOICES = tuple((tag, language.name) for tag, language in LANGUAGES.items())
# What the form remembers on this device, and for how long (as the reading preferences).
FORM_COOKIE = "story_form"
FORM_REMEMBERS = ("for", "child_name", "age", "length", "language")


class Unread(enum.Enum):
    """A value the caller has not read (None is a reading: "nothing")."""

    UNREAD = enum.auto()


UNREAD = Unread.UNREAD


def new_form_key() -> str:
    return secrets.token_urlsafe(18)


async def form_context(
    services: Services,
    values: dict[str, str],
    *,
    errors: dict[str, str] | None = None,
    notice: str | None = None,
    children: list[Child] | None = None,
    used_today: int | None = None,
    budget: BudgetNotes | None = None,
    cannot_write: str | None | Unread = UNREAD,
) -> dict[str, object]:
    """What the story form alone shows (_story_form.html), with a fresh idempotency key:
    all a fragment that returns the form needs, without the rest of the home page.
    `children`, `used_today`, `budget` (the month's budget's notes) and `cannot_write`
    (why the storyteller cannot write, or None): when the caller has read them already."""
    if used_today is None:
        used_today = await services.intake.used_today()
    if budget is None:
        budget = await budget_notes(services)
    budget_closed = budget.closed
    # No story can be written at all (the model gone, the endpoint missing): said first.
    if cannot_write is UNREAD:
        cannot_write = services.readiness.closed_because()
    stories_left = services.intake.stories_left_today(used_today)
    if children is None:
        children = await services.children.all()
    values = choose_for(values, children)
    return {
        "form_key": new_form_key(),
        "values": values,
        # The chooser: who the story is for.
        "profiles": children,
        # A sequel's first prompt in every language: app.js follows the language chosen.
        "next_prompts": (next_prompts(values["sequel_title"]) if values.get("sequel_of")
                         else {}),
        "prompt_max": PROMPT_MAX_CHARS,
        "errors": errors or {},
        "notice": notice,
        "ideas": form_ideas(),
        "languages": LANGUAGE_CHOICES,
        # Each length's name and the minutes it takes to read aloud (app/lengths.py).
        "length_choices": tuple(BY_NAME.values()),
        # Closed by the storyteller or the month's budget, the day's count is no news.
        "stories_left": None if cannot_write or budget_closed else stories_left,
        # With a storyteller that cannot write, at zero, or with no room in the month's
        # budget, the form says so and why, before anyone types (its fields and the
        # one-tap buttons are disabled).
        "limit_note": why_no_story(services, cannot_write, budget_closed, stories_left),
        "closed_for": ("storyteller" if cannot_write else "month" if budget_closed
                       else "day"),
        # The lengths the month's budget still has room for: the others are closed, and
        # the form says why.
        "lengths_fit": budget.lengths,
        "lengths_note": lengths_closed(budget, cannot_write),
    }


def remembered_values(request: Request) -> dict[str, str]:
    """The form's values to start from: what it last asked for on this device; on a device
    that has asked for nothing yet, a story in the page's language for no one named (never
    another device's last child: each device is its own)."""
    values = dict.fromkeys(FIELDS, "") | {"language": current()}
    memory = form_memory(request)
    return values | memory if memory is not None else values


def form_memory(request: Request) -> dict[str, str] | None:
    """What the story form last asked for on this device, if it remembers anything."""
    raw = request.cookies.get(FORM_COOKIE, "")
    if not raw:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
    except (ValueError, binascii.Error):  # not ours, or cut short
        return None
    if not isinstance(data, dict):
        return None
    return {name: value[:CHILD_NAME_MAX_CHARS] for name in FORM_REMEMBERS
            if isinstance(value := data.get(name), str)}


def remember_form(response: Response, values: dict[str, str]) -> None:
    """Keep the form's choice (whom for, and the name, age, length and language it had)."""
    data = {name: str(values.get(name) or "")[:CHILD_NAME_MAX_CHARS] for name in FORM_REMEMBERS}
    if data["for"] == "earlier":  # a sequel's own choice: the next form starts afresh
        data["for"] = ""
    raw = base64.urlsafe_b64encode(json.dumps(data, ensure_ascii=False).encode()).decode()
    response.set_cookie(FORM_COOKIE, raw.rstrip("="), max_age=PREFERENCE_MAX_AGE_S,
                        samesite="lax", httponly=True)
