"""Cairn's icons for each system, drawn from resources/cairn.svg by Qt's SVG renderer.

    python packaging/cairn_icons.py ico OUT.ico          Windows: one .ico, 16-256 px
    python packaging/cairn_icons.py icns OUT.icns        macOS: one .icns, 16-1024 px
    python packaging/cairn_icons.py hicolor DIR APP_ID   Linux: DIR/<n>x<n>/apps/APP_ID.png

Every picture inside is a PNG (Windows reads PNG icons since Vista, macOS since
10.7). The containers are written here, by their published layouts:
- ICO: https://learn.microsoft.com/en-us/previous-versions/ms997538(v=msdn.10)
  (ICONDIR, then one ICONDIRENTRY per picture; 0 stands for 256 px).
- ICNS: Apple's format as documented by Apple's Icon Services header and
  https://en.wikipedia.org/wiki/Apple_Icon_Image_format ("icns", big-endian
  lengths, one OSType per size: icp4 16 px … ic10 1024 px).
QtSvg is part of PySide6 Essentials: no tool beyond the app's own dependencies.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

SVG = Path(__file__).resolve().parents[1] / "resources" / "cairn.svg"
ICO_SIZES = (16, 20, 24, 32, 40, 48, 64, 256)
# OSType -> pixels. The @2x types carry the Retina pictures of the size below them.
ICNS_TYPES = {
    b"icp4": 16,
    b"icp5": 32,
    b"ic11": 32,  # 16@2x
    b"icp6": 64,
    b"ic12": 64,  # 32@2x
    b"ic07": 128,
    b"ic08": 256,
    b"ic13": 256,  # 128@2x
    b"ic09": 512,
    b"ic14": 512,  # 256@2x
    b"ic10": 1024,  # 512@2x
}
HICOLOR_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def render_png(size: int, svg: Path = SVG) -> bytes:
    """The SVG drawn at `size` x `size` pixels, antialiased, as PNG bytes."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    if QGuiApplication.instance() is None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        render_png.app = QGuiApplication([])  # type: ignore[attr-defined]  # kept alive
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"{svg} is not an SVG Qt can draw")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise OSError(f"Qt could not encode the {size} px icon as PNG")
    buffer.close()
    return bytes(data.data())


def ico(pictures: dict[int, bytes]) -> bytes:
    """An .ico holding each PNG of `pictures` (size -> PNG), smallest first."""
    sizes = sorted(pictures)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries, images = b"", b""
    for size in sizes:
        png = pictures[size]
        side = 0 if size >= 256 else size
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(png), offset)
        images += png
        offset += len(png)
    return header + entries + images


def icns(pictures: dict[int, bytes]) -> bytes:
    """An .icns with one entry per `ICNS_TYPES` type, each the PNG of its size."""
    body = b"".join(
        kind + struct.pack(">I", 8 + len(pictures[size])) + pictures[size]
        for kind, size in ICNS_TYPES.items()
    )
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def write_ico(target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(ico({size: render_png(size) for size in ICO_SIZES}))


def write_icns(target: Path) -> None:
    pictures = {size: render_png(size) for size in sorted(set(ICNS_TYPES.values()))}
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(icns(pictures))


def write_hicolor(folder: Path, app_id: str) -> None:
    """The PNGs of the freedesktop icon theme, plus the SVG itself as `scalable`."""
    for size in HICOLOR_SIZES:
        place = folder / f"{size}x{size}" / "apps"
        place.mkdir(parents=True, exist_ok=True)
        (place / f"{app_id}.png").write_bytes(render_png(size))
    scalable = folder / "scalable" / "apps"
    scalable.mkdir(parents=True, exist_ok=True)
    (scalable / f"{app_id}.svg").write_bytes(SVG.read_bytes())


def main(argv: list[str]) -> int:
    usage = "usage: cairn_icons.py ico OUT | icns OUT | hicolor DIR APP_ID"
    if len(argv) == 2 and argv[0] == "ico":
        write_ico(Path(argv[1]))
    elif len(argv) == 2 and argv[0] == "icns":
        write_icns(Path(argv[1]))
    elif len(argv) == 3 and argv[0] == "hicolor":
        write_hicolor(Path(argv[1]), argv[2])
    else:
        print(usage, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
