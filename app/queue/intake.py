"""Intake: turning a request for a story into a job, exactly once per idempotency key.

    request = parse_story_request(body)           # Invalid names the field
    key = parse_idempotency_key(header)            # BadRequest when missing or malformed
    submission = await intake.submit(key, request)  # resolve=: fills in a profile named
    submission.job, submission.replayed

A replay is answered before any capacity or limit check, so retrying a request can never
be refused. A new job is checked against the queue bound (pending rows in the whole
database) and the day's limit under the intake lock before anything is written, so a
refusal writes nothing and the key stays unused. The same statement notifies every
process's idle workers, so one claims the job the moment it commits: the lock, the
replay check, the counts, the insert and the notification are one statement
(`intake_job`, sql/functions/intake_job.sql), so an accepted job costs one round trip.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

from app.errors import BadRequest, Busy, Invalid, Unavailable
from app.queue.jobs import IntakeResult, Job
from app.queue.store import JobStore
from app.queue.wakeup import Wakeup
from app.stories import (
    DEFAULT_LANGUAGE,
    ID_MAX,
    LANGUAGES,
    LENGTHS,
    LIKES_JOINED,
    Child,
    StoryRequest,
    parse_id,
)
from app.storytelling.moderation import Moderator

PROMPT_MAX_CHARS = 500
CHILD_NAME_MAX_CHARS = 40
AGE_RANGE = range(1, 13)
KEY_MAX_CHARS = 255
FIELDS = ("prompt", "child_name", "age", "length", "language", "child_id", "sibling_id")
QUEUE_FULL_RETRY_AFTER_S = 30
SHUTDOWN_RETRY_AFTER_S = 10


# Makes the job's request from the one the client sent (the profiles it names read).
Resolver = Callable[[], Awaitable[StoryRequest]]


@dataclass(frozen=True)
class Submission:
    job: Job
    replayed: bool  # the key's own job, made before
    # A finish whose story another job (another key's) finishes already: that job.
    finished_already: bool = False


def parse_idempotency_key(raw: str | None) -> str:
    """The key as sent, or the IETF draft's quoted form `"abc"` meaning the same key."""
    if raw is None:
        raise BadRequest("The Idempotency-Key header is required.", code="idempotency_key_missing")
    key = raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] == '"' else raw
    if not 1 <= len(key) <= KEY_MAX_CHARS or not all(" " <= c <= "~" for c in key):
        raise BadRequest(
            "The Idempotency-Key must be 1 to 255 printable ASCII characters.",
            code="idempotency_key_invalid",
        )
    return key


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
        raise Invalid(f"language must be one of {', '.join(LANGUAGES)}.", field="language")
    return value


def parse_story_request(
    data: object, *, from_form: bool = False, child: Child | None = None,
    sibling: Child | None = None,
) -> StoryRequest:
    """Validate the fields of a JSON body (or a form, whose values are all text). `child`:
    the profile the request names (`child_id`, looked up by the caller), whose name, age,
    usual length, language and likes fill in whatever the request leaves out. `sibling`:
    a second profile (`sibling_id`), for a story about both children: their name and age
    join the story, and their likes join the first child's."""
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
        raise Invalid("prompt is required: what should the story be about?", field="prompt")
    prompt = prompt.strip()
    if len(prompt) > PROMPT_MAX_CHARS:
        raise Invalid(f"prompt must be at most {PROMPT_MAX_CHARS} characters.", field="prompt")

    child_name = fields.get("child_name")
    if child_name is not None:
        if not isinstance(child_name, str):
            raise Invalid("child_name must be text.", field="child_name")
        child_name = child_name.strip() or None
        if child_name and len(child_name) > CHILD_NAME_MAX_CHARS:
            raise Invalid(
                f"child_name must be at most {CHILD_NAME_MAX_CHARS} characters.", field="child_name"
            )

    age = fields.get("age")
    if age is not None:
        if from_form and isinstance(age, str) and age.strip().isdecimal():
            with contextlib.suppress(ValueError):  # over 4300 digits: stays text, so invalid
                age = int(age.strip())
        if isinstance(age, bool) or not isinstance(age, int) or age not in AGE_RANGE:
            raise Invalid("age must be a whole number from 1 to 12.", field="age")

    length = fields.get("length", (child.length if child else None) or "medium")
    if length not in LENGTHS:
        raise Invalid("length must be one of short, medium or long.", field="length")

    language = parse_language(
        fields.get("language", (child.language if child else None) or DEFAULT_LANGUAGE))
    if child is not None:
        child_name = child_name or child.name
        age = age if age is not None else child.age
    child_id = parse_child_id(data, from_form=from_form)
    sibling_id = parse_child_id(data, from_form=from_form, field="sibling_id")
    if sibling_id is not None and (child_id is None or sibling_id == child_id):
        raise Invalid("sibling_id must name another child than child_id, with child_id given.",
                      field="sibling_id")
    likes = LIKES_JOINED.join(
        dict.fromkeys(profile.likes for profile in (child, sibling) if profile and profile.likes)
    ) or None

    for name, value in (("prompt", prompt), ("child_name", child_name or "")):
        if "\x00" in value:
            raise Invalid(f"{name} must not contain NUL characters.", field=name)
    return StoryRequest(prompt=prompt, child_name=child_name, age=age, length=length,
                        language=language, likes=likes,
                        sibling_name=sibling.name if sibling else None,
                        sibling_age=sibling.age if sibling else None,
                        child_id=child_id, sibling_id=sibling_id)


def request_hash(request: StoryRequest) -> str:
    """Equal for requests that mean the same story: normalised fields, order ignored.
    A sequel's fields, the job a finish carries on from, a language other than English,
    a profile's likes, a sibling and the profiles named count only when set, so every other
    request hashes as before. Hashed as the client sent it (`child_id`, not what the
    profile filled in: see Intake.submit), a request stays the same request when its
    profile changes."""
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
    if request.sibling_name is not None:
        fields |= {"sibling_name": request.sibling_name, "sibling_age": request.sibling_age}
    if request.child_id is not None:
        fields |= {"child_id": request.child_id}
    if request.sibling_id is not None:
        fields |= {"sibling_id": request.sibling_id}
    canonical = json.dumps(
        fields,
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


class Intake:
    def __init__(
        self,
        store: JobStore,
        wakeup: Wakeup,
        *,
        queue_max: int,
        daily_story_limit: int,
        timezone: tzinfo,
        moderator: Moderator | None = None,
    ) -> None:
        self.store = store
        self.wakeup = wakeup
        self.queue_max = queue_max
        self.daily_story_limit = daily_story_limit
        self.timezone = timezone
        self.moderator = moderator
        self.closed = False  # set at shutdown: new jobs are refused, replays still answered

    async def submit(
        self, key: str, request: StoryRequest, *, resolve: Resolver | None = None
    ) -> Submission:
        """The key's job, made now or earlier (a replay). `request` is what the client sent,
        whose hash decides a replay; `resolve`, when it names a profile, makes the job's
        request from it (the profile's values filled in), asked only once no job has the
        key: a replay is answered before the profile is read, so editing or deleting it
        never turns a replay into a refusal."""
        digest = request_hash(request)
        if self.closed or self.moderator is not None or resolve is not None:
            # A replay is answered as ever; only a new job is refused at shutdown, filled
            # in from its profile, or screened (a network call, which must not hold the
            # intake lock).
            existing = await self.store.get_by_key(key)
            if existing is not None:
                return self._replay(existing, digest)
            if self.closed:
                raise Unavailable(
                    "The storyteller is restarting; please try again in a moment.",
                    code="shutting_down",
                    retry_after_s=SHUTDOWN_RETRY_AFTER_S,
                )
            if resolve is not None:
                request = await resolve()
            if self.moderator is not None:
                await self.moderator.check_request(request)
        result = await self.store.intake(
            key, digest, request, since=self._midnight(), queue_max=self.queue_max,
            daily_limit=self.daily_story_limit,
        )
        if result.replayed:
            assert result.job is not None
            if result.job.idempotency_key != key:  # a story cut short is finished once
                return Submission(job=result.job, replayed=False, finished_already=True)
            return self._replay(result.job, digest)
        if result.job is None:
            self._refuse(result)
        assert result.job is not None
        self.wakeup.poke()  # this process's own idle workers need not wait for the NOTIFY
        return Submission(job=result.job, replayed=False)

    def stories_left_today(self, used: int) -> int:
        return max(self.daily_story_limit - used, 0)

    async def used_today(self) -> int:
        return await self.store.count_since(self._midnight())

    def _replay(self, existing: Job, digest: str) -> Submission:
        if existing.request_hash != digest:
            raise Invalid(
                "This Idempotency-Key was already used for a different story request.",
                code="idempotency_key_reused",
            )
        return Submission(job=existing, replayed=True)

    def _refuse(self, result: IntakeResult) -> None:
        """Why the intake made no job: the queue bound first, then the day's limit."""
        if result.pending >= self.queue_max:
            raise Busy(
                "The storyteller has a queue of stories to write; please try again shortly.",
                code="queue_full",
                retry_after_s=QUEUE_FULL_RETRY_AFTER_S,
            )
        if result.used_today >= self.daily_story_limit:
            message, retry_after_s = self.limit_reached()
            raise Busy(message, code="daily_limit_reached", retry_after_s=retry_after_s)
        # Only a writer that skipped the intake lock could take the key in between.
        raise Unavailable("Please try again.", retry_after_s=1)

    def limit_reached(self) -> tuple[str, int]:
        """What to say once the day's stories are used up, and the seconds until midnight
        (the form says it before a child chooses; a refused request says it too)."""
        tomorrow = self._midnight() + timedelta(days=1)  # wall-clock: right across DST too
        retry_after_s = max(int(tomorrow.timestamp() - time.time()), 1)
        hours, minutes = divmod(math.ceil(retry_after_s / 60), 60)
        used_up = ("That's the 1 story for today." if self.daily_story_limit == 1
                   else f"That's all {self.daily_story_limit} stories for today.")
        message = f"{used_up} More after midnight, in {hours} h {minutes} min."
        return message, retry_after_s

    def _midnight(self) -> datetime:
        now = datetime.now(self.timezone)
        return now.replace(hour=0, minute=0, second=0, microsecond=0)
