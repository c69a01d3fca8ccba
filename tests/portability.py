"""An AST check for code that would break on Windows or macOS (tests/unit/test_portability.py).

Rules for app/, outside the modules that hold platform branches (they say
`MARKER` in a comment or their docstring, near the top):
- no POSIX-only (or Windows-only) module: fcntl, pwd, grp, termios…, msvcrt, winreg…
- no POSIX-only call or constant: os.fork, os.getuid/geteuid, os.killpg, os.statvfs…
- no signal Windows lacks (SIGKILL, SIGHUP, SIGUSR1…, signal.alarm…)
- no POSIX path literal ("/tmp", "/home", "/usr"…)
- no platform branch (sys.platform, os.name, platform.system())
- no bare os.replace/os.rename: app.core.platform.replace_file retries on Windows
- no fsync of a descriptor opened read-only (Windows' _commit refuses it), followed
  through assignments, `with … as`, `.fileno()` and calls into the module's own functions.
Everywhere in app/ and tests/: text read or written with an explicit encoding
(Windows' default is the ANSI code page). In tests/: no signal Windows lacks
(`Process.kill()` instead of SIGKILL), and a skip always says why.

A check, not a proof: it reads names, so an alias (`from os import fork as f`)
is followed, a value passed through a data structure is not.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

MARKER = "portability: platform branches live here"
_MARKER_LINES = 20

POSIX_ONLY_MODULES = frozenset(
    {"fcntl", "pwd", "grp", "termios", "tty", "pty", "resource", "posix", "syslog", "crypt"}
    | {"spwd", "nis", "readline", "curses", "posixpath"}
)
WINDOWS_ONLY_MODULES = frozenset({"msvcrt", "winreg", "_winapi", "winsound", "nt", "ntpath"})
POSIX_ONLY_NAMES = frozenset(
    f"os.{name}"
    for name in (
        "fork", "forkpty", "getuid", "geteuid", "getgid", "getegid", "getgroups", "setuid",
        "seteuid", "setgid", "setegid", "setsid", "setpgid", "getpgid", "getpgrp", "getsid",
        "killpg", "chown", "lchown", "fchown", "mkfifo", "mknod", "statvfs", "fstatvfs",
        "getloadavg", "uname", "nice", "sync", "pipe2", "openpty", "ttyname", "wait3", "wait4",
        "WNOHANG", "O_NOFOLLOW", "O_CLOEXEC", "O_NONBLOCK", "posix_fadvise", "getpriority",
        "sched_getaffinity", "sched_setaffinity", "fchmod", "lchmod", "sysconf", "confstr",
    )
) | frozenset({"shutil.chown", "os.startfile", "sys.getwindowsversion"})  # fmt: skip
# The signals Python has on Windows: https://docs.python.org/3/library/signal.html#signal.signal
WINDOWS_SIGNALS = frozenset(
    {"SIGABRT", "SIGFPE", "SIGILL", "SIGINT", "SIGSEGV", "SIGTERM", "SIG_DFL", "SIG_IGN"}
    | {"signal", "getsignal", "default_int_handler", "raise_signal", "set_wakeup_fd", "strsignal"}
    | {"Signals", "Handlers", "valid_signals"}
)
POSIX_PATHS = ("/tmp", "/home", "/usr", "/etc", "/var", "/dev", "/proc", "/opt", "/run", "/sys")
POSIX_PATHS += ("/Users", "/Library", "/Applications", "~/.")
PLATFORM_CHECKS = frozenset(
    {"sys.platform", "os.name", "platform.system", "platform.mac_ver", "platform.win32_ver"}
)
RENAMES = frozenset({"os.replace", "os.rename", "os.renames"})
_TEXT_SUBPROCESS = frozenset(
    {"subprocess.run", "subprocess.Popen", "subprocess.check_output", "subprocess.call"}
    | {"subprocess.check_call"}
)
_TEMPORARY_FILES = frozenset(
    {"tempfile.NamedTemporaryFile", "tempfile.TemporaryFile", "tempfile.SpooledTemporaryFile"}
)


@dataclass(frozen=True)
class Finding:
    """One place that would break elsewhere."""

    path: str
    line: int
    rule: str
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}: {self.what}"


def holds_platform_branches(source: str) -> bool:
    """Whether the module says, near its top, that platform branches belong in it."""
    return MARKER in "\n".join(source.splitlines()[:_MARKER_LINES])


def check_app_module(source: str, path: str) -> list[Finding]:
    """Every finding in one module of app/."""
    tree = ast.parse(source, path)
    checker = _Checker(tree, path)
    if not holds_platform_branches(source):
        checker.platform_rules()
    checker.encoding_rules()
    return checker.findings


def check_test_module(source: str, path: str) -> list[Finding]:
    """Every finding in one module of tests/."""
    checker = _Checker(ast.parse(source, path), path)
    checker.encoding_rules()
    checker.test_rules()
    return checker.findings


def check_tree(root: Path, folder: str) -> list[Finding]:
    """Every finding under `root/folder` (app: the app's rules, else the tests')."""
    check = check_app_module if folder == "app" else check_test_module
    findings: list[Finding] = []
    for path in sorted((root / folder).rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        findings += check(path.read_text(encoding="utf-8"), relative)
    return findings


# --- inside ----------------------------------------------------------------------------


def dotted(node: ast.AST, aliases: dict[str, str] | None = None) -> str | None:
    """`os.path.join` for the expression os.path.join (aliases resolved), else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    head = (aliases or {}).get(node.id, node.id)
    return ".".join([head, *reversed(parts)])


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _constant_text(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of `function` (or a module) outside the functions and classes it defines."""
    pending = list(ast.iter_child_nodes(function))
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            pending.extend(ast.iter_child_nodes(node))


def _truthy_constant(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and bool(node.value)


class _Checker:
    def __init__(self, tree: ast.Module, path: str) -> None:
        self.tree = tree
        self.path = path
        self.findings: list[Finding] = []
        self.aliases = self._aliases()
        self.imported = self._imported()
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {
            node.name: node
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        }

    def add(self, node: ast.AST, rule: str, what: str) -> None:
        self.findings.append(Finding(self.path, getattr(node, "lineno", 0), rule, what))

    def _aliases(self) -> dict[str, str]:
        """Local name -> what it stands for: `import os.path as p`, `from os import fork`."""
        found: dict[str, str] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        found[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        return found

    def _imported(self) -> set[str]:
        """The names import statements bind in this module."""
        found: set[str] = set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                found |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                found |= {a.asname or a.name for a in node.names}
        return found

    def names(self) -> Iterator[tuple[ast.AST, str]]:
        """Every dotted name used (outermost only: os.path.join, not os.path too)."""
        inner: set[int] = set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Attribute | ast.Name) and id(node) not in inner:
                name = dotted(node, self.aliases)
                head = node
                while isinstance(head, ast.Attribute):
                    head = head.value
                # A module's names only: a Qt `signal` variable is not the signal module.
                if name is not None and isinstance(head, ast.Name) and head.id in self.imported:
                    yield node, name
                child = node.value if isinstance(node, ast.Attribute) else None
                while isinstance(child, ast.Attribute):
                    inner.add(id(child))
                    child = child.value
                if child is not None:
                    inner.add(id(child))

    def calls(self) -> Iterator[tuple[ast.Call, str | None]]:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call):
                yield node, dotted(node.func, self.aliases)

    # -- app/, outside the platform modules -------------------------------------------

    def platform_rules(self) -> None:
        for node in ast.walk(self.tree):
            modules: Iterable[str] = ()
            if isinstance(node, ast.Import):
                modules = (alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules = (node.module.split(".")[0],)
            for module in modules:
                if module in POSIX_ONLY_MODULES | WINDOWS_ONLY_MODULES:
                    self.add(node, "platform-only module", module)
        for node, name in self.names():
            if name in POSIX_ONLY_NAMES:
                self.add(node, "POSIX-only call", name)
            elif name.startswith("signal.") and name.split(".")[1] not in WINDOWS_SIGNALS:
                self.add(node, "signal Windows lacks", name)
            elif name in PLATFORM_CHECKS:
                self.add(node, "platform branch", f"{name} (belongs in app/core/platform.py)")
            elif name in RENAMES:
                self.add(node, "rename without retry", f"{name} (use replace_file)")
        for node, text in self._literals():
            if text.startswith(POSIX_PATHS):
                self.add(node, "POSIX path literal", repr(text))
        self._read_only_fsyncs()

    def _literals(self) -> Iterator[tuple[ast.AST, str]]:
        docstrings = {
            id(body[0].value)
            for node in ast.walk(self.tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and (body := node.body)
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        }
        for node in ast.walk(self.tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
            ):
                yield node, node.value

    # -- fsync of a read-only descriptor ------------------------------------------------

    def _opens_read_only(self, node: ast.expr) -> bool:
        if not isinstance(node, ast.Call):
            return False
        name = dotted(node.func, self.aliases)
        if name == "os.open" and len(node.args) >= 2:
            flags = {dotted(n, self.aliases) for n in ast.walk(node.args[1])}
            return "os.O_RDONLY" in flags and not flags & {"os.O_RDWR", "os.O_WRONLY"}
        if name in ("open", "io.open") or (
            isinstance(node.func, ast.Attribute) and node.func.attr == "open"
        ):
            position = 1 if name in ("open", "io.open") else 0
            mode = node.args[position] if len(node.args) > position else _keyword(node, "mode")
            text = "r" if mode is None else _constant_text(mode)
            return text is not None and not set(text) & set("wax+")
        return False

    def _read_only_names(self, function: ast.AST) -> set[str]:
        """Names `function` itself binds to a read-only file or descriptor."""
        found: set[str] = set()
        for node in _own_nodes(function):
            if isinstance(node, ast.Assign) and self._opens_read_only(node.value):
                found |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif (
                isinstance(node, ast.withitem)
                and self._opens_read_only(node.context_expr)
                and isinstance(node.optional_vars, ast.Name)
            ):
                found.add(node.optional_vars.id)
        return found

    def _is_read_only(self, node: ast.expr, names: set[str]) -> bool:
        if isinstance(node, ast.Name):
            return node.id in names
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "fileno"
        ):
            return self._is_read_only(node.func.value, names)
        return self._opens_read_only(node)

    def _fsyncs(self, function: ast.AST, names: set[str], depth: int = 0) -> list[ast.Call]:
        """The calls in `function` that fsync one of `names`, directly or through
        the module's own functions (closures included)."""
        if depth > 5:
            return []
        found: list[ast.Call] = []
        for node in ast.walk(function):
            if not isinstance(node, ast.Call):
                continue
            name = dotted(node.func, self.aliases)
            if name == "os.fsync" and node.args and self._is_read_only(node.args[0], names):
                found.append(node)
            elif isinstance(node.func, ast.Name) and node.func.id in self.functions:
                callee = self.functions[node.func.id]
                parameters = [a.arg for a in callee.args.posonlyargs + callee.args.args]
                passed = {
                    parameters[index]
                    for index, argument in enumerate(node.args[: len(parameters)])
                    if self._is_read_only(argument, names)
                }
                if passed and callee is not function and self._fsyncs(callee, passed, depth + 1):
                    found.append(node)
        return found

    def _read_only_fsyncs(self) -> None:
        for function in [self.tree, *self.functions.values()]:
            names = self._read_only_names(function)
            for call in self._fsyncs(function, names):
                self.add(call, "fsync of a read-only descriptor", ast.unparse(call)[:80])
        # Each finding once (a function's closures are walked with it, and alone).
        unique = {(f.line, f.rule, f.what): f for f in self.findings}
        self.findings = sorted(unique.values(), key=lambda f: f.line)

    # -- everywhere: explicit encodings ----------------------------------------------------

    def encoding_rules(self) -> None:
        for call, name in self.calls():
            if _keyword(call, "encoding") is not None:
                continue
            attribute = call.func.attr if isinstance(call.func, ast.Attribute) else None
            if attribute in ("read_text", "write_text"):
                self.add(call, "text without an encoding", f".{attribute}()")
            elif (position := self._mode_position(call, name)) is not None:
                mode = call.args[position] if len(call.args) > position else _keyword(call, "mode")
                text = "r" if mode is None else _constant_text(mode)
                if text is not None and "b" not in text and set(text) <= set("rwxat+"):
                    self.add(call, "text without an encoding", f"{name or attribute}({text!r})")
            elif name in _TEXT_SUBPROCESS and (
                _truthy_constant(_keyword(call, "text"))
                or _truthy_constant(_keyword(call, "universal_newlines"))
            ):
                self.add(call, "text without an encoding", f"{name}(text=True)")
            elif name in _TEMPORARY_FILES:
                mode = _constant_text(_keyword(call, "mode"))
                if mode is not None and "b" not in mode:
                    self.add(call, "text without an encoding", f"{name}(mode={mode!r})")
            elif name == "io.TextIOWrapper":
                self.add(call, "text without an encoding", "io.TextIOWrapper()")

    @staticmethod
    def _mode_position(call: ast.Call, name: str | None) -> int | None:
        """Where an open call takes its mode: open(file, mode), path.open(mode)."""
        if name in ("open", "io.open", "os.fdopen", "codecs.open"):
            return 1
        if isinstance(call.func, ast.Attribute) and call.func.attr == "open" and name != "os.open":
            # path.open("w"); a bare .open() is left alone (QFileDialog.open() opens a dialog).
            return 0 if call.args or _keyword(call, "mode") is not None else None
        return None

    # -- tests/ ---------------------------------------------------------------------

    def test_rules(self) -> None:
        for node, name in self.names():
            if name.startswith("signal.") and name.split(".")[1] not in WINDOWS_SIGNALS:
                self.add(node, "signal Windows lacks", f"{name} (Process.kill() kills anywhere)")
        for call, name in self.calls():
            if name == "pytest.mark.skipif" and _keyword(call, "reason") is None:
                self.add(call, "skip without a reason", "pytest.mark.skipif(…) needs reason=")
            elif (
                name in ("pytest.skip", "pytest.importorskip")
                and not (call.args[1:] if name == "pytest.importorskip" else call.args)
                and _keyword(call, "reason") is None
            ):
                self.add(call, "skip without a reason", f"{name}() says why")
