"""A story request's one shape beside its type (`StoryRequest`): what a client may send and
how it is checked, how a job stores it and reads it back, how it is hashed and how a
backup keeps it. A new field is a `StoryRequest` attribute, its check in `parse_story_request`
(when a client may send it) and its column (a migration): every mapping here follows it.

    request = parse_story_request(body)            # Invalid names the field
    sent = parse_sent(body); request = sent.filled_in(child, sibling)   # profiles named
    params = to_params(request)                     # {column: value}, a job's row
    request = request_from_row(row)                 # a job's row (or its JSON) back
    digest = request_hash(request)                  # what decides a replay
    request = parse_backed_up(entry)                # a backup's story's request
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.errors import Invalid
from app.i18n import gettext
from app.languages import DEFAULT_LANGUAGE, LANGUAGES
from app.lengths import LENGTHS
from app.stories import (
    ID_MAX,
    Child,
    StoryRequest,
    clean_text,
    parse_id,
)

PROMPT_MAX_CHARS = 500
CHILD_NAME_MAX_CHARS = 40
AGE_RANGE = range(1, 13)
# A sibling story weaves in both children's favourite things: each profile's, joined.
LIKES_JOINED = "; "
LIKES_MAX_CHARS = 200  # one profile's (child_profiles.likes' CHECK)
STORY_LIKES_MAX_CHARS = 2 * LIKES_MAX_CHARS + len(LIKES_JOINED)
# A profile's companions, bounded as its likes are (and joined the same way for two).
COMPANIONS_MAX_CHARS = LIKES_MAX_CHARS
STORY_COMPANIONS_MAX_CHARS = STORY_LIKES_MAX_CHARS
PREVIOUSLY_MAX_CHARS = 1000  # story_jobs.previously's CHECK
# What a client may send (JSON or a form).
FIELDS = ("prompt", "child_name", "age", "length", "language", "child_id", "sibling_id")
PROFILE_IDS = ("child_id", "sibling_id")  # counted in the hash; the job keeps the values
# The job's columns for its request (story_jobs), in StoryRequest's order.
COLUMNS = tuple(field.name for field in dataclasses.fields(StoryRequest)
                if field.name not in PROFILE_IDS)
# What a story's picture job copies of its story's request: who it was for, what they
# like; not the words a finish carries on from (a picture finishes nothing).
PICTURE_REQUEST_COLUMNS = tuple(name for name in COLUMNS
                                if name not in ("finish_of", "carried_text"))
# What a backup keeps of a request: ids differ between installations (a sequel names its
# story by uid), and a finished story's carried words are in its text already.
BACKED_UP = tuple(name for name in COLUMNS if name not in ("sequel_of", "finish_of",
                                                             "carried_text"))


def to_params(request: StoryRequest) -> dict[str, object]:
    """The request as a job's columns."""
    return {name: getattr(request, name) for name in COLUMNS}


def request_from_row(row: Mapping[str, Any]) -> StoryRequest:
    """The request a job's row (a full `story_jobs` row, or its JSON) stores."""
    return StoryRequest(**{name: row[name] for name in COLUMNS})


def request_json(request: StoryRequest) -> dict[str, object]:
    """The request as a backup keeps it (parse_backed_up reads it back)."""
    return {name: getattr(request, name) for name in BACKED_UP}


def parse_child_id(
    data: object, *, from_form: bool = False, field: str = "child_id"
) -> int | None:
    """The profile a request names (`child_id`, or the sibling's `sibling_id`), if it names
    one; Invalid when it is no id at all. Whether the profile exists is the caller's to ask."""
    if not isinstance(data, Mapping):
        return None
    raw = data.get(field)
    if raw is None or (from_form and isinstance(raw, str) and not raw.strip()):
        return None
    child_id = parse_id(raw.strip()) if from_form and isinstance(raw, str) else raw
    if isinstance(child_id, bool) or not isinstance(child_id, int) or not 1 <= child_id <= ID_MAX:
        raise Invalid(f"{field} must be the number of one of the household's children.",
                      field=field)
    return child_id


def parse_language(value: object) -> str:
    """A language tag the storyteller writes in; Invalid names `language` otherwise."""
    if not isinstance(value, str) or value not in LANGUAGES:
        raise Invalid(f"language must be one of {', '.join(LANGUAGES)}.", field="language",
                      said=gettext("Please choose one of the languages in the list."))
    return value


@dataclass(frozen=True)
class SentRequest:
    """A request as the client sent it, checked once: `request` (whose hash decides a
    replay) and the fields it gave, which the profiles it names do not replace."""

    request: StoryRequest
    given: frozenset[str]

    def filled_in(self, child: Child | None, sibling: Child | None = None) -> StoryRequest:
        """The job's request: `child` (the profile `child_id` names, read by the caller)
        fills in the name, age, usual length and language the request left out, and its
        likes and companions; `sibling` (`sibling_id`'s), for a story about both children,
        adds their name and age, and their likes and companions join the first child's."""
        request = self.request
        if child is not None:
            request = dataclasses.replace(
                request, child_name=request.child_name or child.name,
                age=request.age if request.age is not None else child.age,
                length=request.length if "length" in self.given else child.length or "medium",
                language=request.language if "language" in self.given
                else child.language or DEFAULT_LANGUAGE)
        profiles = [profile for profile in (child, sibling) if profile is not None]
        likes = LIKES_JOINED.join(dict.fromkeys(
            profile.likes for profile in profiles if profile.likes)) or None
        companions = LIKES_JOINED.join(dict.fromkeys(
            profile.companions for profile in profiles if profile.companions)) or None
        return dataclasses.replace(request, likes=likes, companions=companions,
                                   sibling_name=sibling.name if sibling else None,
                                   sibling_age=sibling.age if sibling else None)


def parse_story_request(data: object, *, from_form: bool = False) -> StoryRequest:
    """Validate the fields of a JSON body (or a form, whose values are all text)."""
    return parse_sent(data, from_form=from_form).request


def parse_sent(data: object, *, from_form: bool = False) -> SentRequest:
    """parse_story_request's request, with the fields it gave (for SentRequest.filled_in)."""
    if not isinstance(data, Mapping):
        raise Invalid("The body must be a JSON object.")
    unknown = sorted(str(name) for name in data if name not in FIELDS)
    if unknown:
        raise Invalid(f"Unknown field: {unknown[0]}.", field=unknown[0])
    fields = {
        name: value
        for name, value in data.items()
        # An omitted field, a null, or (in a form) an empty box all mean "not given".
        if value is not None and not (from_form and isinstance(value, str) and not value.strip())
    }

    prompt = fields.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise Invalid("prompt is required: what should the story be about?", field="prompt",
                      said=gettext("Please write a few words about what the story should be "
                                   "about."))
    prompt = prompt.strip()
    if len(prompt) > PROMPT_MAX_CHARS:
        over = len(prompt) - PROMPT_MAX_CHARS
        raise Invalid(
            f"prompt must be at most {PROMPT_MAX_CHARS} characters (it has {len(prompt)}).",
            field="prompt",
            said=gettext("That idea is %(used)d characters long, and a story's idea can be "
                         "%(most)d at most. Please make it %(over)d shorter.") % {
                "used": len(prompt), "most": PROMPT_MAX_CHARS, "over": over})

    child_name = fields.get("child_name")
    if child_name is not None:
        if not isinstance(child_name, str):
            raise Invalid("child_name must be text.", field="child_name",
                          said=gettext("Please type the name in letters."))
        child_name = child_name.strip() or None
        if child_name and len(child_name) > CHILD_NAME_MAX_CHARS:
            raise Invalid(
                f"child_name must be at most {CHILD_NAME_MAX_CHARS} characters.",
                field="child_name",
                said=gettext("A name can be %(most)d letters at most. Perhaps a shorter one, "
                             "or a nickname?") % {"most": CHILD_NAME_MAX_CHARS})

    age = fields.get("age")
    if age is not None:
        if from_form and isinstance(age, str) and age.strip().isdecimal():
            with contextlib.suppress(ValueError):  # over 4300 digits: stays text, so invalid
                age = int(age.strip())
        if isinstance(age, bool) or not isinstance(age, int) or age not in AGE_RANGE:
            raise Invalid("age must be a whole number from 1 to 12.", field="age",
                          said=gettext("The age is a number from 1 to 12, or leave it empty."))

    length = fields.get("length", "medium")
    if length not in LENGTHS:
        raise Invalid("length must be one of short, medium or long.", field="length",
                      said=gettext("Please choose Short, Medium or Long."))

    language = parse_language(fields.get("language", DEFAULT_LANGUAGE))
    child_id = parse_child_id(data, from_form=from_form)
    sibling_id = parse_child_id(data, from_form=from_form, field="sibling_id")
    if sibling_id is not None and (child_id is None or sibling_id == child_id):
        raise Invalid("sibling_id must name another child than child_id, with child_id given.",
                      field="sibling_id")

    for name, value in (("prompt", prompt), ("child_name", child_name or "")):
        if "\x00" in value:
            raise Invalid(f"{name} must not contain NUL characters.", field=name,
                          said=gettext("Some of this text could not be read. Please type it "
                                       "again."))
    request = StoryRequest(prompt=prompt, child_name=child_name, age=age, length=length,
                           language=language, child_id=child_id, sibling_id=sibling_id)
    return SentRequest(request, frozenset(fields))


def parse_backed_up(entry: Mapping[str, object]) -> StoryRequest:
    """A backup's story's request (request_json's), checked as a client's is, its texts
    cleaned as the worker cleans a story; Invalid names the field that is not valid."""
    request = parse_story_request({
        name: clean_text(value) if isinstance(value := entry.get(name), str) else value
        for name in FIELDS if name not in PROFILE_IDS})
    previously = stored_text(entry, "previously", PREVIOUSLY_MAX_CHARS)
    likes = stored_text(entry, "likes", STORY_LIKES_MAX_CHARS)
    companions = stored_text(entry, "companions", STORY_COMPANIONS_MAX_CHARS)
    sibling_name = stored_text(entry, "sibling_name", CHILD_NAME_MAX_CHARS)
    sibling_age = entry.get("sibling_age")
    if sibling_age is not None and (isinstance(sibling_age, bool) or not isinstance(
            sibling_age, int) or sibling_age not in AGE_RANGE):
        raise Invalid("sibling_age must be a whole number from 1 to 12", field="sibling_age")
    return dataclasses.replace(request, previously=previously, likes=likes,
                               companions=companions, sibling_name=sibling_name,
                               sibling_age=sibling_age if sibling_name else None)


def stored_text(entry: Mapping[str, object], name: str, max_chars: int | None = None) -> str | None:
    """The field's text, cleaned as the worker cleans a story, trimmed and cut to
    `max_chars`; None when it is missing, null or blank."""
    value = entry.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise Invalid(f"{name} must be text", field=name)
    return clean_text(value).strip()[:max_chars] or None


def request_hash(request: StoryRequest) -> str:
    """Equal for requests that mean the same story: normalised fields, order ignored.
    A sequel's fields, the job a finish carries on from, a language other than English,
    a profile's likes and companions, a sibling and the profiles named count only when
    set, so every other request hashes as before. Hashed as the client sent it
    (`child_id`, not what the profile filled in: see Intake.submit), a request stays the
    same request when its profile changes."""
    fields: dict[str, object] = {"prompt": request.prompt, "child_name": request.child_name,
                                 "age": request.age, "length": request.length}
    if request.sequel_of is not None:
        fields |= {"sequel_of": request.sequel_of, "previously": request.previously}
    if request.finish_of is not None:
        fields |= {"finish_of": request.finish_of}
    if request.language != DEFAULT_LANGUAGE:
        fields |= {"language": request.language}
    if request.likes is not None:
        fields |= {"likes": request.likes}
    if request.companions is not None:
        fields |= {"companions": request.companions}
    if request.sibling_name is not None:
        fields |= {"sibling_name": request.sibling_name, "sibling_age": request.sibling_age}
    if request.child_id is not None:
        fields |= {"child_id": request.child_id}
    if request.sibling_id is not None:
        fields |= {"sibling_id": request.sibling_id}
    canonical = json.dumps(fields, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()
