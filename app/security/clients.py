"""Who is asking, and by which name: the client's address behind proxies, and the host
names the app answers to without a password.

    clients = Clients(forwarded_allow_ips="*", allowed_hosts=("stories.example",))
    clients.resolve(scope)          # scope["client"], scope["scheme"] as the nearest
                                    # trusted proxy saw them
    clients.is_loopback(scope)      # on this machine, and not through any proxy
    clients.host_allowed("stories.example:443")

A proxy appends the address it saw to `X-Forwarded-For`; everything to the left of that
was written by whoever sent the request, so it proves nothing. The client is therefore
the rightmost entry no trusted proxy wrote: with `FORWARDED_ALLOW_IPS=*` (one platform
router in front), the rightmost entry; with a list, the rightmost entry not in it. This
also mends what uvicorn's own proxy handling does with `*` (it takes the leftmost entry).
"""

from __future__ import annotations

import functools
import ipaddress
from urllib.parse import urlsplit

from starlette.types import Scope

# Any of these means the request came through a proxy: never a loopback client.
PROXY_HEADERS = (b"forwarded", b"x-forwarded-for", b"x-real-ip", b"via")
SCHEMES = ("http", "https")
ADDRESS_MAX_CHARS = 64  # longer than any IP address with a port: not an address


# Addresses and host names repeat from request to request: each verdict is worked out once
# (parsing an address costs more than the rest of the checks put together).
VERDICTS_CACHED = 1024


@functools.lru_cache(maxsize=VERDICTS_CACHED)
def is_loopback_address(address: str | None) -> bool:
    try:
        ip = ipaddress.ip_address(address or "")
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def host_of(entry: str) -> str:
    """The address in an `X-Forwarded-For` entry: `1.2.3.4`, `1.2.3.4:5678`, `[::1]:80`."""
    entry = entry.strip()[:ADDRESS_MAX_CHARS]
    if entry.startswith("["):
        return entry[1:].partition("]")[0]
    if entry.count(":") == 1:
        return entry.partition(":")[0]
    return entry


class TrustedProxies:
    """FORWARDED_ALLOW_IPS: `*`, or addresses and networks (`10.0.0.0/8`), comma-separated."""

    def __init__(self, spec: str) -> None:
        items = [item.strip() for item in spec.split(",") if item.strip()]
        self.everyone = "*" in items
        self._networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        self._literals: set[str] = set()
        self.trust = functools.lru_cache(maxsize=VERDICTS_CACHED)(self._trust)
        for item in items:
            try:
                self._networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                self._literals.add(item)  # e.g. a unix socket's "address"

    def _trust(self, address: str | None) -> bool:
        if self.everyone:
            return True
        if not address:
            return False
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return address in self._literals
        return any(ip in network for network in self._networks)


class Clients:
    def __init__(self, *, forwarded_allow_ips: str, allowed_hosts: tuple[str, ...] = ()) -> None:
        self.proxies = TrustedProxies(forwarded_allow_ips)
        self.allowed_hosts = frozenset(name.lower().rstrip(".") for name in allowed_hosts)
        self.host_allowed = functools.lru_cache(maxsize=VERDICTS_CACHED)(self._host_allowed)

    def resolve(self, scope: Scope) -> None:
        """Rewrite the scope's client and scheme from a trusted proxy's headers."""
        peer = scope.get("client")
        if not self.proxies.trust(peer[0] if peer else None):
            return
        entries: list[str] = []
        proto = None
        for name, value in scope["headers"]:
            if name == b"x-forwarded-for":
                entries += [e for e in value.decode("latin-1").split(",") if e.strip()]
            elif name == b"x-forwarded-proto":
                proto = value.decode("latin-1").strip().lower()
        if entries:
            hosts = [host_of(entry) for entry in entries]
            if self.proxies.everyone:
                client = hosts[-1]
            else:  # every entry trusted: the client was a trusted proxy itself
                client = next((h for h in reversed(hosts) if not self.proxies.trust(h)), hosts[0])
            scope["client"] = (client, 0)
        if proto in SCHEMES:
            scope["scheme"] = proto

    @staticmethod
    def came_through_proxy(scope: Scope) -> bool:
        return any(name in PROXY_HEADERS for name, _ in scope["headers"])

    def is_loopback(self, scope: Scope) -> bool:
        client = scope.get("client")
        return (
            is_loopback_address(client[0] if client else None)
            and not self.came_through_proxy(scope)
        )

    def _host_allowed(self, host: str) -> bool:
        """An IP, `localhost` (or `*.localhost`), a dotless name, or one in ALLOWED_HOSTS.

        DNS rebinding points a stranger's domain (it has a dot) at this app's address, so a
        page there could use the app through the household's own browser; a dotted name
        the household did not list is refused.
        """
        try:
            name = (urlsplit(f"//{host}").hostname or "").rstrip(".")
        except ValueError:
            return False
        try:
            ipaddress.ip_address(name)
            return True
        except ValueError:
            pass
        return "." not in name or name.endswith(".localhost") or name in self.allowed_hosts
