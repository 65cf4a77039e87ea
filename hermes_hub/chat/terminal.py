"""The chat's terminal: lines typed (or piped) in, text out, and yes/no questions.

    console = Console()
    console.say("hello")
    line = await console.line("> ")       # None at end of input (Ctrl-D, or the pipe closed)

Input is read by a daemon thread from file descriptor 0 with ``os.read``, not ``sys.stdin``: a thread
blocked in ``sys.stdin.readline`` holds the buffer's lock, which can abort the interpreter at exit, and a
non-daemon thread would keep the process alive until the next Enter. Lines queue up in order, so a piped
script can hold both the tasks and the answers to the confirmations they cause.
"""

from __future__ import annotations

import codecs
import math
import os
import sys
import threading

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream

YES = ("y", "yes")
NO = ("n", "no")


class Console:
    def __init__(self, out=None, fd: int = 0) -> None:  # type: ignore[no-untyped-def]
        self.out = out or sys.stdout
        self.fd = fd
        self.interactive = os.isatty(fd)
        self._lines: MemoryObjectReceiveStream[str | None] | None = None

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)  # flushed: a pipe reader sees each line as it happens

    def prompt(self, text: str) -> None:
        """A prompt without a newline, shown only to a person at a terminal."""
        if self.interactive:
            self.out.write(text)
            self.out.flush()

    async def line(self, prompt: str = "") -> str | None:
        """The next line without its newline; None at end of input."""
        if self._lines is None:
            self._lines = self._start()
        self.prompt(prompt)
        try:
            return await self._lines.receive()
        except anyio.EndOfStream:
            return None

    async def yes_no(self, question: str) -> bool | None:
        """Ask until the answer is yes or no; None at end of input."""
        self.say(question + " [y/n]")
        while True:
            answer = await self.line("? ")
            if answer is None:
                return None
            if answer.strip().lower() in YES:
                return True
            if answer.strip().lower() in NO:
                return False
            self.say("please answer y or n")

    def _start(self) -> MemoryObjectReceiveStream[str | None]:
        send, receive = anyio.create_memory_object_stream[str | None](math.inf)
        token = anyio.lowlevel.current_token()

        def deliver(item: str | None) -> None:
            if item is None:
                anyio.from_thread.run_sync(send.close, token=token)
            else:
                anyio.from_thread.run_sync(send.send_nowait, item, token=token)

        def read() -> None:
            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
            pending = ""
            try:
                while chunk := os.read(self.fd, 65536):
                    pending += decoder.decode(chunk)
                    *complete, pending = pending.split("\n")
                    for text in complete:
                        deliver(text.removesuffix("\r"))
                if tail := pending + decoder.decode(b"", final=True):
                    deliver(tail)
                deliver(None)
            except (OSError, RuntimeError):  # input gone, or the event loop finished first: nobody is listening
                pass

        threading.Thread(target=read, name="chat-input", daemon=True).start()
        return receive
