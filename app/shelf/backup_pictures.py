"""A story's picture in a backup: a zip member of its own (`pictures/<uid>.<ext>`, stored
as it is: a picture is compressed already), named by the story's `"picture"` in
stories.json, restored byte for byte.

    name = member_name(story.uid, content_type)        # writing
    name = picture_name(entry)                          # reading: None, or a checked name
    data, content_type = read_picture(source, name)     # BackupError when it will not do

Reading is bounded like the rest of the file: a member over PICTURE_MAX_BYTES (by the
zip's own directory, then by what it really holds) is refused before it is read whole, as
are bytes that are no picture we serve. One refused picture refuses the whole backup.
"""

from __future__ import annotations

import re
import uuid

from app.errors import Invalid
from app.illustrating.small import PICTURE_MAX_BYTES, NotAPicture, checked
from app.shelf.archive import BackupError, Source, read_member

PICTURES_DIR = "pictures/"
EXTENSIONS = {"image/png": "png", "image/webp": "webp", "image/jpeg": "jpg",
              "image/svg+xml": "svg"}
_NAME = re.compile(r"pictures/[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}\.(png|webp|jpg|svg)")


def member_name(uid: uuid.UUID, content_type: str) -> str:
    return f"{PICTURES_DIR}{uid}.{EXTENSIONS[content_type]}"


def picture_name(entry: dict[str, object]) -> str | None:
    """The story's picture member, if it names one; Invalid when the name is not ours."""
    name = entry.get("picture")
    if name is None:
        return None
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise Invalid("its picture is not named as a backup names one", field="picture")
    return name


def read_picture(source: Source, name: str) -> tuple[bytes, str]:
    """The member's bytes and their content type, checked."""
    data = read_member(source, name, max_bytes=PICTURE_MAX_BYTES, field="picture")
    try:
        return data, checked(data)
    except NotAPicture as error:
        raise BackupError(f"the picture {name} is not valid: {error}", field="picture") from None
