"""The household's child profiles: who the stories are for, and what each one's story
fills in when a request leaves it out (app.requests.parse_story_request).

    children = Children(db)
    child = await children.add(parse_child(body))      # Invalid names the field
    await children.get(child.id); await children.all()
    await children.update(child.id, parse_child(form, from_form=True)); await children.remove(id)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import asyncpg

from app.errors import Invalid
from app.lengths import LENGTHS
from app.queries import Statements, transaction_on
from app.requests import (
    AGE_RANGE,
    CHILD_NAME_MAX_CHARS,
    COMPANIONS_MAX_CHARS,
    LIKES_MAX_CHARS,
    parse_language,
)
from app.shelf.archive import BackupError
from app.stories import Child, clean_text

CHILD_FIELDS = ("name", "age", "length", "language", "likes", "companions")
CHILDREN_MAX = 100  # profiles in a household (and in a backup)
# pg_advisory_xact_lock key for counting profiles against CHILDREN_MAX, then writing them.
CHILDREN_LOCK_KEY = 0x5707_C41


def parse_child(data: object, *, from_form: bool = False) -> Child:
    """A profile from a JSON body, or a form's text fields, where an empty box is "not
    given" (its id is 0 until it is stored)."""
    if not isinstance(data, Mapping):
        raise Invalid("The body must be a JSON object.")
    if from_form:
        data = {name: _form_value(name, str(value)) for name, value in data.items()
                if name in CHILD_FIELDS}
    unknown = sorted(str(name) for name in data if name not in CHILD_FIELDS)
    if unknown:
        raise Invalid(f"Unknown field: {unknown[0]}.", field=unknown[0])
    name = _text(data, "name", CHILD_NAME_MAX_CHARS)
    if name is None:
        raise Invalid("name is required: who are the stories for?", field="name")
    age = data.get("age")
    if age is not None and (isinstance(age, bool) or not isinstance(age, int)
                            or age not in AGE_RANGE):
        raise Invalid("age must be a whole number from 1 to 12.", field="age")
    length = data.get("length")
    if length is not None and length not in LENGTHS:
        raise Invalid("length must be one of short, medium or long.", field="length")
    language = data.get("language")
    if language is not None:
        language = parse_language(language)
    return Child(id=0, name=name, age=age, length=length, language=language,
                 likes=_text(data, "likes", LIKES_MAX_CHARS),
                 companions=_text(data, "companions", COMPANIONS_MAX_CHARS))


def _form_value(name: str, value: str) -> object:
    value = value.strip()
    if not value:
        return None
    if name == "age" and value.isascii() and value.isdecimal() and len(value) <= 3:
        return int(value)
    return value


def _text(data: Mapping[str, object], name: str, max_chars: int) -> str | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise Invalid(f"{name} must be text.", field=name)
    value = clean_text(value).strip()
    if len(value) > max_chars:
        raise Invalid(f"{name} must be at most {max_chars} characters.", field=name)
    return value or None


def child_json(child: Child) -> dict[str, object]:
    return {"child_id": child.id, "name": child.name, "age": child.age,
            "length": child.length, "language": child.language, "likes": child.likes,
            "companions": child.companions}


def _child(row: Any) -> Child:
    return Child(id=row["id"], name=row["name"], age=row["age"], length=row["length"],
                 language=row["language"], likes=row["likes"], companions=row["companions"])


class Children(Statements):
    """The profiles (sql/queries/children.sql)."""

    async def all(self) -> list[Child]:
        return [_child(row) for row in await self._all("list_children")]

    async def get(self, child_id: int) -> Child | None:
        row = await self._one("get_child", {"child_id": child_id})
        return _child(row) if row else None

    async def add(self, child: Child) -> Child:
        """The profile, stored; Invalid once the household has CHILDREN_MAX of them."""
        async with transaction_on(self.db) as connection:
            await self._val("lock_children", {"lock_key": CHILDREN_LOCK_KEY}, on=connection)
            row = await self._one("add_child", {**_params(child), "max": CHILDREN_MAX},
                                  on=connection)
        if row is None:
            raise Invalid(f"A household can keep up to {CHILDREN_MAX} children's profiles.",
                          field="name")
        return _child(row)

    async def update(self, child_id: int, child: Child) -> Child | None:
        """The profile with these fields instead (every field: a form sends them all);
        None when there is no such profile. Stories written for it keep what they asked."""
        row = await self._one("update_child", {**_params(child), "child_id": child_id})
        return _child(row) if row else None

    async def remove(self, child_id: int) -> bool:
        """The profile gone (its stories stay on the shelf); False when it was not there."""
        return await self._val("remove_child", {"child_id": child_id}) is not None

    async def restore(self, children: Iterable[Child], *, on: asyncpg.Connection) -> int:
        """A backup's profiles, each unless one with its name and age is here; how many.
        In the transaction open on `on` (the import's), under the profiles' lock until it
        ends; BackupError, in one line, when they would take the household past
        CHILDREN_MAX: the caller's transaction then rolls them back with the rest."""
        await self._val("lock_children", {"lock_key": CHILDREN_LOCK_KEY}, on=on)
        here = await self._val("count_children", on=on)
        restored = 0
        for child in children:
            restored += await self._val("import_child", _params(child), on=on) is not None
        if here + restored > CHILDREN_MAX:
            raise BackupError(
                f"this backup would take the household to {here + restored} child profiles "
                f"({here} here, {restored} new in the backup), over the {CHILDREN_MAX} it "
                "keeps: nothing was imported")
        return restored


def _params(child: Child) -> dict[str, object]:
    return {"name": child.name, "age": child.age, "length": child.length,
            "language": child.language, "likes": child.likes, "companions": child.companions}
