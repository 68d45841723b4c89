"""How one setting's text becomes its value: each parser takes the variable's name and
its text, and answers the value or raises ConfigError naming the variable.

    read("QUEUE_MAX", whole(minimum=1, maximum=10_000), 8)      # in load_settings()
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from app.dsn import connect_options

N = TypeVar("N", int, float)


class ConfigError(Exception):
    """A configuration value is missing or wrong; the message names the variable."""


def text(name: str, raw: str) -> str:
    return raw


def path(name: str, raw: str) -> Path:
    return Path(raw).expanduser()


def host_names(name: str, raw: str) -> tuple[str, ...]:
    names = tuple(item.strip().lower().rstrip(".") for item in raw.split(",") if item.strip())
    for host in names:
        if not all(c.isalnum() or c in "-." for c in host) or host.startswith((".", "-")):
            raise ConfigError(f"{name} must be host names separated by commas, got {host!r}")
    return names


def choice(options: tuple[str, ...]) -> Callable[[str, str], str]:
    def parse(name: str, raw: str) -> str:
        if raw.lower() not in options:
            raise ConfigError(f"{name} must be one of {', '.join(options)}, got {raw!r}")
        return raw.lower()

    return parse


def number(*, minimum: float, maximum: float) -> Callable[[str, str], float]:
    return _in_range(float, "a number", minimum, maximum, spec="g")


def whole(*, minimum: int, maximum: int) -> Callable[[str, str], int]:
    return _in_range(int, "a whole number", minimum, maximum, spec="")


def _in_range(convert: Callable[[str], N], kind: str, minimum: N, maximum: N, *,
              spec: str) -> Callable[[str, str], N]:
    def parse(name: str, raw: str) -> N:
        try:
            value = convert(raw)
        except ValueError:
            raise ConfigError(f"{name} must be {kind}, got {raw!r}") from None
        if not minimum <= value <= maximum:  # also rejects nan
            raise ConfigError(f"{name} must be between {minimum:{spec}} and "
                              f"{maximum:{spec}}, got {raw!r}")
        return value

    return parse


def flag(name: str, raw: str) -> bool:
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name} must be 1 or 0, got {raw!r}")


def on_off(name: str, raw: str) -> bool:
    if raw.lower() not in ("on", "off"):
        raise ConfigError(f"{name} must be on or off, got {raw!r}")
    return raw.lower() == "on"


def timezone(name: str, raw: str) -> str:
    try:
        zoneinfo.ZoneInfo(raw.lstrip(":"))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ConfigError(
            f"{name} must be a time zone name such as Europe/Paris, got {raw!r}"
        ) from None
    return raw.lstrip(":")


def http_url(name: str, raw: str) -> str:
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"{name} must be an http:// or https:// URL, got {raw!r}")
    return raw


def database_url(name: str, raw: str) -> str:
    """Accept PaaS-style URLs as given (postgres:// becomes postgresql://), each option one
    the driver knows (app/dsn.py), read here so that a wrong one stops start-up."""
    parts = urlsplit(raw)
    if parts.scheme not in ("postgres", "postgresql") or not (parts.netloc or parts.query):
        raise ConfigError(f"{name} must be a postgres:// or postgresql:// URL")
    try:
        parts.port  # noqa: B018 -- raises ValueError on a bad port
    except ValueError:
        raise ConfigError(f"{name} has an invalid port") from None
    url = urlunsplit(("postgresql", parts.netloc, parts.path, parts.query, ""))
    try:
        connect_options(without_pgbouncer_flag(url) or url)  # the flag is the app's own
    except ValueError as error:
        raise ConfigError(f"{name} {error}") from None
    return url


def pgbouncer_flag(url: str | None) -> bool:
    """`?pgbouncer=true` on DATABASE_URL, as some platforms and ORMs spell it."""
    if url is None:
        return False
    return any(key == "pgbouncer" and value.lower() in ("1", "true", "yes", "on")
               for key, value in parse_qsl(urlsplit(url).query))


def without_pgbouncer_flag(url: str | None) -> str | None:
    """The URL minus `pgbouncer=`, which the driver would send on as a server setting."""
    if url is None:
        return None
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if k != "pgbouncer"]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))
