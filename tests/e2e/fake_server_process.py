"""The fake Anthropic server in a process of its own, scripted from the test's.

The journey tests (test_journeys.py) run the installed `cairn` as a separate program,
so the server it talks to is a separate program too, as the real API is: nothing in
the test's process can reach into either. The test scripts the server through a pipe:
`RemoteFakeServer.call("add_reply", "text", chunk_delay=0.2)` runs that method of the
`FakeAnthropicServer` in the server's process and sends back what it returned.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

from app.core.catalog import ModelInfo
from tests.fakes.anthropic_server import FakeAnthropicServer

# How long the test waits for the server to start or answer before calling it broken.
_ANSWER_SECONDS = 30.0


def _serve(commands: Connection, port: int, models: Sequence[ModelInfo] | None) -> None:
    """The server process: start, say where, then run each call the test sends."""
    with FakeAnthropicServer(port=port, models=models) as server:
        commands.send(server.base_url)
        while True:
            try:
                message = commands.recv()
            except EOFError:  # the test is gone
                return
            if message == "stop":
                commands.send(None)
                return
            name, args, kwargs = message
            try:
                commands.send(("ok", getattr(server, name)(*args, **kwargs)))
            except Exception as error:
                commands.send(("error", repr(error)))


class RemoteFakeServer:
    """A `FakeAnthropicServer` running in a child process, on 127.0.0.1.

    Attributes:
        base_url: where the app should send its requests (ANTHROPIC_BASE_URL).
    """

    def __init__(self, *, port: int = 0, models: Sequence[ModelInfo] | None = None) -> None:
        context = multiprocessing.get_context("spawn")
        self._commands, child_end = context.Pipe()
        self._process = context.Process(
            target=_serve, args=(child_end, port, models), name="fake-anthropic", daemon=True
        )
        self._process.start()
        child_end.close()
        if not self._commands.poll(_ANSWER_SECONDS):
            self._process.kill()
            raise RuntimeError("the fake server process did not start")
        self.base_url: str = self._commands.recv()

    @property
    def port(self) -> int:
        return int(self.base_url.rsplit(":", 1)[1])

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Run `FakeAnthropicServer.<name>(*args, **kwargs)` in the server's process."""
        self._commands.send((name, args, kwargs))
        if not self._commands.poll(_ANSWER_SECONDS):
            raise RuntimeError(f"the fake server did not answer {name}")
        status, value = self._commands.recv()
        if status == "error":
            raise RuntimeError(f"the fake server's {name} failed: {value}")
        return value

    def stop(self) -> None:
        """Stop serving (the port is then closed: the app finds nobody there)."""
        if not self._process.is_alive():
            return
        try:
            self._commands.send("stop")
            self._commands.poll(_ANSWER_SECONDS)
        except (BrokenPipeError, EOFError, OSError):
            pass
        self._process.join(_ANSWER_SECONDS)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._commands.close()
