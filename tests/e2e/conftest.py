"""End-to-end tests use the same running-window fixtures as the UI tests."""

from tests.ui.conftest import cairn, open_window, previews, with_key  # noqa: F401  (fixtures)
