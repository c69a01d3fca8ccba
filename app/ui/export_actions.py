"""The File menu's Export conversation…, Export all conversations…, Import… and Import as
a copy…: a file dialog, then the work runs off the GUI thread (`ChatService.exports`).

What happened comes back as the service's events: a notice when done, an error in
plain words, and after an import the new conversations in the sidebar.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox, QWidget

from app.core.platform import portable_file_name
from app.store.export_file import ExportFormat
from app.ui.confirm import ask_to_confirm

if TYPE_CHECKING:
    from app.chat.service import ChatService
    from app.ui.controller import ChatController

JSON_FILTER = "JSON, complete: can be imported back (*.json)"
MARKDOWN_FILTER = "Markdown, for reading (*.md)"
IMPORT_FILTER = "Cairn exports (*.json)"
_FORMATS = {
    JSON_FILTER: (ExportFormat.JSON, "json"),
    MARKDOWN_FILTER: (ExportFormat.MARKDOWN, "md"),
}


class ExportActions(QObject):
    """The four actions and the file dialog open now, if any.

    Attributes:
        export_action, export_all_action, import_action, import_copy_action: for the menu.
        dialog: the file dialog on screen, or None.
        replace_box: the "Replace?" question on screen, or None.
        native_dialogs: use the system's file dialog (tests turn it off to drive Qt's own).
        folder: where the next dialog opens (the last folder used).
    """

    def __init__(self, controller: ChatController, window: QWidget) -> None:
        super().__init__(window)
        self.controller = controller
        self._controller = controller
        self._window = window
        self.dialog: QFileDialog | None = None
        self.replace_box: QMessageBox | None = None
        self.native_dialogs = True
        self.folder = Path.home()
        self.export_action = QAction("&Export conversation…", window)
        self.export_action.setToolTip("Save the conversation on screen to a file")
        self.export_action.triggered.connect(lambda: self.export_current())
        self.export_all_action = QAction("Export &all conversations…", window)
        self.export_all_action.setToolTip("Save every conversation to one file, as a backup")
        self.export_all_action.triggered.connect(lambda: self.export_all())
        self.import_action = QAction("&Import…", window)
        self.import_action.setToolTip("Add the conversations of a file made by Export")
        self.import_action.triggered.connect(lambda: self.import_file())
        self.import_copy_action = QAction("Import as a &copy…", window)
        self.import_copy_action.setToolTip(
            "Add conversations that are already in Cairn again, under new names"
        )
        self.import_copy_action.triggered.connect(lambda: self.import_file(as_copy=True))

    @property
    def _chat(self) -> ChatService:
        """The chat service, looked up when used: built after the first paint (issue 20)."""
        return self._controller.service

    def add_to(self, menu: QMenu) -> None:
        """Put the actions in `menu`; "Export conversation…" is enabled when one is open."""
        for action in (
            self.export_action,
            self.export_all_action,
            self.import_action,
            self.import_copy_action,
        ):
            menu.addAction(action)
        menu.aboutToShow.connect(self.update_actions)

    def update_actions(self) -> None:
        self.export_action.setEnabled(self._chat.current.state.session is not None)

    # -- exporting ------------------------------------------------------------------------

    def export_current(self) -> QFileDialog | None:
        """Ask where to save the conversation on screen; None when there is none yet."""
        session = self._chat.current.state.session
        if session is None:
            return None
        # A title cut short ends in "…": the file is named by its words, not the mark.
        name = portable_file_name(session.title.rstrip().removesuffix("…"))
        return self._ask_where(f"Export “{session.title}”", name, [session.id])

    def export_all(self) -> QFileDialog:
        """Ask where to save every conversation."""
        return self._ask_where("Export all conversations", "Cairn conversations", None)

    def _ask_where(self, title: str, name: str, session_ids: list[str] | None) -> QFileDialog:
        dialog = self._dialog(title)
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setFileMode(QFileDialog.FileMode.AnyFile)
        # Cairn asks itself ("Replace?"), after the dialog, in the same words everywhere.
        dialog.setOption(QFileDialog.Option.DontConfirmOverwrite, True)
        dialog.setNameFilters([JSON_FILTER, MARKDOWN_FILTER])
        dialog.setDefaultSuffix("json")
        dialog.filterSelected.connect(lambda chosen: dialog.setDefaultSuffix(_FORMATS[chosen][1]))
        dialog.selectFile(name)
        dialog.fileSelected.connect(
            lambda path: self._export_to(Path(path), dialog.selectedNameFilter(), session_ids)
        )
        dialog.open()
        return dialog

    def _export_to(self, path: Path, name_filter: str, session_ids: list[str] | None) -> None:
        self.folder = path.parent
        fmt = _FORMATS.get(name_filter, (ExportFormat.JSON, "json"))[0]
        if path.suffix.lower() in (".md", ".markdown"):
            fmt = ExportFormat.MARKDOWN
        exports = self._chat.exports
        if not path.is_file():
            exports.export(path, fmt, session_ids)  # a device or folder is refused in words
            return
        self.replace_box = ask_to_confirm(
            self._window,
            title="Replace?",
            text=f"“{path.name}” already exists. Replace it?",
            detail=f"It is in {path.parent}. Replacing it writes the export in its place; "
            "what the file holds now is lost.",
            action="Replace",
            on_confirm=lambda: exports.export(path, fmt, session_ids, replace=True),
            closed=lambda: setattr(self, "replace_box", None),
        )

    # -- importing ------------------------------------------------------------------------

    def import_file(self, *, as_copy: bool = False) -> QFileDialog:
        """Ask which export to import (`as_copy`: under new ids, titles ending in (copy))."""
        dialog = self._dialog("Import as a copy" if as_copy else "Import conversations")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptOpen)
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.setNameFilters([IMPORT_FILTER, "All files (*)"])
        dialog.fileSelected.connect(lambda path: self._import_from(Path(path), as_copy))
        dialog.open()
        return dialog

    def _import_from(self, path: Path, as_copy: bool) -> None:
        self.folder = path.parent
        self._chat.exports.import_file(path, as_copy=as_copy)

    def _dialog(self, title: str) -> QFileDialog:
        if self.dialog is not None:
            self.dialog.close()
        dialog = QFileDialog(self._window, title, str(self.folder))
        if not self.native_dialogs:
            dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        dialog.finished.connect(lambda _result: self._closed(dialog))
        self.dialog = dialog
        return dialog

    def _closed(self, dialog: QFileDialog) -> None:
        if self.dialog is dialog:
            self.dialog = None
        dialog.deleteLater()
