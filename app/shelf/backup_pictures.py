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

import io
import re
import uuid
import zipfile

from app.errors import Invalid
from app.illustrating.small import PICTURE_MAX_BYTES, NotAPicture, checked
from app.shelf.archive import BackupError, Source

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
    file = io.BytesIO(source) if isinstance(source, bytes) else source
    file.seek(0)
    try:
        with zipfile.ZipFile(file) as archive:
            info = archive.getinfo(name)
            if info.file_size > PICTURE_MAX_BYTES:
                raise NotAPicture(f"over {PICTURE_MAX_BYTES // 2**20} MB")
            with archive.open(info) as member:
                data = member.read(PICTURE_MAX_BYTES + 1)
    except KeyError:
        raise BackupError(f"the picture {name} is not in this zip", field="picture") from None
    except NotAPicture as error:
        raise BackupError(f"the picture {name} is {error}", field="picture") from None
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise BackupError(f"the picture {name} cannot be read ({error})",
                          field="picture") from None
    try:
        return data, checked(data)
    except NotAPicture as error:
        raise BackupError(f"the picture {name} is not valid: {error}", field="picture") from None
