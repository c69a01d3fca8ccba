"""Cairn's code stays portable: the AST check of tests/portability.py over app/ and tests/,
and the check itself checked (it finds what it is meant to find)."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from tests.portability import MARKER, check_app_module, check_test_module, check_tree

ROOT = Path(__file__).resolve().parents[2]

# The modules allowed platform branches; a new one is a decision, made here.
PLATFORM_MODULES = {"app/core/platform.py", "app/store/instance_lock.py", "app/__main__.py"}


def test_app_has_nothing_posix_only_outside_its_platform_modules() -> None:
    findings = check_tree(ROOT, "app")
    assert not findings, "\n".join(map(str, findings))


def test_the_tests_give_encodings_kill_portably_and_say_why_they_skip() -> None:
    findings = check_tree(ROOT, "tests")
    assert not findings, "\n".join(map(str, findings))


def test_the_platform_modules_are_the_known_ones() -> None:
    marked = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "app").rglob("*.py")
        if MARKER in "\n".join(path.read_text(encoding="utf-8").splitlines()[:20])
    }
    assert marked == PLATFORM_MODULES


# --- the check checked ---------------------------------------------------------------


def rules(source: str) -> list[str]:
    return [finding.rule for finding in check_app_module(textwrap.dedent(source), "x.py")]


@pytest.mark.parametrize(
    ("source", "rule"),
    [
        ("import fcntl", "platform-only module"),
        ("import pwd, os", "platform-only module"),
        ("from termios import tcgetattr", "platform-only module"),
        ("import msvcrt", "platform-only module"),
        ("import os\nos.fork()", "POSIX-only call"),
        ("import os\nif os.geteuid() == 0: pass", "POSIX-only call"),
        ("from os import getuid\ngetuid()", "POSIX-only call"),
        ("import os as system\nsystem.killpg(1, 9)", "POSIX-only call"),
        ("import os\nos.startfile('a.txt')", "POSIX-only call"),
        ("import os, signal\nos.kill(1, signal.SIGKILL)", "signal Windows lacks"),
        ("import signal\nsignal.signal(signal.SIGHUP, print)", "signal Windows lacks"),
        ("import signal\nsignal.alarm(5)", "signal Windows lacks"),
        ("LOCK = '/tmp/cairn.lock'", "POSIX path literal"),
        ("from pathlib import Path\nPath('/home/ann/.config')", "POSIX path literal"),
        ("n = 1\nsocket = f'/tmp/.X11-unix/X{n}'", "POSIX path literal"),
        ("import sys\nWINDOWS = sys.platform == 'win32'", "platform branch"),
        ("import os\nif os.name == 'nt': pass", "platform branch"),
        ("import platform\nplatform.system()", "platform branch"),
        ("import os\nos.replace('a', 'b')", "rename without retry"),
        ("import os\nos.fsync(os.open('f', os.O_RDONLY))", "fsync of a read-only descriptor"),
        (
            """
            import os
            def flush(path):
                with open(path, "rb") as file:
                    os.fsync(file.fileno())
            """,
            "fsync of a read-only descriptor",
        ),
        (
            """
            import os
            def sync_later(descriptor):
                def step():
                    os.fsync(descriptor)
                return step
            def copy(path):
                descriptor = os.open(path, os.O_RDONLY | os.O_BINARY)
                sync_later(descriptor)()
            """,
            "fsync of a read-only descriptor",
        ),
        ("from pathlib import Path\nPath('a').read_text()", "text without an encoding"),
        ("open('notes.txt', 'w')", "text without an encoding"),
        ("from pathlib import Path\nPath('a').open('a')", "text without an encoding"),
        ("import subprocess\nsubprocess.run(['ls'], text=True)", "text without an encoding"),
    ],
)
def test_the_check_finds(source: str, rule: str) -> None:
    assert rule in rules(source)


@pytest.mark.parametrize(
    "source",
    [
        "import os\nos.fsync(os.open('f', os.O_RDWR))",
        "import os\nwith open('f', 'wb') as file:\n    os.fsync(file.fileno())",
        "import os\nwith open('f', 'r+b') as file:\n    os.fsync(file.fileno())",
        "import signal\nsignal.signal(signal.SIGTERM, print)",
        "def refresh(signal):\n    signal.connect(print)",  # a Qt signal, not the module
        "from pathlib import Path\nPath('a').read_text(encoding='utf-8')",
        "open('data.bin', 'rb')",
        "from app.core.platform import replace_file\nreplace_file('a', 'b')",
        "'''/tmp in a docstring is prose'''",
        "import os\nos.path.join('a', 'b')",
    ],
)
def test_the_check_leaves_portable_code_alone(source: str) -> None:
    assert rules(source) == []


def test_a_module_that_says_it_holds_platform_branches_may_have_them() -> None:
    source = f'"""Locks.\n\n# {MARKER}\n"""\nimport sys\nimport fcntl\nsys.platform\n'
    assert check_app_module(source, "lock.py") == []


def test_the_backup_before_its_windows_fix_is_caught() -> None:
    # app/store/backup.py as it was: the copy opened read-only, fsynced step by step.
    source = """
        import os
        def _between_steps(cancelled, flush):
            def progress(status, remaining, total):
                os.fsync(flush)
            return progress
        def copy_database(reader, writer, partial, cancelled, pages):
            flush = os.open(partial, os.O_RDONLY)
            try:
                reader.backup(writer, pages=pages, progress=_between_steps(cancelled, flush))
            finally:
                os.close(flush)
    """
    assert rules(source) == ["fsync of a read-only descriptor"]


def test_a_posix_only_call_added_to_app_fails_the_check(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "app", tmp_path / "app")
    module = tmp_path / "app" / "core" / "text.py"
    module.write_text(
        module.read_text(encoding="utf-8") + "\n\ndef owner() -> int:\n    return os.getuid()\n",
        encoding="utf-8",
    )
    module.write_text("import os\n" + module.read_text(encoding="utf-8"), encoding="utf-8")

    findings = check_tree(tmp_path, "app")

    assert [(f.path, f.rule, f.what) for f in findings] == [
        ("app/core/text.py", "POSIX-only call", "os.getuid")
    ]


@pytest.mark.parametrize(
    ("source", "rule"),
    [
        ("import os, signal\nos.kill(1, signal.SIGKILL)", "signal Windows lacks"),
        ("import pytest\n@pytest.mark.skipif(True)\ndef test(): pass", "skip without a reason"),
        ("import pytest\ndef test():\n    pytest.skip()", "skip without a reason"),
        ("def test(tmp_path):\n    (tmp_path / 'a').write_text('x')", "text without an encoding"),
    ],
)
def test_the_check_of_tests_finds(source: str, rule: str) -> None:
    assert [f.rule for f in check_test_module(source, "test_x.py")] == [rule]
