"""The reply job's own bookkeeping: what it learns from each reply's usage, kept on disk."""

from __future__ import annotations

from collections.abc import Callable

from app.store.calibration_file import CalibrationFile
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.unit.chat.conftest import Chat

StartChat = Callable[..., Chat]

# Long enough for a request to teach the calibration (app.core.calibration.MIN_SAMPLE_TOKENS).
QUESTION = "Tell me about the stone walls of the north field and who built them. " * 20


def test_what_replies_learned_is_on_disk_once_the_service_shut_down(
    start_chat: StartChat, fake_server: FakeAnthropicServer
) -> None:
    """The first reply's calibration is written at once; the hairs' moves of the next ones
    may wait (app.store.calibration_file), and quitting writes them."""
    chat = start_chat()
    file = CalibrationFile.in_data_dir(chat.paths)
    model = chat.service.current.state.model_id
    for turn in range(4):
        fake_server.add_reply(f"Answer {turn}.")
        chat.send(f"{turn}: {QUESTION}")
        if turn == 0:
            assert file.load().for_model(model) == chat.service.calibrations.for_model(model)
    learned = chat.service.calibrations.for_model(model)
    assert learned.samples == 4

    chat.service.shutdown()

    assert file.load().for_model(model) == learned
