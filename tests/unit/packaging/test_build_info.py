"""What the bundles say about themselves (packaging/cairn_build_info.py), the spec and the
Windows installer script, checked here though they are built on Windows and macOS."""

from __future__ import annotations

import ast
import plistlib
import re

from app.ui.app import DESKTOP_FILE_NAME
from tests.unit.packaging.conftest import PACKAGING, load

info = load("cairn_build_info")
ROOT = PACKAGING.parent


def test_one_identity_on_every_system() -> None:
    assert info.BUNDLE_ID == DESKTOP_FILE_NAME == "io.github.cairn_chat.Cairn"
    assert (PACKAGING / f"{info.BUNDLE_ID}.desktop").is_file()
    assert info.version() == "0.1.0" or re.fullmatch(r"\d+\.\d+\.\d+\S*", info.version())


def test_the_info_plist_follows_dark_mode_and_carries_the_version() -> None:
    entries = info.info_plist("1.2.3")
    written = plistlib.loads(plistlib.dumps(entries))  # a valid property list

    assert written["CFBundleIdentifier"] == "io.github.cairn_chat.Cairn"
    assert written["CFBundleShortVersionString"] == written["CFBundleVersion"] == "1.2.3"
    # https://developer.apple.com/documentation/bundleresources/information-property-list/nsrequiresaquasystemappearance
    assert written["NSRequiresAquaSystemAppearance"] is False
    assert written["NSHighResolutionCapable"] is True


def test_the_windows_version_resource_is_what_pyinstaller_reads() -> None:
    text = info.windows_version_resource("1.2.3")
    tree = ast.parse(text, mode="eval")  # PyInstaller eval()s this text with its classes

    calls = {
        node.func.id: node for node in ast.walk(tree) if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
    }  # fmt: skip
    assert set(calls) == {
        "VSVersionInfo", "FixedFileInfo", "StringFileInfo", "StringTable", "StringStruct",
        "VarFileInfo", "VarStruct",
    }  # fmt: skip
    fixed = {k.arg: ast.literal_eval(k.value) for k in calls["FixedFileInfo"].keywords}
    assert fixed == {"filevers": (1, 2, 3, 0), "prodvers": (1, 2, 3, 0)}
    strings = dict(
        ast.literal_eval(ast.unparse(node).removeprefix("StringStruct"))
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "StringStruct"
    )
    assert strings["FileVersion"] == "1.2.3.0" and strings["ProductVersion"] == "1.2.3"
    assert strings["OriginalFilename"] == "Cairn.exe" and strings["ProductName"] == "Cairn"


def test_version_numbers_for_windows() -> None:
    assert info.version_tuple("0.1.0") == (0, 1, 0, 0)
    assert info.version_tuple("2.10.3rc1") == (2, 10, 3, 1)


def test_the_spec_is_python_and_builds_each_systems_programs() -> None:
    spec = (PACKAGING / "cairn.spec").read_text(encoding="utf-8")
    ast.parse(spec)
    for name in ('"Cairn"', '"cairn.com"', '"Cairn.app"', '"cairn"'):
        assert name in spec
    assert info.EXECUTABLES["win32"] == {"window": "Cairn.exe", "console": "cairn.com"}


def test_the_installer_is_per_user_and_keeps_the_users_data() -> None:
    script = (PACKAGING / "windows" / "cairn.iss").read_text(encoding="utf-8")
    setup = dict(
        line.split("=", 1)
        for line in script.split("\n[Setup]\n")[1].split("\n[")[0].splitlines()
        if "=" in line and not line.startswith(";")
    )

    assert setup["PrivilegesRequired"] == "lowest"  # no administrator rights
    assert setup["DefaultDirName"] == r"{autopf}\Cairn"  # %LOCALAPPDATA%\Programs\Cairn
    assert setup["OutputBaseFilename"] == "Cairn-Setup"
    assert r"{autoprograms}\Cairn" in script and r"{app}\Cairn.exe" in script
    # Nothing of the user's is deleted at uninstall, and the last page says so.
    assert "[UninstallDelete]" not in script and "uninsdeletevalue" not in script
    messages = script.split("\n[Messages]\n")[1].split("\n[")[0]
    assert "they stay" in messages and "were kept" in messages
    # Inno reads paths relative to the script: the bundle and the icon it names exist
    # where the spec puts them.
    assert r"..\..\dist\Cairn\*" in script and r"..\..\build\icons\cairn.ico" in script


def test_the_build_pins_one_pyinstaller_for_every_system() -> None:
    pins = (PACKAGING / "requirements-build.txt").read_text(encoding="utf-8").split()
    assert [pin.split("==")[0] for pin in pins] == ["pyinstaller"]
    assert "packaging/requirements-build.txt" in (ROOT / "scripts" / "package").read_text(
        encoding="utf-8"
    )
