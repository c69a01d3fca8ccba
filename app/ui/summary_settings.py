"""Settings → Summaries: one choice and one slider a person can answer, every
`SummarizationConfig` setting under "Advanced".

The choice ("Summarize older messages: automatically / ask me first / never") edits
`auto_summarize` and `preview_automatic`; the slider ("Keep more of the conversation
word for word ↔ Summarize sooner") moves the trigger level with its reset and target
levels. Under Advanced, the page is a list of field descriptions (`FIELDS`): each
says which setting it edits, in what words, and with which kind of control. What is
valid is decided by the config's own validators; their sentences are shown under the
field they concern.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pydantic import ValidationError
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSlider,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.summarization_config import (
    MAX_DEPTH_LIMIT,
    MAX_MESSAGE_SETTING,
    MAX_SUMMARY_TOKENS,
    MIN_SUMMARY_TOKENS,
    SummarizationConfig,
)
from app.core.summary import SummaryMode
from app.ui.forms import hint

MODES: Final[tuple[tuple[SummaryMode, str, str], ...]] = (
    (
        SummaryMode.HYBRID,
        "With Claude, checked by rules (recommended)",
        "Claude writes the summary; offline rules make sure names, numbers and dates are "
        "kept. If Claude can't write it, Cairn makes a simpler one itself.",
    ),
    (
        SummaryMode.LLM,
        "With Claude",
        "Claude writes the summary. It costs a small request to Claude each time.",
    ),
    (
        SummaryMode.RULE,
        "Offline rules (free, less detailed)",
        "Cairn picks out decisions, to-dos, questions, names and numbers by itself, "
        "without asking Claude. Free and private, but less detailed.",
    ),
)

# "Summarize older messages:" — (words, auto_summarize, preview_automatic or None: as it was).
WHEN_CHOICES: Final[tuple[tuple[str, bool, bool | None], ...]] = (
    ("Automatically", True, False),
    ("Ask me first (show a preview)", True, True),
    ("Never — only when I press Summarize now", False, None),
)
WHEN_HINT: Final = (
    "A message that would not fit at all is summarized at once, whatever you choose, "
    "so the conversation never runs out of room. Nothing is deleted."
)
# The slider's stops, from "keep more word for word" to "summarize sooner": the level
# that starts a summary; the level it waits below before the next one, and the level a
# summary brings the conversation down to, follow 10 and 20 points under it (the
# defaults' 80 / 70 / 60).
SOONER_STOPS: Final = (0.95, 0.9, 0.85, 0.8, 0.7, 0.6)
_RESET_BELOW: Final = 0.1
_TARGET_BELOW: Final = 0.2
KEEP_MORE_WORDS: Final = "Keep more of the conversation word for word"
SOONER_WORDS: Final = "Summarize sooner"

# A sentence the config's cross-field check says (it has no field of its own) belongs
# under the field it starts by naming.
_SENTENCE_OWNERS: Final = (
    ("The reset level", "reset_ratio"),
    ("The target level", "target_ratio"),
    ("The minimum number of messages", "min_messages"),
    ("The message-count trigger", "message_trigger"),
)


@dataclass(frozen=True)
class Field:
    """One setting on the page.

    Attributes:
        name: the `SummarizationConfig` field.
        kind: "switch", "percent", "count", "optional_count", "mode", "models" or "text".
        label: what it is, in plain words (for a switch, the switch's own text).
        suffix: words after the number ("% full", "messages").
        minimum, maximum: a number's bounds (the validators have the last word).
        hint: a sentence under the control, when the label is not enough.
    """

    name: str
    kind: str
    label: str
    suffix: str = ""
    minimum: int = 0
    maximum: int = MAX_MESSAGE_SETTING
    hint: str = ""


FIELDS: Final[tuple[Field, ...]] = (
    Field(
        "auto_summarize",
        "switch",
        "Summarize older messages automatically",
    ),
    Field(
        "preview_automatic",
        "switch",
        "Show me a preview before automatic summaries too",
    ),
    Field(
        "condense_while_it_fits",
        "switch",
        "Condense early, even while the whole conversation still fits",
        hint="Off: Claude reads every message word for word until the conversation no "
        "longer fits, then older ones are condensed (your message may wait a moment).",
    ),
    Field(
        "trigger_ratio",
        "percent",
        "Summarize older messages when the conversation is",
        "% full",
        5,
        99,
    ),
    # Shown once the settings have it (the engine's "summarize only what must go").
    Field(
        "target_ratio",
        "percent",
        "Summarize just enough to bring it down to",
        "% full",
        5,
        99,
        hint="Older messages are summarized only as far as needed; the rest stay as they are.",
    ),
    Field(
        "reset_ratio",
        "percent",
        "Before summarizing again, wait until it is below",
        "% full",
        5,
        99,
        hint="So summaries don't follow each other after every message.",
    ),
    Field("mode", "mode", "Who writes summaries"),
    Field(
        "summarizer_models",
        "models",
        "Models that write summaries",
        hint="Tried in this order, separated by commas. The first is usually the "
        "cheapest that does the job well.",
    ),
    Field("preserve_recent", "count", "Always keep the newest", "messages as they are", 2),
    Field("min_messages", "count", "Wait for at least", "messages before summarizing", 0),
    Field(
        "cooldown_messages",
        "count",
        "After a summary, wait for",
        "new messages before the next one",
        0,
    ),
    Field(
        "max_summary_tokens",
        "count",
        "Longest summary",
        "tokens",
        MIN_SUMMARY_TOKENS,
        MAX_SUMMARY_TOKENS,
    ),
    Field(
        "target_compression",
        "percent",
        "A summary aims for",
        "% of the length of what it summarizes",
        1,
        99,
    ),
    Field(
        "message_trigger",
        "optional_count",
        "Also summarize when there are more than",
        "messages",
        1,
    ),
    Field(
        "force_refresh_after_messages",
        "optional_count",
        "Refresh the summary after every",
        "new messages",
        1,
    ),
    Field(
        "max_depth", "count", "Summaries of summaries, at most", "levels deep", 1, MAX_DEPTH_LIMIT
    ),
    Field(
        "abort_on_failure",
        "switch",
        "If Claude can't write a summary, change nothing",
        hint="Otherwise Cairn makes a simpler summary itself, marked as such.",
    ),
    Field(
        "prompt_template",
        "text",
        "Custom instructions for the summary writer",
        hint="Advanced. Leave empty to use Cairn's own. Must contain {transcript}; may "
        "use {instructions} and {target_tokens}.",
    ),
)


class _Control:
    """A field's widget, read and written as the config's value."""

    def __init__(
        self, widget: QWidget, read: Callable[[], Any], write: Callable[[Any], None]
    ) -> None:
        self.widget = widget
        self.read = read
        self.write = write


class SummarySettingsPage(QWidget):
    """Edits a copy of the summarization settings; `config()` validates them.

    Attributes:
        controls: each field's widget, by field name (for tests); `auto_summarize` and
            `preview_automatic` share the `when` choice.
        when: "Summarize older messages: automatically / ask me first / never".
        sooner: the slider from "keep more word for word" to "summarize sooner".
        advanced_button: shows and hides every setting (`advanced`).
    """

    def __init__(self, config: SummarizationConfig, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._original = config
        self._controls: dict[str, _Control] = {}
        self._errors: dict[str, QLabel] = {}
        self.controls: dict[str, QWidget] = {}

        form_host = QWidget(self)
        form = QFormLayout(form_host)
        # Each label on its own line, then its control: plain-words labels are long.
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapAllRows)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setVerticalSpacing(6)
        present = set(SummarizationConfig.model_fields)
        simple = self._simple_choices()
        for field in FIELDS:
            if field.name not in present:
                continue  # a field this Cairn's settings do not have
            if field.name in self._controls:
                continue  # on the simple part of the page (`when`)
            control = self._make(field)
            self._controls[field.name] = control
            self.controls[field.name] = control.widget
            error = QLabel(form_host)
            error.setObjectName("fieldError")
            error.setWordWrap(True)
            _as_error(error)
            error.hide()
            self._errors[field.name] = error
            column = QVBoxLayout()
            column.setSpacing(2)
            column.setContentsMargins(0, 0, 0, 8)
            column.addWidget(control.widget)
            if field.hint:
                column.addWidget(hint(field.hint, form_host))
            if field.name == "mode":
                column.addWidget(self._mode_help)
            column.addWidget(error)
            label = "" if field.kind == "switch" else field.label
            form.addRow(label, column)

        self.general_error = QLabel(self)
        self.general_error.setWordWrap(True)
        _as_error(self.general_error)
        self.general_error.hide()
        self.restore_button = QPushButton("Restore defaults", self)
        self.restore_button.setToolTip("Put every summary setting back as Cairn comes")
        self.restore_button.clicked.connect(self.restore_defaults)
        restore_row = QHBoxLayout()
        restore_row.addStretch(1)
        restore_row.addWidget(self.restore_button)

        self.advanced_button = QToolButton(self)
        self.advanced_button.setCheckable(True)
        self.advanced_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.advanced_button.setArrowType(Qt.ArrowType.RightArrow)
        self.advanced_button.setText("Advanced")
        self.advanced_button.setAccessibleName("Advanced: every summary setting")
        self.advanced_button.setAutoRaise(True)
        self.advanced_button.toggled.connect(self._show_advanced)
        self.advanced = QScrollArea(self)
        self.advanced.setWidgetResizable(True)
        self.advanced.setFrameShape(QScrollArea.Shape.NoFrame)
        self.advanced.setWidget(form_host)
        self.advanced.hide()
        intro = QLabel(
            "When a conversation gets long, Cairn summarizes its older messages so it "
            "never runs out of room. Nothing is deleted: the originals stay on this "
            "computer.",
            self,
        )
        intro.setWordWrap(True)
        self._page_layout = layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 8, 6, 4)
        layout.addWidget(intro)
        layout.addSpacing(6)
        layout.addLayout(simple)
        layout.addWidget(self.advanced_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.advanced, 1)
        self._filler = layout.count()
        layout.addStretch(1)
        layout.addWidget(self.general_error)
        layout.addLayout(restore_row)
        self.set_config(config)

    # --- building

    def _simple_choices(self) -> QVBoxLayout:
        """The choice of when, and the slider: what most people ever need here."""
        column = QVBoxLayout()
        column.setSpacing(4)
        self.when = QComboBox(self)
        self.when.setAccessibleName("Summarize older messages")
        for words, _auto, _preview in WHEN_CHOICES:
            self.when.addItem(words)
        self.when.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        when_label = QLabel("Summarize older messages:", self)
        when_label.setBuddy(self.when)
        when_row = QHBoxLayout()
        when_row.addWidget(when_label)
        when_row.addWidget(self.when)
        when_row.addStretch(1)
        column.addLayout(when_row)
        column.addWidget(hint(WHEN_HINT, self))
        column.addSpacing(8)
        # Both settings are read from the one choice; "never" keeps the preview as it was.
        self._preview_kept = False

        def write_auto(value: Any) -> None:
            self._set_when(bool(value), self._preview_kept)

        def write_preview(value: Any) -> None:
            self._preview_kept = bool(value)
            self._set_when(self.when.currentIndex() != len(WHEN_CHOICES) - 1, bool(value))

        def read_preview() -> bool:
            preview = WHEN_CHOICES[self.when.currentIndex()][2]
            return self._preview_kept if preview is None else preview

        self.when.currentIndexChanged.connect(self._when_chosen)
        self._controls["auto_summarize"] = _Control(
            self.when, lambda: WHEN_CHOICES[self.when.currentIndex()][1], write_auto
        )
        self._controls["preview_automatic"] = _Control(self.when, read_preview, write_preview)
        self.controls["auto_summarize"] = self.controls["preview_automatic"] = self.when

        self.sooner = QSlider(Qt.Orientation.Horizontal, self)
        self.sooner.setRange(0, len(SOONER_STOPS) - 1)
        self.sooner.setPageStep(1)
        self.sooner.setTickPosition(QSlider.TickPosition.TicksBelow)
        self.sooner.setAccessibleName(f"{KEEP_MORE_WORDS}, or {SOONER_WORDS.lower()}")
        self.sooner.valueChanged.connect(self._sooner_moved)
        ends = QHBoxLayout()
        for words, align in (
            (KEEP_MORE_WORDS, Qt.AlignmentFlag.AlignLeft),
            (SOONER_WORDS, Qt.AlignmentFlag.AlignRight),
        ):
            end = QLabel(words, self)
            end.setAlignment(align)
            end.setWordWrap(True)
            ends.addWidget(end, 1)
        column.addWidget(self.sooner)
        column.addLayout(ends)
        column.addSpacing(10)
        return column

    def _when_chosen(self, index: int) -> None:
        preview = WHEN_CHOICES[index][2]
        if preview is not None:
            self._preview_kept = preview

    def _set_when(self, auto: bool, preview: bool) -> None:
        index = len(WHEN_CHOICES) - 1 if not auto else (1 if preview else 0)
        self.when.setCurrentIndex(index)

    def _sooner_moved(self, stop: int) -> None:
        """The slider moved: the trigger level, and the two levels that follow it."""
        trigger = SOONER_STOPS[stop]
        for name, value in (
            ("trigger_ratio", trigger),
            ("reset_ratio", trigger - _RESET_BELOW),
            ("target_ratio", trigger - _TARGET_BELOW),
        ):
            control = self._controls.get(name)
            if control is not None:
                control.widget.blockSignals(True)
                control.write(round(value, 2))
                control.widget.blockSignals(False)

    def _trigger_edited(self, percent: int) -> None:
        """The trigger level typed under Advanced: the slider goes to the nearest stop."""
        nearest = min(range(len(SOONER_STOPS)), key=lambda i: abs(SOONER_STOPS[i] * 100 - percent))
        self.sooner.blockSignals(True)
        self.sooner.setValue(nearest)
        self.sooner.blockSignals(False)

    def _show_advanced(self, shown: bool) -> None:
        self.advanced.setVisible(shown)
        self.advanced_button.setArrowType(
            Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        )
        # The stretch below keeps the simple part at the top while Advanced is closed.
        self._page_layout.setStretch(self._filler, 0 if shown else 1)

    def _make(self, field: Field) -> _Control:
        if field.kind == "switch":
            box = QCheckBox(field.label, self)
            return _Control(box, box.isChecked, lambda value: box.setChecked(bool(value)))
        if field.kind == "percent":
            spin = self._spin(field)
            if field.name == "trigger_ratio":
                spin.valueChanged.connect(self._trigger_edited)
            return _Control(
                spin,
                lambda: spin.value() / 100,
                lambda value: spin.setValue(round(float(value) * 100)),
            )
        if field.kind == "count":
            spin = self._spin(field)
            return _Control(spin, spin.value, lambda value: spin.setValue(int(value)))
        if field.kind == "optional_count":
            return self._optional_count(field)
        if field.kind == "mode":
            return self._mode(field)
        if field.kind == "models":
            edit = QLineEdit(self)
            edit.setAccessibleName(field.label)
            return _Control(
                edit,
                lambda: [name.strip() for name in edit.text().split(",")],
                lambda value: edit.setText(", ".join(value)),
            )
        if field.kind == "text":
            text = QPlainTextEdit(self)
            text.setAccessibleName(field.label)
            text.setPlaceholderText("Cairn's own instructions")
            text.setFixedHeight(text.fontMetrics().lineSpacing() * 4 + 12)
            return _Control(
                text,
                lambda: text.toPlainText().strip() or None,
                lambda value: text.setPlainText(value or ""),
            )
        raise ValueError(f"unknown field kind {field.kind!r}")

    def _spin(self, field: Field) -> QSpinBox:
        spin = QSpinBox(self)
        spin.setRange(field.minimum, field.maximum)
        spin.setSuffix(f" {field.suffix}" if field.suffix else "")
        spin.setAccessibleName(f"{field.label} … {field.suffix}".strip(" …"))
        spin.setGroupSeparatorShown(True)
        spin.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        return spin

    def _optional_count(self, field: Field) -> _Control:
        row = QWidget(self)
        box = QCheckBox(row)
        box.setAccessibleName(f"{field.label} … {field.suffix}: on")
        spin = self._spin(field)
        spin.setParent(row)
        spin.setEnabled(False)
        box.toggled.connect(spin.setEnabled)
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(box)
        layout.addWidget(spin)
        layout.addStretch(1)

        def write(value: Any) -> None:
            box.setChecked(value is not None)
            if value is not None:
                spin.setValue(int(value))
            elif field.name == "message_trigger":
                spin.setValue(100)  # DESIGN §5's example, offered when switched on

        return _Control(row, lambda: spin.value() if box.isChecked() else None, write)

    def _mode(self, field: Field) -> _Control:
        combo = QComboBox(self)
        combo.setAccessibleName(field.label)
        for mode, label, _help in MODES:
            combo.addItem(label, mode.value)
        self._mode_help = QLabel(self)
        self._mode_help.setWordWrap(True)
        self._mode_help.setForegroundRole(QPalette.ColorRole.PlaceholderText)

        def explain() -> None:
            helps = {mode.value: text for mode, _label, text in MODES}
            self._mode_help.setText(helps.get(str(combo.currentData()), ""))

        combo.currentIndexChanged.connect(explain)
        explain()
        return _Control(
            combo,
            lambda: combo.currentData(),
            lambda value: combo.setCurrentIndex(max(0, combo.findData(str(value)))),
        )

    # --- values

    def set_config(self, config: SummarizationConfig) -> None:
        """Show `config` in the controls (nothing is saved until the dialog is)."""
        values = config.model_dump()
        for name, control in self._controls.items():
            control.write(values[name])
        self._trigger_edited(round(config.trigger_ratio * 100))
        self._show_errors({}, [])

    def restore_defaults(self) -> None:
        self.set_config(SummarizationConfig())

    def values(self) -> dict[str, Any]:
        return {name: control.read() for name, control in self._controls.items()}

    def config(self) -> SummarizationConfig | None:
        """The settings as edited, validated; None when something is wrong (said next to
        the field it concerns)."""
        try:
            config = self._original.with_changes(**self.values())
        except ValidationError as error:
            self._show_errors(*_errors_by_field(error))
            return None
        self._show_errors({}, [])
        return config

    def error_text(self, name: str) -> str:
        """The message shown under field `name` ("" when none)."""
        label = self._errors.get(name)
        return label.text().removeprefix("⚠ ") if label is not None and label.text() else ""

    def _show_errors(self, by_field: dict[str, list[str]], general: Sequence[str]) -> None:
        for name, label in self._errors.items():
            sentences = by_field.get(name, [])
            label.setText("⚠ " + " ".join(sentences) if sentences else "")
            label.setVisible(bool(sentences))
        unplaced = list(general) + [
            sentence
            for name, sentences in by_field.items()
            if name not in self._errors
            for sentence in sentences
        ]
        self.general_error.setText("⚠ " + " ".join(unplaced) if unplaced else "")
        self.general_error.setVisible(bool(unplaced))
        first = next((name for name in self._errors if by_field.get(name)), None)
        if first is not None:
            self.advanced_button.setChecked(True)  # the field it concerns, in sight
            self._controls[first].widget.setFocus(Qt.FocusReason.OtherFocusReason)


def _as_error(label: QLabel) -> None:
    """Red enough to read as a problem, legible on the light and the dark window (the
    gauge's "Full" colours); the ⚠ says it without colour too."""
    dark = label.palette().color(QPalette.ColorRole.Window).lightness() < 128
    label.setStyleSheet(f"color: {'#ff8a8a' if dark else '#b91c1c'};")


def _errors_by_field(error: ValidationError) -> tuple[dict[str, list[str]], list[str]]:
    """The validators' sentences (as `describe_errors` words them), grouped by the field
    each concerns."""
    by_field: dict[str, list[str]] = {}
    general: list[str] = []
    for item in error.errors(include_url=False):
        location = item.get("loc", ())
        sentence = str(item.get("msg", "")).removeprefix("Value error, ")
        name = str(location[0]) if location else ""
        if not name:
            name = next(
                (owner for start, owner in _SENTENCE_OWNERS if sentence.startswith(start)), ""
            )
        target = by_field.setdefault(name, []) if name else general
        if sentence not in target:
            target.append(sentence)
    return by_field, general
