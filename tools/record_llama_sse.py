"""tests/fixtures/llama_cpp/*.sse: streamed Chat Completions answers of a real server, as
the raw bytes of each HTTP response body, for the fake provider to replay in `make test`.

    python tools/record_llama_sse.py        # builds the server when needed (real_model_env)

It starts llama-cpp-python's server with SmolLM2-135M (a 4,096-token context) on loopback,
sends the app's own prompt (app/storytelling/openai.py's messages) as the app sends it, and
keeps, for each shape, the first answer that has it (trying seeds in turn):

    no_finish_reason     a stream cut by a second request: `[DONE]` and no finish_reason
    single_line_breaks   paragraphs separated by one line break, not a blank line
    paragraph_title      a first line that is no title (over 80 characters, or a label)
    echoed_markup        the prompt's own markup (<idea>, <name>…) in the story
    empty_past_context   a request longer than the context: what the server streams then
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.stories import StoryRequest  # noqa: E402
from app.storytelling.prompt import build_prompt  # noqa: E402
from tests.helpers.llama_server import MODEL, LlamaServer, build, real_model_env  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "llama_cpp"
SEEDS = range(1, 40)
_MARKUP = re.compile(r"</?\s*(idea|name|earlier|title|begun|likes|companions)\b", re.I)
_LABEL = re.compile(r"^\s*(#|\*|title\s*:|the story'?s title is\b)", re.I)


def messages(request: StoryRequest) -> list[dict[str, str]]:
    """The app's own messages for the request, as the chat storyteller sends them."""
    system, user = build_prompt(request)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def body(request: StoryRequest, seed: int, max_tokens: int = 700) -> dict:
    return {"model": MODEL, "messages": messages(request), "stream": True,
            "stream_options": {"include_usage": True}, "max_tokens": max_tokens, "seed": seed}


def record(url: str, payload: dict, on_first_bytes: Callable[[], None] | None = None) -> bytes:
    raw = b""
    with httpx.stream("POST", f"{url}/chat/completions", json=payload, timeout=300) as answer:
        for chunk in answer.iter_raw():
            raw += chunk
            if on_first_bytes is not None and raw.count(b"data: ") >= 20:
                on_first_bytes()
                on_first_bytes = None
    return raw


def text_of(raw: bytes) -> str:
    text = ""
    for line in raw.decode().splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:]).get("choices") or []:
                text += (choice.get("delta") or {}).get("content") or ""
    return text


def first_with(url: str, request: StoryRequest, has: Callable[[str], bool]) -> bytes:
    for seed in SEEDS:
        raw = record(url, body(request, seed))
        if has(text_of(raw)):
            print(f"  seed {seed}", flush=True)
            return raw
    raise SystemExit(f"no answer of that shape in seeds {SEEDS}")


def cut_by_a_second_request(url: str) -> bytes:
    def second() -> None:
        threading.Thread(target=httpx.post, args=(f"{url}/chat/completions",), kwargs={
            "json": {"model": MODEL, "max_tokens": 4,
                     "messages": [{"role": "user", "content": "Hello"}]},
            "timeout": 120}).start()

    raw = record(url, body(StoryRequest(prompt="a kind dragon"), 1), second)
    time.sleep(2)  # the second request's own answer, before the next recording
    return raw


def past_the_context(url: str) -> bytes:
    long_idea = "a very long walk through the quiet woods " * 60
    request = StoryRequest(prompt=long_idea[:500], carried_text="The Long Walk\n\n"
                           + "The fox walked on and on under the moon. " * 450)
    return record(url, body(request, 1))


def main() -> int:
    problem = build(Path("/dev/null"))
    if problem is not None:
        raise SystemExit(problem)
    env = real_model_env()
    assert env is not None
    OUT.mkdir(parents=True, exist_ok=True)
    fox = StoryRequest(prompt="a little fox who cannot find the moon", age=5, length="short")
    with LlamaServer(env, Path("/tmp/record-llama.log")) as server:
        shapes: dict[str, Callable[[], bytes]] = {
            "no_finish_reason": lambda: cut_by_a_second_request(server.url),
            "single_line_breaks": lambda: first_with(
                server.url, fox, lambda t: bool(re.search(r"[.!?\"]\n(?!\n)\S", t.strip()))),
            "paragraph_title": lambda: first_with(
                server.url, fox, lambda t: len(t.strip().split("\n")[0]) > 80
                or bool(_LABEL.match(t))),
            "echoed_markup": lambda: first_with(
                server.url, StoryRequest(prompt="a bear who loves honey", child_name="Leo",
                                         likes="boats", length="short"),
                lambda t: bool(_MARKUP.search(t))),
            "empty_past_context": lambda: past_the_context(server.url),
        }
        for name, make in shapes.items():
            print(name, flush=True)
            (OUT / f"{name}.sse").write_bytes(make())
    print(f"{env['llama_cpp']}, {env['weights']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
