"""The first-run dialog: where to get an API key, check it, keep it in the keyring."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.errors import (
    ApiKeyRejectedError,
    ConnectionFailedError,
    KeyringUnavailableError,
    UserFacingError,
)

KEYS_URL = "https://console.anthropic.com/settings/keys"
# Two sentences for someone who never had one: what it is, and who bills for it.
WHAT_CAIRN_IS = (
    "Cairn lets you talk with Claude, Anthropic's AI, in conversations that never run "
    "out of room: when one gets long, Cairn summarizes its older messages and keeps every "
    "word on this computer. To start, Cairn needs your API key."
)
# The key was refused: said for where the user is (this dialog), not "in Settings".
# "sk-ant-" is written with non-breaking hyphens wherever it is shown: never cut in two.
KEY_NOT_ACCEPTED = (
    "Anthropic did not accept this key. Check that it was copied in full (it starts "
    "with sk\u2011ant\u2011), or create a new one in the Anthropic Console, then try again."
)
WHAT_A_KEY_IS = (
    "An API key is a private password that lets an app like Cairn talk to Claude for you. "
    "Anthropic bills what you use with it by the amount of text, separately from any "
    "Claude subscription (Pro or Max does not cover it)."
)


class KeyManager(Protocol):
    """What the key and settings dialogs may do with the API key (`app.chat.credentials`)."""

    def api_key(self) -> str | None:
        """The key in use: the one Cairn keeps, else ANTHROPIC_API_KEY."""
        ...

    def stored_key(self) -> str | None:
        """The key Cairn keeps, if any (not the environment's)."""
        ...

    @property
    def persistent(self) -> bool:
        """False while the key is kept in memory for this session only."""
        ...

    @property
    def env_key_present(self) -> bool:
        """ANTHROPIC_API_KEY is set."""
        ...

    def save(self, key: str, *, session_only: bool = False) -> None:
        """Keep the key; raises `KeyringUnavailableError` when no password store works."""
        ...

    def remove(self) -> None:
        """Forget the key; raises `KeyringUnavailableError` when the store refused."""
        ...

    def check(self, key: str, done: Callable[[UserFacingError | None], None]) -> None:
        """Ask the server whether `key` works, in the background; `done` says."""
        ...


class ApiKeyDialog(QDialog):
    """Asks for an API key, checks it against the API, and stores it.

    Attributes:
        api_key: the accepted key once the dialog is accepted.
        persistent: False when the key is kept for this session only.
    """

    def __init__(
        self, keys: KeyManager, parent: QWidget | None = None, *, first_run: bool = True
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Connect Cairn to Claude" if first_run else "Change API key")
        self.setModal(True)
        self.setMinimumWidth(520)
        self._keys = keys
        self._checking = False
        self.api_key: str | None = None
        self.persistent = True

        heading = QLabel("Welcome to Cairn" if first_run else "Your Anthropic API key", self)
        font = heading.font()
        font.setPointSizeF(font.pointSizeF() * 1.35)
        font.setBold(True)
        heading.setFont(font)
        welcome = f"{WHAT_CAIRN_IS}<br><br>" if first_run else ""
        intro = QLabel(
            f"{welcome}{WHAT_A_KEY_IS}<br><br>"
            f'You can create one in the <a href="{KEYS_URL}">Anthropic Console</a> '
            "under <b>API keys</b> — it starts with "
            "<tt>sk\u2011ant\u2011</tt>.<br><br>"
            "Cairn keeps it in your system's password store, never in a file.",
            self,
        )
        intro.setWordWrap(True)
        intro.setOpenExternalLinks(True)
        intro.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.intro_label = intro

        self.key_edit = QLineEdit(self)
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText("Paste your API key here")
        self.key_edit.setAccessibleName("API key")
        self.key_edit.setMinimumWidth(420)
        self.show_button = QPushButton("Show", self)
        self.show_button.setCheckable(True)
        self.show_button.setAccessibleName("Show key")
        self.show_button.toggled.connect(self._toggle_reveal)

        self.status_label = QLabel(self)
        self.status_label.setWordWrap(True)
        self.status_label.setAccessibleName("Status")
        self.status_label.hide()

        self.buttons = QDialogButtonBox(self)
        self.check_button = self.buttons.addButton(
            "Check and save", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.check_button.setDefault(True)
        self.save_unchecked_button = self.buttons.addButton(
            "Save without checking", QDialogButtonBox.ButtonRole.ActionRole
        )
        self.save_unchecked_button.hide()
        self.session_only_button = self.buttons.addButton(
            "Use for this session only", QDialogButtonBox.ButtonRole.ActionRole
        )
        self.session_only_button.hide()
        self.cancel_button = self.buttons.addButton(
            "Not now" if first_run else "Cancel", QDialogButtonBox.ButtonRole.RejectRole
        )
        self.check_button.clicked.connect(self._start_check)
        self.save_unchecked_button.clicked.connect(self._save_current)
        self.session_only_button.clicked.connect(self._use_for_session)
        self.cancel_button.clicked.connect(self.reject)

        row = QWidget(self)
        row_layout = QHBoxLayout(row)
        row_layout.setContentsMargins(0, 0, 0, 0)
        row_layout.addWidget(self.key_edit, 1)
        row_layout.addWidget(self.show_button)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 20, 24, 16)
        layout.setSpacing(12)
        layout.addWidget(heading)
        layout.addWidget(intro)
        layout.addWidget(row)
        layout.addWidget(self.status_label)
        layout.addStretch(1)
        layout.addWidget(self.buttons)
        self.key_edit.textChanged.connect(self._key_changed)
        self._key_changed()

    # -- state -----------------------------------------------------------------

    def _toggle_reveal(self, shown: bool) -> None:
        self.key_edit.setEchoMode(
            QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password
        )
        self.show_button.setText("Hide" if shown else "Show")

    def _key_changed(self) -> None:
        self.check_button.setEnabled(bool(self.key_edit.text().strip()) and not self._checking)
        self.save_unchecked_button.hide()
        self.session_only_button.hide()

    def _set_busy(self, busy: bool) -> None:
        self.key_edit.setEnabled(not busy)
        self.check_button.setEnabled(not busy and bool(self.key_edit.text().strip()))

    def _show_status(self, text: str, *, problem: bool) -> None:
        prefix = "⚠ " if problem else ""
        self.status_label.setText(prefix + text)
        self.status_label.show()
        # The words take room: the dialog grows to fit them, so the lines above are not
        # squeezed and cut ("sk-ant-" was, at 800×600 — issue 23).
        layout = self.layout()
        if layout is not None and layout.hasHeightForWidth():
            needed = layout.totalHeightForWidth(self.width())
            if needed > self.height():
                self.resize(self.width(), needed)

    # -- actions ---------------------------------------------------------------

    def _start_check(self) -> None:
        key = self.key_edit.text().strip()
        if not key or self._checking:
            return
        self._show_status("Checking your key with Anthropic…", problem=False)
        self._checking = True
        self._set_busy(True)
        self._keys.check(key, lambda error: self._checked(key, error))

    def _checked(self, key: str, error: UserFacingError | None) -> None:
        self._checking = False
        if not self.isVisible():
            return  # closed while the check ran
        self._set_busy(False)
        if error is None:
            self._check_passed(key)
        else:
            self._check_failed(error)

    def _check_failed(self, error: UserFacingError) -> None:
        said = KEY_NOT_ACCEPTED if isinstance(error, ApiKeyRejectedError) else error.message
        self._show_status(said, problem=True)
        if isinstance(error, ConnectionFailedError):
            self.save_unchecked_button.show()

    def _check_passed(self, key: str) -> None:
        self._show_status("Your key works.", problem=False)
        self._store(key)

    def _save_current(self) -> None:
        key = self.key_edit.text().strip()
        if key:
            self._store(key)

    def _store(self, key: str) -> None:
        try:
            self._keys.save(key)
        except KeyringUnavailableError as error:
            self._show_status(error.message, problem=True)
            self.save_unchecked_button.hide()
            self.session_only_button.show()
            self.session_only_button.setFocus()
            return
        except UserFacingError as error:
            self._show_status(error.message, problem=True)
            return
        self.api_key = key
        self.persistent = True
        self.accept()

    def _use_for_session(self) -> None:
        key = self.key_edit.text().strip()
        if not key:
            return
        try:
            self._keys.save(key, session_only=True)
        except UserFacingError as error:
            self._show_status(error.message, problem=True)
            return
        self.api_key = key
        self.persistent = False
        self.accept()
