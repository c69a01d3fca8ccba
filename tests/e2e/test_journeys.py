"""Journeys in a real window: the installed `cairn` on an X screen (Xvfb), driven as a
person does — keys, clicks, the clipboard — against the fake Anthropic API running in
a process of its own (DESIGN §10).

Each journey checks what its person would see or could find (window titles, the
focus, files on disk, the log) and leaves its screenshots in build/journeys/<journey>/
(README, "Journey tests"). The fake server's own replies are used wherever the words
do not matter, so the journeys hold however strict it becomes.
"""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import StartCairn
from tests.e2e.desktop import Cairn, Desktop, Journey, files_under, wait_until
from tests.e2e.fake_server_process import RemoteFakeServer

KEY = "sk-ant-api03-journey-key-0123456789abcdef"
WELCOME = "Connect Cairn to Claude — Cairn"


def send(app: Cairn, text: str) -> None:
    """Type `text` into the composer (it has the keyboard once the window has) and send."""
    app.focus()
    app.desktop.type(text)
    app.desktop.key("Return")


def paste_and_send(app: Cairn, text: str) -> None:
    """Copy `text` from elsewhere, paste it into the composer, and send."""
    app.desktop.copy(text)
    app.focus()
    app.desktop.key("ctrl+v", "Return")


def replies(app: Cairn, status: str = "complete") -> list[str]:
    return [
        content
        for role, content, state in app.messages()
        if role == "assistant" and state == status
    ]


def wait_for_replies(app: Cairn, count: int) -> list[str]:
    done: list[str] = wait_until(
        lambda: (found := replies(app)) and len(found) >= count and found,
        f"{count} complete replies on disk",
    )
    return done


# --- first start -----------------------------------------------------------------------


def test_first_start_with_a_key(
    desktop: Desktop, journey: Journey, start_cairn: StartCairn, tmp_path: Path
) -> None:
    app = start_cairn()  # no key anywhere yet
    welcome = desktop.wait_for_window(WELCOME)
    journey.shot("welcome")

    # The key, copied from the Anthropic Console, pasted into the field, checked and saved.
    desktop.copy(KEY)
    # Into the key field (just above the dialog's buttons), then paste.
    desktop.click(welcome.x + welcome.width * 2 // 5, welcome.y + welcome.height - 64)
    desktop.key("ctrl+v")
    journey.shot("key-pasted")
    desktop.key("Return")
    desktop.wait_until_closed(WELCOME)
    app.wait_for_log("API key saved")

    send(app, "Hello Claude, this is my first message")
    app.wait_for_title("Hello Claude, this is my first message")
    wait_for_replies(app, 1)
    journey.shot("first-reply")
    app.quit()

    # The key was used, yet it is in no file Cairn wrote.
    for path in files_under(app.home):
        assert KEY.encode() not in path.read_bytes(), f"the API key leaked into {path}"


# --- chat and stop ---------------------------------------------------------------------


def test_chat_and_stop(
    desktop: Desktop, journey: Journey, start_cairn: StartCairn, fake_api: RemoteFakeServer
) -> None:
    long_reply = " ".join(f"word{index}" for index in range(200))
    fake_api.call("add_reply", long_reply, chunk_delay=0.25)
    app = start_cairn(api_key=KEY)

    send(app, "Tell me a very long story")
    # The reply is saved as it streams (at least every second): some of it is on disk.
    wait_until(lambda: replies(app, "streaming") != [""] and replies(app, "streaming"), "streaming")
    journey.shot("streaming")
    desktop.key("Escape")
    (stopped,) = wait_until(lambda: replies(app, "stopped"), "the stopped reply on disk")
    journey.shot("stopped")
    assert stopped and long_reply.startswith(stopped.rstrip()) and len(stopped) < len(long_reply)

    # The conversation goes on.
    send(app, "Thanks, that is enough")
    wait_for_replies(app, 1)
    journey.shot("next-reply")
    app.quit()
