"""Cairn: a desktop chat client for Claude where a conversation never runs out of room."""

import os

__version__ = "0.1.0"
APP_NAME = "Cairn"

# Cairn uses no pydantic plugin; unless told not to, pydantic looks for plugins among the
# entry points of every installed package when it builds its first model (~25 ms of
# the start). https://docs.pydantic.dev/latest/concepts/plugins/ (PYDANTIC_DISABLE_PLUGINS)
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
