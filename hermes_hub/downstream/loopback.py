"""The loopback redirect ``hermes-hub login`` listens on (RFC 8252 §7.3): 127.0.0.1, a free port.

    async with Loopback("github") as callback:
        callback.expect(state)               # from the authorization URL the browser is sent to
        result = await callback.wait(300)    # the code (or the authorization server's refusal)

Only a GET of ``/callback`` carrying the expected ``state`` is taken; anything else is answered and
ignored. Requests are read bounded in size and time. Nothing here logs the code.
"""

from __future__ import annotations

import html
import math
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

import anyio
from anyio.abc import SocketStream, TaskGroup
from mcp.shared.auth import AuthorizationCodeResult

from hermes_hub.infra.errors import HubError

MAX_HEAD = 16 * 1024  # bytes of a request head read before giving up on it
READ_SECONDS = 10.0  # a browser sends its request at once
PATH = "/callback"


class SignInRefused(HubError):
    """The authorization server sent the person back with an error (they denied, or it refused)."""


class Loopback:
    def __init__(self, server: str) -> None:
        self.server = server
        self.port = 0
        self._state: str | None = None
        self._result: AuthorizationCodeResult | SignInRefused | None = None
        self._arrived = anyio.Event()
        self._tg: TaskGroup | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{PATH}"

    def expect(self, state: str | None) -> None:
        self._state = state

    async def __aenter__(self) -> Loopback:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(listener.serve, self._handle)
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)

    async def wait(self, timeout: float) -> AuthorizationCodeResult:
        with anyio.move_on_after(timeout if timeout > 0 else math.inf):
            await self._arrived.wait()
        if self._result is None:
            raise HubError(f"no sign-in came back to {self.redirect_uri} within {timeout:g}s: open the URL printed "
                           f"above in a browser on this machine and sign in, then run `hermes-hub login "
                           f"{self.server}` again (--timeout SECONDS waits longer)")
        if isinstance(self._result, SignInRefused):
            raise self._result
        return self._result

    async def _handle(self, stream: SocketStream) -> None:
        async with stream:
            head = b""
            with anyio.move_on_after(READ_SECONDS):
                while b"\r\n\r\n" not in head and len(head) < MAX_HEAD:
                    try:
                        head += await stream.receive(4096)
                    except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                        break
            status, page = self._answer(head)
            body = (f"<!doctype html><meta charset=utf-8><title>hermes-hub</title>"
                    f"<p>{html.escape(page)}</p>").encode()
            try:
                await stream.send(f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                                  f"Content-Length: {len(body)}\r\nConnection: close\r\n"
                                  f"Cache-Control: no-store\r\n\r\n".encode() + body)
            except (anyio.BrokenResourceError, OSError):
                pass

    def _answer(self, head: bytes) -> tuple[str, str]:
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split(" ")
        if len(parts) != 3 or parts[0] != "GET":
            return "400 Bad Request", "not a sign-in"
        url = urlsplit(parts[1])
        if url.path != PATH:
            return "404 Not Found", "not a sign-in"
        query = {k: v[0] for k, v in parse_qs(url.query, max_num_fields=20).items()}
        if self._state is None or query.get("state") != self._state:
            return "400 Bad Request", ("This sign-in does not belong to the login now waiting (its state differs); "
                                       f"run `hermes-hub login {self.server}` again.")
        if self._result is not None:
            return "409 Conflict", "This sign-in was already received."
        if "error" in query:
            said = " ".join(query.get("error_description", "").split())[:200]
            self._result = SignInRefused(
                f"the authorization server of '{self.server}' refused the sign-in: {query['error'][:60]}"
                + (f" ({said})" if said else "") + f"; run `hermes-hub login {self.server}` to try again")
            self._arrived.set()
            return "200 OK", "The sign-in was refused; see the terminal."
        if not query.get("code"):
            return "400 Bad Request", "The authorization server sent no code."
        self._result = AuthorizationCodeResult(code=query["code"], state=query["state"], iss=query.get("iss"))
        self._arrived.set()
        return "200 OK", f"hermes-hub is signed in to {self.server}. You can close this tab."
