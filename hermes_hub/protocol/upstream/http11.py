"""HTTP/1.1 for ``hermes-hub serve``: uvicorn's httptools protocol with a bounded request head.

httptools keeps reading a request line and headers of any size (a 50 MB header was read whole, for
13-29 s, before the 401), so the head is counted here, before the parser sees it: past ``MAX_HEAD``
bytes the client gets 431 and the connection closes. Nothing else about the protocol changes.

    uvicorn.run(app, http=BoundedHead)
"""

from __future__ import annotations

import json
import logging

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

MAX_HEAD = 32 * 1024  # request line and headers together; browsers and hosts send a few KB
LINGER_SECONDS = 2.0  # after the 431, what the client still sends is read and dropped this long at most
LINGER_BYTES = 4 * 1024 * 1024  # ... or until this much, so that the client can read the answer
log = logging.getLogger("hermes_hub.http")


class BoundedHead(HttpToolsProtocol):
    _in_head = True  # reading a request line and headers (a new connection starts there)
    _head_bytes = 0
    _dropped: int | None = None  # bytes dropped since the 431, None before one

    def data_received(self, data: bytes) -> None:
        if self._dropped is not None:
            self._dropped += len(data)
            if self._dropped > LINGER_BYTES:
                self.transport.close()
            return
        if not self._in_head:
            super().data_received(data)
            return
        room = MAX_HEAD - self._head_bytes
        self._head_bytes += len(data)
        if self._head_bytes <= MAX_HEAD:
            super().data_received(data)
            return
        # Past the limit: the head may still end inside what is allowed, with the body after it.
        super().data_received(data[:room])
        if self._in_head and not self.transport.is_closing():
            self._too_large()
        elif not self.transport.is_closing():
            super().data_received(data[room:])

    def on_headers_complete(self) -> None:
        self._in_head = False
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._in_head, self._head_bytes = True, 0  # a kept-alive connection's next request starts its head
        super().on_message_complete()

    def _too_large(self) -> None:
        body = json.dumps({"error": "request_header_fields_too_large", "error_description":
                           f"the request line and headers exceed {MAX_HEAD // 1024} KiB; send shorter headers"}).encode()
        client = self.client[0] if self.client else "unknown"
        log.warning("refused a request from %s: its head exceeds %d KiB", client, MAX_HEAD // 1024)
        self.transport.write(b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\n"
                             b"content-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)
        # Closing at once, with the client's bytes unread, would reset the connection and lose the answer:
        # end the sending side, drop what still arrives for a moment, then close.
        self._dropped = 0
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_SECONDS, self.transport.close)
