"""The chat service: each open conversation's state and its use-cases, without Qt.

`app.ui` shows what this package owns and turns user actions into its method
calls; nothing here imports PySide6 (an import-linter contract checks it).
"""
