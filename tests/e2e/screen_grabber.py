"""Screenshots of the whole X screen on request: one PNG path a line on stdin, "ok" back.

Run by tests/e2e/desktop.py on the journeys' screen, once for all of them (a Qt start
each time would cost more than the picture). Qt reads the root window as X has it.
"""

from __future__ import annotations

import sys

from PySide6.QtGui import QGuiApplication


def main() -> int:
    app = QGuiApplication(sys.argv[:1])
    for line in sys.stdin:
        path = line.strip()
        if not path:
            continue
        app.processEvents()
        picture = QGuiApplication.primaryScreen().grabWindow(0)
        print("ok" if picture.save(path) else f"could not save {path}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
