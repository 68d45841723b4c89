"""A small answer is compressed with a window its size (app/web/compression.py): the card a
page polls every 3 s is about 3 KB, and zlib's default 32 KB window made each poll set up
(and zero) some 300 KB, two thirds of its compression time (bench/profile.py `done`).
Held by the memory zlib asks for, not by a timing; and the bytes are as small as before."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib

import pytest

from app.web.compression import GZIP_LEVEL, compress

CARD = ("<article class='card'><p>" + " ".join(
    f"The lantern fox counted star number {n} and yawned." for n in range(60)) + "</p></article>"
        ).encode()


def peak_bytes(work) -> int:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_card_sized_answer_sets_up_no_32_kb_window():
    assert 2_000 < len(CARD) < 4_096
    default = peak_bytes(lambda: zlib.compress(CARD, GZIP_LEVEL, wbits=31))
    fitted = peak_bytes(lambda: compress(CARD, "gzip"))
    assert default > 200_000  # what the poll paid before, as measured here
    assert fitted < 100_000


@pytest.mark.parametrize("size", [1_024, 3_000, 4_097, 20_000, 40_000, 200_000])
def test_the_bytes_are_as_small_as_with_the_default_window(size):
    body = (CARD * (size // len(CARD) + 1))[:size]
    ours = compress(body, "gzip")
    assert gzip.decompress(ours) == body
    assert len(ours) <= len(zlib.compress(body, GZIP_LEVEL, wbits=31)) * 1.01
