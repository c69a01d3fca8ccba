"""Cairn's .ico and .icns (packaging/cairn_icons.py), read back by their layouts and by
Pillow's own readers of both formats (an independent reading, not our writer's)."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest
from PIL import IcnsImagePlugin, IcoImagePlugin, Image
from pytestqt.qtbot import QtBot

from tests.unit.packaging.conftest import load

icons = load("cairn_icons")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def ico_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("icons") / "cairn.ico"
    icons.write_ico(target)
    return target


@pytest.fixture(scope="module")
def icns_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("icons") / "cairn.icns"
    icons.write_icns(target)
    return target


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(PNG_SIGNATURE)
    width, height = struct.unpack(">II", data[16:24])  # IHDR follows the signature
    return width, height


def test_the_ico_holds_every_size_windows_asks_for(ico_file: Path, qtbot: QtBot) -> None:
    data = ico_file.read_bytes()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind, count) == (0, 1, len(icons.ICO_SIZES))
    seen = []
    for index in range(count):
        width, height, colours, zero, planes, bits, length, offset = struct.unpack(
            "<BBBBHHII", data[6 + 16 * index : 22 + 16 * index]
        )
        side = width or 256
        assert (height or 256) == side and (colours, zero, planes, bits) == (0, 0, 1, 32)
        assert png_size(data[offset : offset + length]) == (side, side)
        seen.append(side)
    assert seen == sorted(icons.ICO_SIZES)
    assert offset + length == len(data)  # the last picture ends the file


def test_pillow_reads_the_ico(ico_file: Path, qtbot: QtBot) -> None:
    with Image.open(ico_file) as image:
        assert isinstance(image, IcoImagePlugin.IcoImageFile)
        assert {size[0] for size in image.info["sizes"]} == set(icons.ICO_SIZES)
        image.size = (256, 256)
        image.load()
        assert image.size == (256, 256) and image.mode == "RGBA"
        # Drawn, not empty: the cairn's stones are opaque, the corners transparent.
        assert image.getpixel((128, 200))[3] == 255 and image.getpixel((0, 0))[3] == 0


def test_the_icns_holds_every_size_macos_asks_for(icns_file: Path, qtbot: QtBot) -> None:
    data = icns_file.read_bytes()
    assert data[:4] == b"icns" and struct.unpack(">I", data[4:8])[0] == len(data)
    position, kinds = 8, {}
    while position < len(data):
        kind = data[position : position + 4]
        length = struct.unpack(">I", data[position + 4 : position + 8])[0]
        kinds[kind] = png_size(data[position + 8 : position + length])
        position += length
    assert position == len(data)
    assert kinds == {kind: (size, size) for kind, size in icons.ICNS_TYPES.items()}


def test_pillow_reads_the_icns(icns_file: Path, qtbot: QtBot) -> None:
    with Image.open(icns_file) as image:
        assert isinstance(image, IcnsImagePlugin.IcnsImageFile)
        assert (512, 512, 2) in image.info["sizes"] and (16, 16, 1) in image.info["sizes"]
        image.load()
        assert image.size == (1024, 1024)


def test_the_linux_icons_are_one_png_a_size_and_the_svg(tmp_path: Path, qtbot: QtBot) -> None:
    icons.write_hicolor(tmp_path, "io.github.cairn_chat.Cairn")

    for size in icons.HICOLOR_SIZES:
        png = tmp_path / f"{size}x{size}" / "apps" / "io.github.cairn_chat.Cairn.png"
        with Image.open(io.BytesIO(png.read_bytes())) as image:
            assert image.size == (size, size)
    assert (tmp_path / "scalable" / "apps" / "io.github.cairn_chat.Cairn.svg").read_bytes() == (
        icons.SVG.read_bytes()
    )
