"""The Qt binding must not leak references to None (PySide6 6.12.0 did, and Python 3.11
aborted with "none_dealloc" after a few thousand widget calls)."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot


def test_calls_returning_nothing_keep_none_alive(qtbot: QtBot) -> None:
    widget = QWidget()
    qtbot.addWidget(widget)
    before = sys.getrefcount(None)
    for _ in range(2_000):
        widget.update()
        widget.setObjectName("probe")
    # Other threads may hold or drop a few references meanwhile; a leak is one per call.
    assert abs(sys.getrefcount(None) - before) < 100
