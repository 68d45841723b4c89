"""A story read aloud in a backup: a zip member per part (`narrations/<uid>/<part>.mp3`,
stored as it is: MP3 is compressed already), named by the story's `"narration"` in
stories.json with what the part reads (its words' digest), how long it is and who read it;
restored byte for byte, read aloud by nobody.

    entries = write_parts(archive, uid, parts)       # writing: the story's "narration"
    parts = narration_parts(entry)                   # reading: checked names and numbers
    audio = read_part(source, part.file)             # BackupError when it will not do
    await NarrationBackups(db).export()              # {story uid: [NarrationPart, ...]}

Reading is bounded as a picture's is: a member over PART_MAX_BYTES is refused before it is
read whole, and so are bytes that are not MP3 frames alone. One refused part refuses the
whole backup.
"""

from __future__ import annotations

import re
import uuid
import zipfile
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from app.errors import Invalid
from app.narrating.audio import PART_MAX_BYTES, NotAudio, mp3
from app.queries import Statements
from app.requests import stored_text
from app.shelf.archive import BackupError, Source, read_member

NARRATIONS_DIR = "narrations/"
PARTS_MAX = 100
NAME_MAX_CHARS = 200
_NAME = re.compile(r"narrations/[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}/\d{1,2}\.mp3")
_MD5 = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class NarrationPart:
    part: int
    parts: int
    text_md5: str
    seconds: Decimal
    model: str
    voice: str
    audio: bytes | None = None  # exported: its bytes; read from a backup: None
    file: str | None = None  # read from a backup: its zip member


def member_name(uid: uuid.UUID, part: int) -> str:
    return f"{NARRATIONS_DIR}{uid}/{part}.mp3"


def write_parts(archive: zipfile.ZipFile, uid: uuid.UUID,
                parts: list[NarrationPart]) -> list[dict[str, object]]:
    entries: list[dict[str, object]] = []
    for part in parts:
        assert part.audio is not None
        name = member_name(uid, part.part)
        archive.writestr(name, part.audio, compress_type=zipfile.ZIP_STORED)
        entries.append({"file": name, "part": part.part, "parts": part.parts,
                        "text_md5": part.text_md5, "seconds": str(part.seconds),
                        "model": part.model, "voice": part.voice})
    return entries


def narration_parts(entry: dict[str, object]) -> tuple[NarrationPart, ...]:
    """The story's narration parts, if it names any; Invalid names what is not valid."""
    listed = entry.get("narration")
    if listed is None:
        return ()
    if not isinstance(listed, list) or len(listed) > PARTS_MAX:
        raise Invalid("its narration is not a list of parts", field="narration")
    parts = tuple(_part(item) for item in listed)
    counts = {part.parts for part in parts}
    if parts and (len(counts) != 1 or sorted(p.part for p in parts) != list(
            range(len(parts))) or counts != {len(parts)}):
        raise Invalid("its narration's parts are not one whole reading", field="narration")
    return parts


def _part(item: object) -> NarrationPart:
    if not isinstance(item, dict):
        raise Invalid("a narration part is not a JSON object", field="narration")
    name, part, parts = item.get("file"), item.get("part"), item.get("parts")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise Invalid("a narration part is not named as a backup names one", field="narration")
    if (not isinstance(part, int) or not isinstance(parts, int) or isinstance(part, bool)
            or not 0 <= part < parts <= PARTS_MAX):
        raise Invalid("a narration part's number is not valid", field="narration")
    digest = item.get("text_md5")
    if not isinstance(digest, str) or not _MD5.fullmatch(digest):
        raise Invalid("a narration part's text_md5 is not valid", field="narration")
    try:
        seconds = Decimal(str(item.get("seconds")))
    except InvalidOperation:
        seconds = Decimal(-1)
    if not seconds.is_finite() or not 0 < seconds < 3600:
        raise Invalid("a narration part's seconds are not valid", field="narration")
    return NarrationPart(part, parts, digest, seconds.quantize(Decimal("0.01")),
                         stored_text(item, "model", NAME_MAX_CHARS) or "unknown",
                         stored_text(item, "voice", NAME_MAX_CHARS) or "unknown", file=name)


def read_part(source: Source, name: str) -> bytes:
    """The member's bytes, checked to be MP3 frames alone."""
    data = read_member(source, name, max_bytes=PART_MAX_BYTES, field="narration")
    try:
        if mp3(data).frames != data:
            raise NotAudio("more than audio frames")
    except NotAudio as error:
        raise BackupError(f"the narration {name} is not valid: {error}",
                          field="narration") from None
    return data


class NarrationBackups(Statements):
    async def export(self) -> dict[uuid.UUID, list[NarrationPart]]:
        """Every whole narration of the shelf's stories, by story uid."""
        found: dict[uuid.UUID, list[NarrationPart]] = {}
        for row in await self._all("export_narrations"):
            found.setdefault(row["uid"], []).append(NarrationPart(
                row["part"], row["parts"], row["text_md5"], row["seconds"], row["model"],
                row["voice"], audio=bytes(row["audio"])))
        return {uid: parts for uid, parts in found.items() if len(parts) == parts[0].parts}

    async def restore(self, story_id: int, part: NarrationPart, audio: bytes) -> None:
        await self._val("import_narration_part", {
            "story_id": story_id, "part": part.part, "parts": part.parts,
            "text_md5": part.text_md5, "audio": audio, "seconds": part.seconds,
            "model": part.model, "voice": part.voice})
