"""What a narration is made of: the story's words cut into parts a narrator can read in one
call, the provider's bytes checked as MP3 before they are kept, parts joined into one file,
and what reading a part may cost at most."""

from __future__ import annotations

from decimal import Decimal

import pytest

from app.money import Price, Usage, bounded
from app.money.prices import narration_most
from app.narrating.audio import PART_MAX_BYTES, NotAudio, join, mp3
from app.narrating.parts import parts
from tests.helpers.fake_audio import MP3_FRAME_BYTES, silent_mp3, silent_wav
from tests.helpers.narrations import LONG_STORY, PARAGRAPH, SENTENCE


def test_a_short_story_is_one_part_title_first():
    assert parts("The Owl", "Once upon a time.\n\nThe end.", limit=4000) == [
        "The Owl.\n\nOnce upon a time.\n\nThe end."]


def test_a_long_story_is_cut_between_paragraphs_then_sentences_each_under_the_limit():
    title, body = LONG_STORY.split("\n\n", 1)
    cut = parts(title, body, limit=4000)
    assert [len(part) for part in cut] == [len(title) + 3 + len(PARAGRAPH), len(PARAGRAPH),
                                           len(PARAGRAPH)]
    smaller = parts(title, body, limit=1000)
    assert all(len(part) <= 1000 for part in smaller) and len(smaller) >= 9
    assert all(part.endswith(SENTENCE) for part in smaller)  # whole sentences only
    assert " ".join(smaller).split() == f"{title}. {body}".split()
    assert parts(title, body, limit=1000) == smaller  # the same words, the same parts


def test_sentences_are_found_in_every_script_and_a_word_too_long_is_cut_last():
    japanese = parts("月", "月が出た。猫が寝た。" * 100, limit=300)
    assert all(len(part) <= 300 for part in japanese)
    assert all(part.endswith("。") for part in japanese)
    endless = parts("", "a" * 2500, limit=1000)
    assert [len(part) for part in endless] == [1000, 1000, 500]


def test_a_note_about_the_story_is_not_read():
    assert parts("Owl", "(A demo story.)\n\nOnce upon a time.", limit=100) == [
        "Owl.\n\nOnce upon a time."]


def test_mp3_frames_are_kept_and_counted_without_their_tags():
    data = silent_mp3(2.0)
    found = mp3(data)
    assert found.frames == data[20:] and len(found.frames) % MP3_FRAME_BYTES == 0
    assert found.seconds == pytest.approx(2.0, abs=0.03)
    with_v1_tag = data + b"TAG" + bytes(125)
    assert mp3(with_v1_tag).frames == found.frames
    cut_short = data + data[20:60]  # a last frame cut short: the rest plays
    assert mp3(cut_short).frames == found.frames


def test_an_info_frame_first_is_dropped_so_joined_parts_say_their_whole_length():
    frame = bytearray(silent_mp3(0.03)[20:20 + MP3_FRAME_BYTES])
    frame[4 + 17:4 + 21] = b"Info"
    found = mp3(bytes(frame) + silent_mp3(1.0)[20:])
    assert not found.frames.startswith(bytes(frame))
    assert found.seconds == pytest.approx(1.0, abs=0.03)


@pytest.mark.parametrize("data", [
    b"", b"not audio at all", silent_wav(1.0), b"\xff\xfb" + bytes(200),
    silent_mp3(1.0) + b"garbage after the frames" * 10,
    silent_mp3(1.0)[:20] + b"OggS" + bytes(400),
])
def test_anything_but_mp3_audio_is_refused(data):
    with pytest.raises(NotAudio):
        mp3(data)


def test_too_much_audio_for_a_part_is_refused():
    with pytest.raises(NotAudio, match="more than a part can be"):
        mp3(silent_mp3(1.0) + bytes(PART_MAX_BYTES))


def test_parts_join_into_one_mp3_as_long_as_they_are_together():
    first, second = mp3(silent_mp3(1.0)), mp3(silent_mp3(2.0))
    whole = mp3(join([first.frames, second.frames]))
    assert whole.seconds == pytest.approx(first.seconds + second.seconds)


def test_a_part_s_most_bounds_what_its_call_may_report_and_its_audio_is_priced_as_audio():
    most = narration_most("x" * 2500)
    assert (most.input_tokens, most.output_tokens, most.audio_tokens) == (2800, 12500, 10000)
    price = Price(input_per_mtok=Decimal("2.5"), output_per_mtok=Decimal("10"),
                  audio_output_per_mtok=Decimal("64"))
    reported = Usage(input_tokens=700, output_tokens=1100, audio_tokens=1000)
    assert bounded(reported, most) == reported
    assert price.charge(reported) == 1750 + 1000 + 64000
    assert bounded(Usage(output_tokens=10, audio_tokens=11), most) is None  # more audio than out
    assert bounded(Usage(output_tokens=most.output_tokens + 1), most) is None
    assert Price(output_per_mtok=Decimal("10")).charge(reported) == 11000  # no audio rate
    assert "audio_output_per_mtok" not in Price().as_json()
