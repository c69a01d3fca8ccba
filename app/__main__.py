"""`python -m app` and the `cairn` command: check for a screen, then start the window."""

# portability: platform branches live here (only X11 and Wayland need a display found).

from __future__ import annotations

import gc
import importlib
import os
import sys
import types
from collections.abc import Iterable
from pathlib import Path

NO_DISPLAY = (
    "Cairn needs a graphical display and none was found (DISPLAY and WAYLAND_DISPLAY "
    "are unset). On a machine without a screen, run it under Xvfb: xvfb-run -a ./scripts/run"
)


def display_problem(
    environ: dict[str, str] | None = None, platform: str = sys.platform
) -> str | None:
    """Why Qt would abort for lack of a screen, in one line; None when it should start."""
    env = dict(os.environ) if environ is None else environ
    if not platform.startswith("linux") and "bsd" not in platform:
        return None
    qpa = env.get("QT_QPA_PLATFORM", "")
    if qpa and not qpa.startswith(("xcb", "wayland")):
        return None  # offscreen, vnc, eglfs…: the user chose a platform that needs no X.
    display = env.get("DISPLAY", "")
    if env.get("WAYLAND_DISPLAY") and not qpa.startswith("xcb"):
        return None
    if not display:
        return NO_DISPLAY
    # A local display ":N" has a socket; a stale DISPLAY makes Qt abort, so say it plainly.
    if display.startswith(":"):
        number = display[1:].split(".")[0]
        if number.isdigit() and not Path(f"/tmp/.X11-unix/X{number}").exists():
            return (
                f"Cairn can't open the display {display} (no X server is listening there). "
                "Start it from your desktop session, or run: xvfb-run -a ./scripts/run"
            )
    return None


# pydantic's plugin loader, and the value of PYDANTIC_DISABLE_PLUGINS that turns every
# plugin off (pydantic.plugin._loader.get_plugins).
PLUGIN_LOADER = "pydantic.plugin._loader"
ALL_PLUGINS_OFF = ("__all__", "1", "true")


def skip_plugin_loader() -> None:
    """Spare the window's start the import of pydantic's plugin loader while every plugin
    is off.

    The loader imports importlib.metadata (with email, zipfile, csv…) at its top, before
    it reads PYDANTIC_DISABLE_PLUGINS, for the catalog's first model: ~36 M instructions of
    the start to the first paint, 2 % (bench_startup --callgrind; 76 M when the core's
    models are imported alone; issue 20). In its place until then, a
    stand-in answers as the loader does with the plugins off — none — and otherwise hands
    over to the real loader. Nothing is done when the loader is already imported.
    """
    if PLUGIN_LOADER in sys.modules:
        return
    stand_in = types.ModuleType(PLUGIN_LOADER)

    def get_plugins() -> Iterable[object]:
        if os.environ.get("PYDANTIC_DISABLE_PLUGINS") in ALL_PLUGINS_OFF:
            return ()
        if sys.modules.get(PLUGIN_LOADER) is stand_in:
            del sys.modules[PLUGIN_LOADER]
        loader = importlib.import_module(PLUGIN_LOADER)
        plugins: Iterable[object] = loader.get_plugins()
        return plugins

    stand_in.get_plugins = get_plugins  # type: ignore[attr-defined]
    sys.modules[PLUGIN_LOADER] = stand_in


def main(argv: list[str] | None = None) -> int:
    # A frozen (bundled) Cairn starts its summary process by running itself again:
    # this hands that run to multiprocessing. Not frozen, freeze_support does nothing,
    # and multiprocessing (with socket and pickle) loads at the first summary instead of
    # before the window paints (issue 20).
    if getattr(sys, "frozen", False):
        import multiprocessing

        multiprocessing.freeze_support()
    args = sys.argv[1:] if argv is None else argv
    # The subcommands (app.cli.COMMANDS) need no display and never load Qt; the window
    # never loads the command line (its imports would delay the first paint).
    if args:
        from app.cli import command_names
        from app.cli import main as command_line

        if args[0] in command_names():
            return command_line(args)
    if {"-h", "--help"} & set(args):
        print(
            "usage: cairn [--version]\n"
            "       cairn export [--conversation ID | --all] [--format json|markdown] FILE\n"
            "       cairn import [--as-copy] FILE\n"
            "       cairn search [--conversation ID] [--author you|claude|summary] [--newest] "
            "[--limit N] WORDS…\n\n"
            "Chat with Claude; long conversations never run out of room.\n"
            "Alone, cairn opens the window. The commands work without it (and without a\n"
            "screen): run `cairn COMMAND --help` for each.\n"
            "Environment: CAIRN_HOME (one folder for data, settings and logs), "
            "ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL."
        )
        return 0
    if "--version" in args:
        from app import __version__

        print(f"Cairn {__version__}")
        return 0
    problem = display_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    # Cairn uses no pydantic plugins: without this, building the first model's validator
    # (before the window paints) reads every installed package's entry points to look for
    # some (~4.5 ms). A documented switch, https://docs.pydantic.dev/latest/concepts/plugins/
    # (issue 20); one set by the user is kept.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    skip_plugin_loader()
    # What is made until the first paint (modules, classes, Qt's enums, the window) lives
    # as long as the app: the collector's passes over it while it grows find nothing to
    # free (3 % of the start's instructions, callgrind, bench_startup). It is set aside
    # once the window has painted, and the collector turned back on then
    # (`CairnSession._after_first_paint`).
    gc.disable()
    from app.ui.app import run

    return run(sys.argv)


if __name__ == "__main__":
    sys.exit(main())
