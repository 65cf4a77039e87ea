"""A TCP proxy in front of the test PostgreSQL (its Unix socket) that cuts one connection at COMMIT.

    async with CommitCutter(database_url) as proxy:   # proxy.url: the same database through the proxy
        proxy.arm("after")    # the next COMMIT reaches the server; its answer never reaches the client
        proxy.arm("before")   # the next COMMIT is dropped with the connection, unseen by the server
        proxy.refuse_new()    # new connections are closed at once, as if the server were down

The cut is what a network failure or a server crash does to a client mid-COMMIT: the client cannot
tell whether the transaction was applied. Only the server's edge is faked here (the wire); the
store, its driver and the server are the real ones.
"""

from __future__ import annotations

from types import TracebackType
from urllib.parse import parse_qs, urlsplit

import anyio
from anyio.abc import ByteStream, SocketListener, TaskGroup


class CommitCutter:
    def __init__(self, database_url: str) -> None:
        parts = urlsplit(database_url)
        self._socket = f"{parse_qs(parts.query)['host'][0]}/.s.PGSQL.{parts.port or 5432}"
        self._database = parts.path
        self._user = parts.username or "postgres"
        self._armed: str | None = None
        self.cuts = 0  # connections cut so far
        self._refusing = False
        self._tg: TaskGroup | None = None
        self._listener: SocketListener | None = None

    @property
    def url(self) -> str:
        assert self._listener is not None
        port = self._listener.extra(anyio.abc.SocketAttribute.local_port)
        return f"postgresql://{self._user}@127.0.0.1:{port}{self._database}?sslmode=disable"

    def arm(self, when: str) -> None:
        assert when in ("before", "after")
        self._armed = when

    def refuse_new(self) -> None:
        """New connections are closed at once (the server looks down to the client)."""
        self._refusing = True

    async def __aenter__(self) -> CommitCutter:
        self._listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._listener.serve, self._relay)
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        assert self._tg is not None and self._listener is not None
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(et, e, tb)
        await self._listener.aclose()

    async def _relay(self, client: ByteStream) -> None:
        if self._refusing:
            await client.aclose()
            return
        server = await anyio.connect_unix(self._socket)
        cut_at_reply = anyio.Event()
        async with client, server, anyio.create_task_group() as tg:
            async def upstream() -> None:  # client -> server, watching for COMMIT
                async for chunk in client:
                    if self._armed and b"COMMIT" in chunk:
                        when, self._armed = self._armed, None
                        self.cuts += 1
                        if when == "before":
                            tg.cancel_scope.cancel()
                            return
                        cut_at_reply.set()  # the very next bytes from the server answer this COMMIT
                    await server.send(chunk)
                tg.cancel_scope.cancel()

            async def downstream() -> None:  # server -> client; the COMMIT's answer is dropped
                async for chunk in server:
                    if cut_at_reply.is_set():
                        tg.cancel_scope.cancel()
                        return
                    await client.send(chunk)
                tg.cancel_scope.cancel()

            tg.start_soon(upstream)
            tg.start_soon(downstream)
