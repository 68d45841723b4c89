"""The one back-off helper (app/backoff.py): the waits double up to their cap, start again
after a reset, spread by their jitter alone, and the patience runs out when it says."""

from __future__ import annotations

import asyncio
import threading

import pytest

from app import backoff as backoff_module
from app.backoff import Backoff


def waits_of(backoff: Backoff, count: int, monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []
    real_sleep, here = asyncio.sleep, threading.get_ident()

    async def sleep(delay_s: float, *args: object) -> object:
        if threading.get_ident() != here:  # another thread's loop (a served app's): its own
            return await real_sleep(delay_s, *args)
        slept.append(delay_s)
        return None

    async def wait_all() -> None:
        for _ in range(count):
            await backoff.wait()

    monkeypatch.setattr(backoff_module.asyncio, "sleep", sleep)
    asyncio.run(wait_all())
    return slept


def test_each_wait_doubles_the_one_before_up_to_the_cap(monkeypatch):
    backoff = Backoff(0.2, max_s=5.0)
    assert backoff.next_s == 0.2
    assert waits_of(backoff, 8, monkeypatch) == pytest.approx(
        [0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0])


def test_a_reset_starts_again_from_the_first_wait(monkeypatch):
    backoff = Backoff(0.5, max_s=5.0)
    waits_of(backoff, 3, monkeypatch)
    assert backoff.next_s == 4.0  # after 0.5, 1 and 2 s
    backoff.reset()
    assert backoff.next_s == 0.5


def test_jitter_spreads_each_wait_within_its_fraction(monkeypatch):
    backoff = Backoff(1.0, max_s=4.0, jitter=0.25)
    for base, waited in zip([1.0, 2.0] + [4.0] * 98, waits_of(backoff, 100, monkeypatch),
                            strict=True):
        assert 0.75 * base <= waited <= 1.25 * base


def test_without_patience_it_never_runs_out_and_with_it_it_does():
    assert Backoff(0.1, max_s=1.0).time_left_s == float("inf")
    assert 9 < Backoff(0.1, max_s=1.0, patience_s=10).time_left_s <= 10
    assert Backoff(0.1, max_s=1.0, patience_s=-1).time_left_s < 0
