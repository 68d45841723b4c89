"""A PostgreSQL URL's options, read once: what every connection to it is opened with.

    target = connect_options("postgres://u:p@h/app?sslmode=require&application_name=bedtime")
    await asyncpg.connect(**target.asyncpg_kwargs())   # a pool takes the same (app/db.py)

Each option libpq or asyncpg knows reaches the driver the way it would read it from the
URL itself: `sslmode`, `sslrootcert`, `host` and the other driver options stay in the
URL asyncpg is given (`dsn`), `application_name` and `options` become the session's
settings from its first statement, `connect_timeout` bounds each new connection. Any other
option stops start-up (a typo would otherwise be sent to the server as a setting, and
refused there at each connection); a server setting goes in `options=-c name=value`, as
with libpq.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# The options asyncpg reads from a URL itself, in libpq's spelling (asyncpg's
# connect_utils; `database` is its own synonym of `dbname`).
DRIVER_OPTIONS = frozenset({
    "host", "port", "dbname", "database", "user", "password", "passfile", "service",
    "sslmode", "sslcert", "sslkey", "sslrootcert", "sslcrl", "sslpassword", "sslnegotiation",
    "ssl_min_protocol_version", "ssl_max_protocol_version", "target_session_attrs",
    "krbsrvname", "gsslib",
})
# libpq's options that set the session up: sent at its start, as asyncpg's server_settings.
SERVER_OPTIONS = frozenset({"application_name", "options"})
# The rest of what is known: libpq's connect_timeout and fallback_application_name, and
# `ssl`, the spelling of sslmode that `databases` taught (true, false or a mode).
OTHER_OPTIONS = frozenset({"connect_timeout", "fallback_application_name", "ssl"})
KNOWN_OPTIONS = DRIVER_OPTIONS | SERVER_OPTIONS | OTHER_OPTIONS
SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
# What a known option of somebody else's is for here instead.
INSTEAD = {
    "min_size": "the pool's size is DATABASE_POOL_MAX",
    "max_size": "the pool's size is DATABASE_POOL_MAX",
}


@dataclass(frozen=True)
class ConnectOptions:
    """Where to connect and how, as asyncpg takes it: a pool's connections and a lone one
    are opened with the same `asyncpg_kwargs()`."""

    address: str  # the URL without its options: scheme, user, password, host, port, database
    dsn: str  # the URL with the options asyncpg reads itself
    server_settings: Mapping[str, str] = field(default_factory=dict)
    connect_timeout_s: float | None = None  # None: the caller's own limit
    ssl: bool | str | None = None  # `ssl=`, as asyncpg's argument; None: sslmode, if any

    def asyncpg_kwargs(self) -> dict[str, object]:
        """For asyncpg.connect or asyncpg.create_pool (which `databases` forwards to)."""
        kwargs: dict[str, object] = {"dsn": self.dsn}
        if self.server_settings:
            kwargs["server_settings"] = dict(self.server_settings)
        if self.connect_timeout_s is not None:
            kwargs["timeout"] = self.connect_timeout_s
        if self.ssl is not None:
            kwargs["ssl"] = self.ssl
        return kwargs


def connect_options(url: str) -> ConnectOptions:
    """Read a postgres:// or postgresql:// URL's options; ValueError, in one line that
    completes "DATABASE_URL ...", for one the driver does not know or a bad value."""
    parts = urlsplit(url)
    options = dict(parse_qsl(parts.query))
    unknown = sorted(set(options) - KNOWN_OPTIONS)
    if unknown:
        name = unknown[0]
        hint = INSTEAD.get(name, "a server setting goes in options=-c%20name%3Dvalue")
        raise ValueError(f"has an option the database driver does not know: {name} ({hint}; "
                         f"known: {', '.join(sorted(KNOWN_OPTIONS))})")
    if options.get("sslmode", "prefer") not in SSL_MODES:
        raise ValueError(f"has sslmode={options['sslmode']!r}: not one of {', '.join(SSL_MODES)}")
    if options.get("ssl", "true").lower() not in (*SSL_MODES, "true", "false"):
        raise ValueError(f"has ssl={options['ssl']!r}: not true, false or an sslmode")
    if "ssl" in options and "sslmode" in options:
        raise ValueError("has both ssl and sslmode: give sslmode alone")

    server_settings = {name: options[name] for name in sorted(SERVER_OPTIONS) if name in options}
    if "fallback_application_name" in options:  # libpq's: the name unless one is given
        server_settings.setdefault("application_name", options["fallback_application_name"])
    driver = [(name, value) for name, value in options.items() if name in DRIVER_OPTIONS]
    scheme = "postgresql"  # asyncpg's and databases' spelling of postgres://
    return ConnectOptions(
        address=urlunsplit((scheme, parts.netloc, parts.path, "", "")),
        dsn=urlunsplit((scheme, parts.netloc, parts.path, urlencode(driver), "")),
        server_settings=server_settings,
        connect_timeout_s=_seconds(options["connect_timeout"])
        if "connect_timeout" in options else None,
        ssl=_ssl(options["ssl"]) if "ssl" in options else None,
    )


def _seconds(raw: str) -> float:
    """connect_timeout: libpq's whole seconds. Its 0 (wait for ever) is refused: a database
    that does not answer must give a 503, not a request that hangs."""
    if not raw.isdecimal() or int(raw) < 1:
        raise ValueError(f"has connect_timeout={raw!r}: a whole number of seconds, 1 or more")
    return float(raw)


def _ssl(raw: str) -> bool | str:
    return {"true": True, "false": False}.get(raw.lower(), raw.lower())
