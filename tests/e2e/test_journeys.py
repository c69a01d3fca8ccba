"""Journeys in a real window: the installed `cairn` on an X screen (Xvfb), driven as a
person does — keys, clicks, the clipboard — against the fake Anthropic API running in
a process of its own (DESIGN §10).

Each journey checks what its person would see or could find (window titles, the
focus, files on disk, the log) and leaves its screenshots in build/journeys/<journey>/
(README, "Journey tests"). The fake server's own replies are used wherever the words
do not matter, so the journeys hold however strict it becomes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.core.catalog import ModelInfo
from tests.e2e.conftest import StartCairn
from tests.e2e.desktop import Cairn, Desktop, Journey, files_under, wait_until
from tests.e2e.fake_server_process import RemoteFakeServer
from tests.fakes.sample_files import png

# A hang guard for a whole journey (each step has its own, desktop.STEP_SECONDS); the
# screen is an Xvfb of their own (Linux's: skipped elsewhere, tests/conftest.py).
pytestmark = [pytest.mark.timeout(240), pytest.mark.xvfb]

KEY = "sk-ant-api03-journey-key-0123456789abcdef"
WELCOME = "Connect Cairn to Claude — Cairn"
# A model whose window fills after a few long turns, so summaries come soon.
SMALL = ModelInfo(
    id="claude-small", display_name="Claude Small", max_input_tokens=4_000, max_tokens=400
)


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


# --- a long conversation: summarized, summarized on request, found again ------------


def words(label: str, count: int) -> str:
    return " ".join(f"{label}{index}" for index in range(count))


def summaries(app: Cairn, trigger: str) -> list[tuple[str, int, int]]:
    return [
        (str(row[0]), int(row[1]), int(row[2]))
        for row in app.query(
            "SELECT id, first_seq, last_seq FROM summary WHERE state = 'active' AND trigger = ?",
            (trigger,),
        )
    ]


def test_a_long_conversation_is_summarized_and_its_originals_found_in_history(
    desktop: Desktop, journey: Journey, start_cairn: StartCairn, fake_api: RemoteFakeServer
) -> None:
    fake_api.call("__setattr__", "models", [SMALL])
    app = start_cairn(api_key=KEY)
    app.main_window()

    # Long messages, pasted, until Cairn condenses the oldest by itself.
    turn = 0
    while not summaries(app, "auto"):
        assert turn < 30, "no automatic summary after 30 turns"
        fake_api.call("add_reply", f"Answer {turn}: " + words("answer", 60))
        marker = " The zebra7 password hint is here." if turn == 0 else ""
        paste_and_send(app, f"Question {turn}:{marker} " + words("detail", 60))
        wait_for_replies(app, turn + 1)
        turn += 1
    journey.shot("summarized-automatically")

    # Summarize now, checked in its preview first.
    for extra in range(turn, turn + 8):
        fake_api.call("add_reply", f"Answer {extra}: " + words("answer", 20))
        paste_and_send(app, f"Question {extra}: " + words("more", 20))
        wait_for_replies(app, extra + 1)
    app.focus()
    desktop.key("ctrl+shift+s")
    preview = re.compile(r"Check the summary.*")
    desktop.wait_for_window(preview)
    desktop.wait_for_focus(preview)
    journey.shot("summarize-now-preview")
    desktop.key("Return")  # Accept
    desktop.wait_until_closed(preview)
    wait_until(lambda: summaries(app, "manual"), "the summary asked for, on disk")
    journey.shot("summarized-on-request")

    # History: the words of an archived message find it; Enter opens it in the window.
    window = app.focus()
    desktop.key("ctrl+shift+h")
    desktop.wait_for_window("History — Cairn")
    desktop.wait_for_focus("History — Cairn")
    desktop.type("zebra7")
    journey.shot("history-search")

    def opened() -> bool:
        # The best hit (the archived message itself) is selected once listed, and Enter
        # opens it; until then Enter finds nothing to open: try again.
        desktop.key("Return")
        try:
            wait_until(lambda: desktop.focused_window_id() == window.id, "focus", timeout=1)
        except AssertionError:
            return False
        return True

    wait_until(opened, "the archived message opened in the main window")
    # History stays open over the window (this screen has no window manager to lower
    # it): close it, as a person would, to read the message: back to History with its
    # shortcut, Esc clears the search, Esc closes it.
    desktop.key("ctrl+shift+h")
    desktop.wait_for_focus("History — Cairn")
    desktop.key("Escape", "Escape")
    desktop.wait_until_closed("History — Cairn")
    journey.shot("archived-message-opened")
    app.quit()


# --- export, and import on another computer -------------------------------------------


def choose_file(desktop: Desktop, title: str, path: Path, journey: Journey | None = None) -> None:
    """In the file dialog titled `title`: type the whole path over the name, and Enter."""
    dialog = re.compile(title)
    desktop.wait_for_window(dialog)
    desktop.wait_for_focus(dialog)
    desktop.key("ctrl+a")
    desktop.type(str(path))
    if journey is not None:
        journey.shot("file-dialog")
    desktop.key("Return")
    desktop.wait_until_closed(dialog)


def test_export_and_import_on_another_computer(
    desktop: Desktop, journey: Journey, start_cairn: StartCairn, tmp_path: Path
) -> None:
    app = start_cairn(api_key=KEY, home=tmp_path / "first-computer")
    send(app, "Plan the trip to Lisbon in May")
    wait_for_replies(app, 1)
    exported = tmp_path / "moving" / "lisbon.json"
    exported.parent.mkdir()

    app.focus()
    desktop.key("alt+f", "e")  # File → Export conversation…
    choose_file(desktop, r"Export “Plan the trip to Lisbon in May”.*", exported, journey)
    wait_until(exported.exists, "the exported file")
    app.quit()
    assert "Plan the trip to Lisbon in May" in exported.read_text(encoding="utf-8")

    other = start_cairn(api_key=KEY, home=tmp_path / "second-computer")
    other.focus()
    desktop.key("alt+f", "i")  # File → Import…
    choose_file(desktop, r"Import conversations.*", exported)
    wait_until(
        lambda: [m[1] for m in other.messages()][:1] == ["Plan the trip to Lisbon in May"],
        "the imported conversation on disk",
    )
    journey.shot("imported")
    other.quit()


# --- a picture --------------------------------------------------------------------------


def test_attach_a_picture(
    desktop: Desktop, journey: Journey, start_cairn: StartCairn, fake_api: RemoteFakeServer
) -> None:
    app = start_cairn(api_key=KEY)
    # A picture copied in another program, pasted into the message.
    desktop.copy(png(64, 48), "image/png")
    app.focus()
    desktop.key("ctrl+v")
    desktop.type("What colour is this picture?")
    journey.shot("picture-attached")
    desktop.key("Return")
    wait_for_replies(app, 1)
    journey.shot("reply")

    (kind, width, height) = wait_until(
        lambda: app.query("SELECT kind, width, height FROM attachment"), "the picture on disk"
    )[0]
    assert (kind, width, height) == ("image", 64, 48)
    sent = fake_api.call("turns")[-1].body["messages"][-1]["content"]
    assert [block["type"] for block in sent if block["type"] == "image"] == ["image"]
    app.quit()


# --- offline, then back -----------------------------------------------------------------


def test_an_offline_error_and_its_retry(
    desktop: Desktop, journey: Journey, start_cairn: StartCairn, fake_api: RemoteFakeServer
) -> None:
    app = start_cairn(api_key=KEY)
    send(app, "Hello before the network goes")
    wait_for_replies(app, 1)

    port = fake_api.port
    fake_api.stop()  # the network is gone: nobody answers at that address
    send(app, "Are you still there?")
    app.wait_for_log(r"Told the user: Can't reach Claude")
    journey.shot("offline-error")

    back = RemoteFakeServer(port=port)  # the network is back
    try:
        # Tab goes in reading order: back from the message box, the paperclip, the
        # notice's ✕, then the question's Retry just above (one Retry per failure).
        desktop.key("shift+Tab", "shift+Tab", "shift+Tab", "space")
        wait_for_replies(app, 2)
        journey.shot("retried")
        app.quit()
    finally:
        back.stop()
