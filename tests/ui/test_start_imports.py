"""What the window's start imports: what painting needs, nothing heavier (issue 20).

Each check runs a fresh interpreter, as `cairn` starts, and reads `sys.modules`: a
behaviour (what is loaded), never a timing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.fakes.anthropic_server import FakeAnthropicServer

REPO = Path(__file__).resolve().parents[2]

# Loaded after the first paint or when first used, never to paint.
NOT_TO_PAINT = (
    "anthropic",  # the SDK: ~1 s of CPU and ~47 MiB (the model list, the first reply)
    "httpx2",
    "tiktoken",  # the tokenizer: loaded on a worker after the paint
    "app.core.extract",  # the extraction machinery: the first recall, a summary
    "app.core.summarizer_llm",
    "app.store.export",  # the export format's models: an export or an import
    "app.ui.history_window",  # File → History…
    "app.ui.settings_dialog",  # Settings…
    "app.ui.restore_dialog",  # Restore from backup…
    "multiprocessing",  # the summary process: started at the first summary
    # A reply's machinery, recall and the archive's searches: imported where first used,
    # and by the warm-up after the first paint (`app.chat.service.AFTER_PAINT_IMPORTS`).
    "app.chat.reply",
    "app.chat.recall",
    "app.core.recall",
    "app.core.recall_dates",
    "app.core.recall_rank",
    "app.core.search_keys",
    "app.core.search",
    "app.store.search",
    "app.store.lookups",
    "app.store.search_upkeep",
    "app.store.salvage",  # a damaged file's rows read back
    "app.store.wal_check",  # a log left beside the database (there is none at a first start)
    "app.ui.smoke",  # only when CAIRN_SMOKE_MESSAGE asks for a smoke run
)

# The chat side: imported when the controller builds the chat service, on the turn of the
# loop after the window's first paint (`ChatController.service`, `CairnSession`), never to
# paint it; each was imported before the paint until then (issue 20).
BUILT_AFTER_PAINT = (
    "app.chat.service",
    "app.chat.conversation",
    "app.chat.archive",
    "app.chat.backups",
    "app.chat.history",
    "app.chat.turns",
    "app.chat.credentials",
    "app.chat.opening",
    "app.chat.state",
    "app.chat.gauge",
    "app.chat.summaries",
    "app.chat.exports",
    "app.store.sessions",
    "app.store.summaries",
    "app.store.backup",
    "app.store.model_cache",
    "app.store.calibration_file",
    "app.ui.upgrade",  # an upgrade's walks, after the paint
    # The settings' model (pydantic validators): the window paints with what
    # app.core.paint_settings reads, the model checks the whole file when the service is built.
    "app.core.settings",
    "app.core.summarization_config",
    # Imported where first used, after the paint: dialogs, and the code blocks' colours.
    "app.ui.key_dialog",
    "app.ui.instructions_dialog",
    "app.ui.summarize_dialog",
    "app.ui.summary_preview",
    "app.ui.code_highlight",
    "pygments",
    # The records' models (messages, summaries, the model catalog): the window paints with
    # the enums and words of app.core.message_kinds, summary_kinds and token_words; pydantic
    # itself was ~22 % of the start's instructions (bench_startup --callgrind).
    "pydantic",
    "app.core.models",
    "app.core.summary",
    "app.core.catalog",
    "app.core.context",
)


def _in_a_fresh_interpreter(code: str, env: dict[str, str] | None = None) -> object:
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        encoding="utf-8",
        env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin", **(env or {})},
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


# Cairn as `cairn` starts it, with a key: its start-up's work done (the tokenizer loaded,
# no job running), then the first letter of a message typed, and its work done.
_START_THEN_TYPE = """
import json, sys
import keyring
from PySide6.QtCore import QEventLoop, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from app.core.paths import AppPaths
from app.secrets.keystore import SERVICE_NAME, USERNAME
from app.ui.app import open_cairn
from tests.fakes.keyring_backend import MemoryKeyring

backend = MemoryKeyring()
backend.passwords[(SERVICE_NAME, USERNAME)] = "sk-ant-api03-" + "x" * 40
keyring.set_keyring(backend)
application = QApplication(["cairn"])
session = open_cairn(AppPaths.from_environment())
service = session.controller.service

def until(done):
    while not done():
        application.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)

session.show()
until(lambda: session.started and service.counter.ready and service.runner.running == 0)
loaded = {"after start": "anthropic" in sys.modules}
QTest.keyClicks(session.window.composer.editor, "H")
until(lambda: service.model_wait.settled and service.runner.running == 0)
loaded["after typing"] = "anthropic" in sys.modules
session.window.close()
session.close()
print(json.dumps(loaded))
"""


def test_the_sdk_loads_when_the_user_starts_typing_not_at_start(
    tmp_path: Path, fake_server: FakeAnthropicServer
) -> None:
    # Someone who opens Cairn to read never loads the SDK (~45 MiB); the model list,
    # which loads it, is asked for with the first letter of a message (issue 20).
    loaded = _in_a_fresh_interpreter(
        _START_THEN_TYPE,
        env={"CAIRN_HOME": str(tmp_path / "home"), "ANTHROPIC_BASE_URL": fake_server.base_url},
    )

    assert isinstance(loaded, dict)
    assert loaded["after start"] is False
    assert loaded["after typing"] is True
    assert fake_server.requests_to("/v1/models", "GET")  # asked for once typing began


def test_what_paints_the_window_imports_nothing_it_does_not_need() -> None:
    loaded = _in_a_fresh_interpreter(
        "import json, sys\n"
        "import app.__main__, app.ui.app\n"
        f"not_to_paint = {NOT_TO_PAINT + BUILT_AFTER_PAINT!r}\n"
        "print(json.dumps(sorted(m for m in not_to_paint if m in sys.modules)))\n"
    )

    assert loaded == []


_START_THEN_WARM_UP = """
import json, sys
from PySide6.QtCore import QEventLoop
from PySide6.QtWidgets import QApplication
from app.chat.service import AFTER_PAINT_IMPORTS
from app.core.paths import AppPaths
from app.ui.app import open_cairn

application = QApplication(["cairn"])
session = open_cairn(AppPaths.from_environment())
not_to_paint = %r
loaded = {"opened": sorted(m for m in not_to_paint if m in sys.modules)}
session.show()
while not session.started:
    application.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)
loaded["painted"] = sorted(m for m in not_to_paint if m in sys.modules)
while not all(m in sys.modules for m in AFTER_PAINT_IMPORTS):
    application.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)
loaded["warmed up"] = list(AFTER_PAINT_IMPORTS)
session.window.close()
session.close()
print(json.dumps(loaded))
"""


def test_what_is_deferred_loads_after_the_first_paint_not_before(tmp_path: Path) -> None:
    # Opening Cairn and its first paint (the window filled) load none of it; the warm-up
    # after the paint imports what a send, a search or a summary needs (issue 20).
    loaded = _in_a_fresh_interpreter(
        _START_THEN_WARM_UP % (NOT_TO_PAINT,), env={"CAIRN_HOME": str(tmp_path / "home")}
    )

    assert isinstance(loaded, dict)
    assert loaded["opened"] == []
    assert loaded["painted"] == []
    assert set(loaded["warmed up"]) <= set(NOT_TO_PAINT)


def test_cairn_turns_pydantic_plugins_off_unless_the_user_set_them(tmp_path: Path) -> None:
    # Cairn has no pydantic plugins: looking for them (every installed package's entry
    # points, when the first model is built before the paint) is skipped (issue 20).
    switch = _in_a_fresh_interpreter(
        "import json, os\n"
        "import app.ui.app as ui_app\n"
        "from app.__main__ import main\n"
        "seen = []\n"
        "ui_app.run = lambda argv: seen.append(os.environ.get('PYDANTIC_DISABLE_PLUGINS')) or 0\n"
        "main([])\n"
        "os.environ['PYDANTIC_DISABLE_PLUGINS'] = 'some_plugin'\n"
        "main([])\n"
        "print(json.dumps(seen))\n",
        env={"CAIRN_HOME": str(tmp_path / "home")},
    )

    assert switch == ["__all__", "some_plugin"]


def test_imports_after_qt_leave_their_source_unread() -> None:
    # PySide reads each imported module's source to look for "PySide6" and keeps it in
    # linecache; for the SDK's ~3,000 modules that was ~0.4 s and ~23 MiB.
    cached = _in_a_fresh_interpreter(
        "import json, linecache\n"
        "import PySide6.QtCore\n"
        "import app.ui\n"
        "import app.core.extract, app.store.export\n"
        "print(json.dumps(sorted(name for name in linecache.cache if 'app' in name)))\n"
    )

    assert cached == []


def test_the_window_still_gets_plain_qt() -> None:
    # Cairn selects no __feature__: Qt's names stay camelCase, properties stay methods.
    names = _in_a_fresh_interpreter(
        "import json\n"
        "import app.ui\n"
        "from PySide6.QtWidgets import QApplication, QLabel\n"
        "application = QApplication([])\n"
        "label = QLabel('x')\n"
        "print(json.dumps([callable(label.text), hasattr(label, 'setText')]))\n"
    )

    assert names == [True, True]


def test_the_collector_rests_until_the_window_has_painted(tmp_path: Path) -> None:
    # What start-up makes lives as long as the app: `cairn` turns the collector off
    # before importing the window, and the first paint sets start-up's objects aside
    # and turns it back on (issue 20).
    states = _in_a_fresh_interpreter(
        """
import gc, json
import keyring
import app.ui.app as ui_app
from PySide6.QtCore import QEventLoop
from PySide6.QtWidgets import QApplication
from app.__main__ import main
from app.core.paths import AppPaths
from app.secrets.keystore import SERVICE_NAME, USERNAME
from tests.fakes.keyring_backend import MemoryKeyring

backend = MemoryKeyring()
backend.passwords[(SERVICE_NAME, USERNAME)] = "sk-ant-api03-" + "x" * 40
keyring.set_keyring(backend)
states = {}

def run(argv):
    states["while the window loads"] = gc.isenabled()
    application = QApplication(["cairn"])
    session = ui_app.open_cairn(AppPaths.from_environment())
    session.freeze_startup = True
    session.show()
    states["before the first paint"] = gc.isenabled()
    while not session.started:
        application.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)
    states["after it"] = gc.isenabled()
    session.window.close()
    session.close()
    return 0

ui_app.run = run
main([])
print(json.dumps(states))
""",
        env={"CAIRN_HOME": str(tmp_path / "home")},
    )

    assert states == {
        "while the window loads": False,
        "before the first paint": False,
        "after it": True,
    }


_PAINT_THEN_BUILD = """
import json, sys
from PySide6.QtCore import QEvent, QEventLoop, QObject
from PySide6.QtWidgets import QApplication
from app.core.paths import AppPaths
from app.ui.app import open_cairn

application = QApplication(["cairn"])
session = open_cairn(AppPaths.from_environment())
after_paint = %r
seen = {}

class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint and "painted" not in seen:
            seen["painted"] = sorted(m for m in after_paint if m in sys.modules)
            seen["built when painted"] = session.controller.built
        return False

first_paint = FirstPaint()
session.window.installEventFilter(first_paint)
seen["built when opened"] = session.controller.built
session.show()
while not session.started:
    application.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)
seen["built when started"] = session.controller.built
seen["started"] = [m for m in ("app.chat.service", "app.store.sessions") if m in sys.modules]
seen["conversations listed"] = session.window.sidebar.model.rowCount()
session.window.close()
session.close()
print(json.dumps(seen))
"""


def test_the_chat_service_is_built_after_the_first_paint(tmp_path: Path) -> None:
    # The window paints with its widgets only; the controller builds the chat service (and
    # imports the chat side) on the loop's next turn, then the window is filled (issue 20).
    home = tmp_path / "home"
    _in_a_fresh_interpreter(  # one conversation, for the sidebar to list once started
        "from app.core.paths import AppPaths\n"
        "from app.store.database import open_database\n"
        "from app.store.sessions import SessionStore\n"
        "paths = AppPaths.from_environment(); paths.ensure()\n"
        "store = SessionStore(open_database(paths.database).connection)\n"
        "store.create_session('Plans for the garden', 'claude-sonnet-4-5')\n"
        "store.close()\n"
        "print('[]')\n",
        env={"CAIRN_HOME": str(home)},
    )
    seen = _in_a_fresh_interpreter(
        _PAINT_THEN_BUILD % (BUILT_AFTER_PAINT,), env={"CAIRN_HOME": str(home)}
    )

    assert seen == {
        "built when opened": False,
        "painted": [],
        "built when painted": False,
        "built when started": True,
        "started": ["app.chat.service", "app.store.sessions"],
        "conversations listed": 1,
    }


_PLUGINS_OFF_THEN_ON = """
import json, os, sys
os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
from app.__main__ import PLUGIN_LOADER, skip_plugin_loader
skip_plugin_loader()
from PySide6.QtCore import QEvent, QEventLoop, QObject
from PySide6.QtWidgets import QApplication
from app.core.paths import AppPaths
from app.ui.app import open_cairn

seen = {}
application = QApplication(["cairn"])
session = open_cairn(AppPaths.from_environment())

class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint and "painted" not in seen:
            seen["painted"] = "importlib.metadata" in sys.modules
        return False

first_paint = FirstPaint()
session.window.installEventFilter(first_paint)
session.show()
while not session.started:
    application.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)
seen["pydantic validates"] = session.controller.settings.font_size
from pydantic import BaseModel
seen["plugins while off"] = list(sys.modules[PLUGIN_LOADER].get_plugins())
os.environ["PYDANTIC_DISABLE_PLUGINS"] = "some_plugin"

class Late(BaseModel):  # its validator asks for plugins: the real loader answers
    x: int

seen["late model"] = Late(x=3).x
seen["real loader"] = "entry_points" in vars(sys.modules[PLUGIN_LOADER])
session.window.close()
session.close()
print(json.dumps(seen))
"""


def test_pydantics_plugin_loader_is_not_imported_to_paint_while_plugins_are_off(
    tmp_path: Path,
) -> None:
    # The loader imports importlib.metadata (email, zipfile…) before it reads the switch
    # that turns plugins off: ~2 % of the start's instructions (issue 20). A stand-in
    # answers "no plugins" while they are off, and hands over to the loader otherwise.
    seen = _in_a_fresh_interpreter(_PLUGINS_OFF_THEN_ON, env={"CAIRN_HOME": str(tmp_path / "home")})

    assert seen == {
        "painted": False,
        "pydantic validates": 11,
        "plugins while off": [],
        "late model": 3,
        "real loader": True,
    }


def test_the_smoke_run_is_asked_for_by_the_smoke_modules_variable() -> None:
    # app.ui.app reads the variable without importing app.ui.smoke (not needed to paint).
    from app.ui.app import SMOKE_VARIABLE
    from app.ui.smoke import SMOKE_VARIABLE as SMOKE_MODULES_VARIABLE

    assert SMOKE_VARIABLE == SMOKE_MODULES_VARIABLE
