"""The login limiter: failed logins counted per device, per address and for the app.

    limiter = LoginLimiter()
    wait_s = await limiter.admit(db, LoginAttempt(address, device))   # None: try it
    admission = await limiter.admission(db, attempt)   # the same, with the tries left

A device that has signed in before (a valid device cookie, OWASP's "device cookies" against
online guessing) is counted for itself alone, so no flood of other clients' failures keeps
the household out; any other attempt is counted by its address and with all the others.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.db import Pool
from app.queries import fetch_all

# Failed logins of a device that has never signed in: per client address, and for all of
# them together, so that guessing from many addresses is limited too. One address (5 a
# minute) cannot use up the app's ceiling. A device that has signed in before has only its
# own limit: a stolen tablet cannot guess forever, and nobody else can lock it out.
LOGIN_FAILURES_MAX = 5
LOGIN_WINDOW_S = 60
APP_LOGIN_FAILURES_MAX = 100
APP_LOGIN_WINDOW_S = 15 * 60
DEVICE_LOGIN_FAILURES_MAX = 10
DEVICE_LOGIN_WINDOW_S = 15 * 60
CLIENT_MAX_CHARS = 64  # as clients.ADDRESS_MAX_CHARS: longer is not an address


@dataclass(frozen=True)
class LoginAttempt:
    """Who tries a password: the client's address, and the device id if it has signed in
    before (a valid device cookie)."""

    address: str
    device: str | None = None


@dataclass(frozen=True)
class Count:
    """One count an attempt was taken from (a row of login_failures)."""

    scope: str
    client: str
    failures: int
    seconds_left: float


@dataclass(frozen=True)
class Admission:
    """What `admission` decided: `wait_s` None when the attempt may try its password, and
    then `tries_left`: how many more wrong ones may follow before the wait (0: this is the
    last), and `resets_in_s`, when that count starts again."""

    wait_s: int | None
    tries_left: int = 0
    resets_in_s: int = 0


class LoginLimiter:
    """Failed logins, counted in PostgreSQL so that every process shares them; past a
    limit, every attempt (even with the right password) waits until its window ends.

        wait_s = await limiter.admit(db, attempt)    # None: try the password
        await limiter.succeeded(db, attempt)         # it was right
        await limiter.failed(db)                     # it was wrong

    An attempt counts as a failure from the moment it is admitted, before its password is
    looked at, so that no number of attempts sent at once gets past a limit; a refused
    attempt and the right password give it back. A device that has signed in before is
    counted alone (its own limit); any other, by its address and with all the others.
    """

    def __init__(
        self,
        *,
        max_failures: int = LOGIN_FAILURES_MAX,
        window_s: float = LOGIN_WINDOW_S,
        app_max_failures: int = APP_LOGIN_FAILURES_MAX,
        app_window_s: float = APP_LOGIN_WINDOW_S,
        device_max_failures: int = DEVICE_LOGIN_FAILURES_MAX,
        device_window_s: float = DEVICE_LOGIN_WINDOW_S,
    ) -> None:
        self.limits = {"address": max_failures, "app": app_max_failures,
                       "device": device_max_failures}
        self.window_s = window_s
        self.app_window_s = app_window_s
        self.device_window_s = device_window_s

    async def admit(self, db: Pool, attempt: LoginAttempt) -> int | None:
        """None when this attempt may try (it now counts as a failure until it succeeds);
        else the seconds until it may try again (and it does not count)."""
        return (await self.admission(db, attempt)).wait_s

    async def admission(self, db: Pool, attempt: LoginAttempt) -> Admission:
        """`admit`'s answer, with the tries left after this one if it turns out wrong (the
        login page says so): the fewest any of its counts has left."""
        counts = await self._take(db, attempt)
        refused = [c for c in counts if c.failures > self.limits[c.scope]]
        if refused:
            await self._give_back(db, [(c.scope, c.client) for c in counts], forget=False)
            return Admission(max(math.ceil(max(c.seconds_left for c in refused)), 1))
        if not counts:  # nothing counted (cannot happen: every attempt is counted)
            return Admission(None, tries_left=self.limits["address"])
        tightest = min(counts, key=lambda c: self.limits[c.scope] - c.failures)
        return Admission(None, tries_left=max(self.limits[tightest.scope] - tightest.failures, 0),
                         resets_in_s=max(math.ceil(tightest.seconds_left), 1))

    async def succeeded(self, db: Pool, attempt: LoginAttempt) -> None:
        """The right password: the attempt was no failure, and its address's (or device's)
        earlier failures are forgotten."""
        if attempt.device:
            counted = [("device", attempt.device)]
        else:  # an admitted attempt was counted in both
            counted = [("app", ""), ("address", self._address(attempt))]
        await self._give_back(db, counted, forget=True)
        await self.prune(db)

    async def failed(self, db: Pool) -> None:
        """A wrong password: it counts already. Old counts go meanwhile."""
        await self.prune(db)

    async def prune(self, db: Pool) -> None:
        await fetch_all(db, "prune_login_failures")

    async def _take(self, db: Pool, attempt: LoginAttempt) -> list[Count]:
        if attempt.device:
            rows = await fetch_all(db, "count_failure", {
                "scope": "device", "client": attempt.device,
                "window_s": float(self.device_window_s)})
        else:
            rows = await fetch_all(db, "take_login_attempt", {
                "address": self._address(attempt), "address_window_s": float(self.window_s),
                "app_window_s": float(self.app_window_s),
                "app_max_failures": self.limits["app"]})
        return [Count(r["scope"], r["client"], r["failures"], r["seconds_left"]) for r in rows]

    @staticmethod
    async def _give_back(db: Pool, counted: list[tuple[str, str]], *, forget: bool) -> None:
        await fetch_all(db, "give_back_login_attempt", {
            "scopes": [scope for scope, _ in counted],
            "clients": [client for _, client in counted], "forget": forget})

    @staticmethod
    def _address(attempt: LoginAttempt) -> str:
        return attempt.address[:CLIENT_MAX_CHARS]
