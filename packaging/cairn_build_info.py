"""What the bundle says about itself on each system: names, version, identifiers.

packaging/cairn.spec reads this; tests/unit/packaging/test_build_info.py checks it
on Linux (the Windows version resource and the macOS Info.plist are plain data).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
APP_NAME = "Cairn"
DESKTOP_FILE = ROOT / "packaging" / "io.github.cairn_chat.Cairn.desktop"
# The bundle identifier is the desktop file's name: one identity on every system
# (and the name QGuiApplication.setDesktopFileName gives the window).
BUNDLE_ID = DESKTOP_FILE.name.removesuffix(".desktop")
COPYRIGHT = "Copyright © Cairn developers. MIT licence."
DESCRIPTION = "Cairn: chat with Claude; long conversations never run out of room"
# What each system's executables are called inside the bundle folder. Windows:
# the window (Cairn.exe) and the command line side by side; the file system
# ignores case, so the command line is cairn.com: typed `cairn` runs it first,
# as %PATHEXT% lists .COM before .EXE (Visual Studio's devenv.com does the same).
EXECUTABLES = {
    "linux": {"window": "cairn", "console": "cairn"},
    "win32": {"window": "Cairn.exe", "console": "cairn.com"},
    "darwin": {"window": "Cairn", "console": "Cairn"},
}


def version() -> str:
    """The version in pyproject.toml ("0.1.0")."""
    with (ROOT / "pyproject.toml").open("rb") as file:
        return str(tomllib.load(file)["project"]["version"])


def version_tuple(text: str) -> tuple[int, int, int, int]:
    """Four numbers for Windows' version resource: "0.1.0" -> (0, 1, 0, 0)."""
    numbers = [int(part) for part in re.findall(r"\d+", text)[:4]]
    return tuple(numbers + [0] * (4 - len(numbers)))  # type: ignore[return-value]


def info_plist(text: str) -> dict[str, Any]:
    """Cairn.app's Info.plist entries beyond those PyInstaller writes itself.

    Keys: https://developer.apple.com/documentation/bundleresources/information-property-list
    """
    return {
        "CFBundleName": APP_NAME,
        "CFBundleDisplayName": APP_NAME,
        "CFBundleIdentifier": BUNDLE_ID,
        "CFBundleShortVersionString": text,
        "CFBundleVersion": text,
        "CFBundlePackageType": "APPL",
        "LSApplicationCategoryType": "public.app-category.productivity",
        # PySide6 6.6+ wheels need macOS 11 or newer.
        "LSMinimumSystemVersion": "11.0",
        # False: the app follows the system's light or dark appearance (Qt reads it).
        "NSRequiresAquaSystemAppearance": False,
        "NSHighResolutionCapable": True,
        "NSHumanReadableCopyright": COPYRIGHT,
    }


def windows_version_resource(text: str) -> str:
    """The version resource of Cairn.exe and cairn.com (Properties → Details), in the
    text form PyInstaller's `version=` file takes (read with its versioninfo classes,
    which import only on Windows)."""
    numbers = version_tuple(text)
    dotted = ".".join(map(str, numbers))
    strings = {
        "CompanyName": "Cairn developers",
        "FileDescription": DESCRIPTION,
        "FileVersion": dotted,
        "InternalName": APP_NAME,
        "LegalCopyright": COPYRIGHT,
        "OriginalFilename": EXECUTABLES["win32"]["window"],
        "ProductName": APP_NAME,
        "ProductVersion": text,
    }
    table = ",\n".join(f"        StringStruct({k!r}, {v!r})" for k, v in strings.items())
    return f"""VSVersionInfo(
  ffi=FixedFileInfo(filevers={numbers}, prodvers={numbers}),
  kids=[
    StringFileInfo([StringTable('040904B0', [
{table}
    ])]),
    VarFileInfo([VarStruct('Translation', [0x0409, 1200])]),
  ],
)
"""
