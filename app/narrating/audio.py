"""Audio as the narrator sends it, checked before it is kept, and parts joined into one file.

    found = mp3(data)          # Mp3(frames, seconds); NotAudio when it is not MP3 audio
    whole = join([found.frames, ...])    # one MP3: its parts' frames, one after another

A narration is MP3: a stream of frames that each stand alone, so parts joined end to end
are one file every player plays and seeks (WAV would need its header rewritten, and
Ogg or AAC their containers). What is kept of a part is its frames alone: an ID3 tag at
either end goes, and so does an encoder's Xing/Info/VBRI frame, which would tell a
player that the whole narration is as long as its first part. The bytes are the
provider's, untrusted: walked frame by frame from their start, so a part that is not
MP3 audio, or has anything but frames inside it, is refused, and its seconds are
counted from its frames, not from what anyone says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

CONTENT_TYPE = "audio/mpeg"
FORMAT: Final = "mp3"  # what is asked of the provider (Chat Completions' audio.format, speech's
# response_format)
# A part is at most this much audio (the database's CHECK on story_narration_parts).
PART_MAX_BYTES = 8 * 1024 * 1024

# Layer III bit rates (kbit/s) by index: MPEG-1's, and MPEG-2's and 2.5's.
_RATES_V1 = (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320)
_RATES_V2 = (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160)
# Sampling rates (Hz) by version bits: 3 MPEG-1, 2 MPEG-2, 0 MPEG-2.5 (1 is reserved).
_SAMPLING = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}
_ID3V1_BYTES = 128
_INFO_TAGS = (b"Xing", b"Info")


class NotAudio(ValueError):
    """Bytes that are not MP3 audio (the detail says what was found)."""


@dataclass(frozen=True)
class Mp3:
    frames: bytes  # the audio frames alone, ready to be joined
    seconds: float


@dataclass(frozen=True)
class _Frame:
    length: int
    samples: int
    sampling: int
    side_info: int  # bytes of side information after the 4-byte header


def _frame_at(data: bytes, at: int) -> _Frame | None:
    """The Layer III frame whose header starts at `at`, or None."""
    if at + 4 > len(data) or data[at] != 0xFF or data[at + 1] & 0xE0 != 0xE0:
        return None
    version, layer = (data[at + 1] >> 3) & 3, (data[at + 1] >> 1) & 3
    rate_index, sampling_index = data[at + 2] >> 4, (data[at + 2] >> 2) & 3
    if version == 1 or layer != 1 or rate_index in (0, 15) or sampling_index == 3:
        return None
    padding, mono = (data[at + 2] >> 1) & 1, (data[at + 3] >> 6) == 3
    sampling = _SAMPLING[version][sampling_index]
    if version == 3:
        length = 144_000 * _RATES_V1[rate_index] // sampling + padding
        return _Frame(length, 1152, sampling, 17 if mono else 32)
    length = 72_000 * _RATES_V2[rate_index] // sampling + padding
    return _Frame(length, 576, sampling, 9 if mono else 17)


def _after_id3v2(data: bytes) -> int:
    if len(data) < 10 or data[:3] != b"ID3":
        return 0
    size = 0
    for byte in data[6:10]:
        size = (size << 7) | (byte & 0x7F)
    footer = 10 if data[5] & 0x10 else 0
    return 10 + size + footer


def _is_info(data: bytes, at: int, frame: _Frame) -> bool:
    tag_at = at + 4 + frame.side_info
    return data[tag_at:tag_at + 4] in _INFO_TAGS or data[at + 36:at + 40] == b"VBRI"


def mp3(data: bytes) -> Mp3:
    """The frames and length of MP3 audio; NotAudio for anything else (nothing, another
    format, bytes between frames, more than PART_MAX_BYTES)."""
    if not data:
        raise NotAudio("no audio")
    if len(data) > PART_MAX_BYTES:
        raise NotAudio(f"{len(data)} bytes of audio, more than a part can be")
    at = _after_id3v2(data)
    kept: list[bytes] = []
    seconds = 0.0
    while at < len(data):
        frame = _frame_at(data, at)
        if frame is None:
            rest = data[at:]
            if len(rest) == _ID3V1_BYTES and rest[:3] == b"TAG":
                break
            raise NotAudio(f"not an MP3 frame at byte {at}" if kept or at else
                           f"not MP3 audio (it starts {data[:4]!r})")
        if at + frame.length > len(data):
            break  # a last frame cut short: what came before plays
        if not (not kept and _is_info(data, at, frame)):
            kept.append(data[at:at + frame.length])
            seconds += frame.samples / frame.sampling
        at += frame.length
    if not kept:
        raise NotAudio("no audio frames")
    return Mp3(b"".join(kept), seconds)


def join(parts: list[bytes]) -> bytes:
    """One MP3 of parts' frames (each as `mp3` kept them), in order."""
    return b"".join(parts)
