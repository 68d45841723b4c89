"""A TCP proxy that can be cut: a network partition between one app and PostgreSQL.

    with CuttableProxy(database_url) as proxy:
        proxy.url                 # the same database, through the proxy
        proxy.cut()               # every connection dropped, new ones refused
        proxy.heal()              # connections accepted again

It runs in a thread with its own event loop, so it keeps forwarding while the test's loop
waits on something else.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from tests.helpers.fake_llm import free_port


class CuttableProxy:
    def __init__(self, database_url: str) -> None:
        parts = urlsplit(database_url)
        query = parse_qsl(parts.query)
        socket_dir = next((value for key, value in query if key == "host"), None)
        # The embedded server listens on a Unix socket (`?host=/dir`), a server on TCP.
        self.target: tuple[str, int] | str = (
            f"{socket_dir}/.s.PGSQL.{parts.port or 5432}" if socket_dir
            else (parts.hostname or "127.0.0.1", parts.port or 5432))
        self.port = free_port()
        credentials = parts.netloc.rsplit("@", 1)[0] if "@" in parts.netloc else ""
        host = f"127.0.0.1:{self.port}"
        self.url = urlunsplit(parts._replace(
            netloc=f"{credentials}@{host}" if credentials else host,
            query=urlencode([(key, value) for key, value in query if key != "host"])))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    def __enter__(self) -> CuttableProxy:
        self._thread.start()
        self.heal()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cut()
        # Let the aborted transports close their sockets before the loop goes.
        asyncio.run_coroutine_threadsafe(asyncio.sleep(0.1), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()

    def cut(self) -> None:
        """Drop every connection through the proxy and refuse new ones."""
        asyncio.run_coroutine_threadsafe(self._cut(), self._loop).result(5)

    def heal(self) -> None:
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(5)

    async def _listen(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_server(self._forward, "127.0.0.1", self.port)

    async def _cut(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()
        if self._server is not None:
            await asyncio.wait_for(self._server.wait_closed(), 3)
            self._server = None

    async def _forward(self, client_reader: asyncio.StreamReader,
                       client_writer: asyncio.StreamWriter) -> None:
        try:
            if isinstance(self.target, str):
                server_reader, server_writer = await asyncio.open_unix_connection(self.target)
            else:
                server_reader, server_writer = await asyncio.open_connection(*self.target)
        except OSError:
            client_writer.transport.abort()
            return
        self._writers |= {client_writer, server_writer}

        async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, asyncio.IncompleteReadError):
                while data := await reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            writer.transport.abort()

        await asyncio.gather(pipe(client_reader, server_writer),
                             pipe(server_reader, client_writer))
        self._writers -= {client_writer, server_writer}
