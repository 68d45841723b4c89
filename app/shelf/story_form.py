"""The story form's choices: whom the story is for (the chooser), the story it continues,
and what the form remembers for the next one; no I/O but reading the earlier story.

    form = await read_story_form(shelf, posted)    # posted: the form's fields
    form.sent()                                    # what goes into the request
    form.then                                      # a sequel's change to it, or None
    form.remembered()                              # the choice kept for the next story

The chooser, `for`, is a profile's id (sent as `child_id`, the name and age boxes left
out), "other" (the name and age boxes), or, for a sequel, "earlier" (the children the
earlier story was for). A post without `for` (a one-tap button) is taken as it is, and
leaves the form's remembered choice alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from app.ideas import idea_in
from app.requests import FIELDS
from app.shelf.sequels import as_sequel, earlier_story, in_language, sequel_fields
from app.shelf.store import ShelfStore, StoredStory
from app.stories import Child, StoryRequest


@dataclass(frozen=True)
class StoryForm:
    chosen: str  # the chooser's value; "" for a one-tap post
    values: dict[str, str]  # what the form shows again, should it be refused
    sent_fields: tuple[str, ...]  # the fields sent as the request
    earlier: StoredStory | None  # the story it continues

    def sent(self) -> dict[str, str]:
        return {name: self.values[name] for name in self.sent_fields}

    @property
    def then(self) -> Callable[[StoryRequest], StoryRequest] | None:
        """A sequel's change to the request, for the children the earlier story was for
        when the chooser says "earlier"."""
        earlier, same_children = self.earlier, self.chosen == "earlier"
        if earlier is None:
            return None
        return lambda asked: as_sequel(asked, earlier, same_children=same_children)

    def refused_field(self, field: str | None) -> str | None:
        """Beside which of the form's fields a refusal of `field` is shown; None: above
        the form (a one-tap profile gone). A profile the chooser named is its `for`."""
        if field in ("child_id", "sibling_id") and not self.chosen:
            return None
        if self.chosen and field == "child_id":
            return "for"
        return field or "prompt"

    def remembered(self) -> dict[str, str]:
        """The form's choice, for the next story on this device (kept only when the post
        came from the chooser: a one-tap story changes nothing)."""
        typed = self.chosen in ("", "other")
        return dict.fromkeys(FIELDS, "") | {
            "for": "" if self.chosen in ("", "earlier") else self.chosen,
            "child_name": self.values["child_name"] if typed else "",
            "age": self.values["age"] if typed else "",
            "length": self.values["length"] or "medium",
            "language": self.values["language"] or "en"}


async def read_story_form(shelf: ShelfStore, form: Mapping[str, object]) -> StoryForm:
    values = {name: str(form.get(name) or "") for name in FIELDS}
    # A browser sends a line break as CR LF: one character, as the form's counter counts it.
    values["prompt"] = values["prompt"].replace("\r\n", "\n")
    chosen = str(form.get("for") or "")
    sent_fields = [name for name in FIELDS if name in form]
    if chosen:  # the chooser: a profile, someone else (the boxes), or the earlier children
        values["for"] = chosen
        left_out = ("child_id", "sibling_id", *(("child_name", "age") if chosen != "other"
                                                 else ()))
        sent_fields = [name for name in sent_fields if name not in left_out]
        if chosen not in ("other", "earlier"):  # a profile
            values["child_id"] = chosen
            sent_fields.append("child_id")
    # One of the form's ideas, tapped on the page in its language: in the story's.
    if values["language"]:
        values["prompt"] = idea_in(values["prompt"], values["language"])
    # "What happens next?": the form names the story it continues (kept on a re-render).
    earlier = await earlier_story(shelf, str(form.get("sequel_of") or ""))
    if earlier is not None:
        values |= sequel_fields(earlier)
        # Its first prompt, untouched, in the language chosen (app.js does it as it changes).
        values["prompt"] = in_language(values["prompt"], earlier.title,
                                       values["language"] or earlier.request.language)
    return StoryForm(chosen, values, tuple(sent_fields), earlier)


def choose_for(values: dict[str, str], children: list[Child]) -> dict[str, str]:
    """`values` with the chooser's choice made: the one it names, while it still can be;
    else the profile named `child_name`, else "someone else" (`other`) with that name."""
    chosen = values.get("for", "")
    ids = {str(child.id): child for child in children}
    if chosen in ids or chosen == "other" or (chosen == "earlier" and values.get("sequel_of")
                                              and values.get("sequel_child")):
        return values
    named = next((child for child in children
                  if values.get("child_name") and child.name == values["child_name"]), None)
    if named is None:
        return values | {"for": "other"}
    return values | {"for": str(named.id), "child_name": "", "age": ""}
