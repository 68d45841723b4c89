"""The models the installed openai library lists and marks deprecated, read from its own
files without importing it; the default STORY_MODEL is one of the current ones."""

from __future__ import annotations

import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from app.config import DEFAULT_STORY_MODEL, load_settings
from app.storytelling.models import chat_models, image_models, read_model_list

ROOT = Path(__file__).resolve().parent.parent


def test_the_default_story_model_is_listed_by_the_openai_library_and_not_deprecated():
    known = chat_models()
    settings = load_settings({}, env_file="/nonexistent/.env")
    assert settings.story_model == DEFAULT_STORY_MODEL == "gpt-6-luna"
    assert DEFAULT_STORY_MODEL in known.names
    assert DEFAULT_STORY_MODEL not in known.deprecated
    assert known.is_current(DEFAULT_STORY_MODEL)


def test_each_deprecated_model_has_the_shutdown_date_the_library_announces():
    known = chat_models()
    assert known.deprecated["gpt-4o-mini"] == date(2027, 1, 14)
    assert known.deprecated["gpt-5-mini"] == date(2026, 12, 11)
    assert known.deprecated["o3"] == date(2026, 12, 11)
    assert known.deprecated["gpt-3.5-turbo-1106"] == date(2026, 9, 28)
    assert known.deprecated["gpt-5.1-mini"] is None  # deprecated, no date given
    assert set(known.deprecated) <= set(known.names)
    assert not known.is_current("gpt-4o-mini") and not known.is_current("no-such-model")


def test_the_image_models_are_read_the_same_way():
    known = image_models()
    assert "gpt-image-2" in known.names and known.is_current("gpt-image-2")
    assert known.deprecated["gpt-image-1"] == date(2026, 10, 23)  # "shut down on October 23"
    assert known.deprecated["dall-e-3"] == date(2026, 5, 12)


def test_reading_the_lists_does_not_import_the_openai_library():
    script = ("import sys; from app.storytelling.models import chat_models; "
              "assert chat_models().names; print('openai' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


@pytest.mark.parametrize("text", [
    None,  # no such file
    "this is not python (",
    "ChatModel = str\n",
    b"\xff\xfe not utf-8",
])
def test_a_missing_or_unreadable_model_file_gives_an_empty_answer(tmp_path, text):
    path = tmp_path / "chat_model.py"
    if isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        path.write_text(text)
    known = read_model_list(path)
    assert (known.names, known.deprecated) == ((), {})


def test_a_list_without_a_deprecated_block_has_no_deprecated_models(tmp_path):
    path = tmp_path / "chat_model.py"
    path.write_text('from typing import Literal\nM = Literal["a", "b"]\n"""Just a list."""\n')
    known = read_model_list(path)
    assert known.names == ("a", "b") and known.deprecated == {}


def test_the_default_image_model_is_listed_by_the_openai_library_and_not_deprecated():
    from app.config import DEFAULT_IMAGE_MODEL
    from app.storytelling.models import image_models

    known = image_models()
    assert load_settings({}, env_file="/nonexistent").image_model == DEFAULT_IMAGE_MODEL
    assert known.is_current(DEFAULT_IMAGE_MODEL)
    assert "gpt-image-1" in known.deprecated  # the library's own word: shut down


def test_the_default_voice_model_is_not_deprecated_and_its_voice_is_the_library_s():
    import typing

    from openai.types.chat.chat_completion_audio_param import ChatCompletionAudioParam

    from app.config import DEFAULT_VOICE, DEFAULT_VOICE_MODEL, OPENAI_VOICES
    from app.storytelling.models import speech_models

    settings = load_settings({"OPENAI_API_KEY": "k"}, env_file="/nonexistent")
    assert (settings.narrator, settings.voice_model, settings.voice) == (
        "openai", DEFAULT_VOICE_MODEL, DEFAULT_VOICE)
    assert DEFAULT_VOICE_MODEL not in chat_models().deprecated
    assert DEFAULT_VOICE_MODEL not in speech_models().deprecated
    # Every voice the app lets VOICE name is one the library lists for audio output.
    voice = typing.get_type_hints(ChatCompletionAudioParam)["voice"]
    listed = {value for arg in typing.get_args(voice) for value in typing.get_args(arg)}
    assert set(OPENAI_VOICES) == listed and DEFAULT_VOICE in listed


def test_the_speech_models_are_all_announced_to_shut_down():
    from app.storytelling.models import speech_models

    known = speech_models()
    assert "tts-1" in known.names and known.deprecated["tts-1"] == date(2027, 1, 6)
    assert all(known.deprecated.get(model) == date(2027, 1, 6) for model in known.names)
