"""Cairn: a desktop chat client for Claude where a conversation never runs out of room."""

__version__ = "0.1.0"
APP_NAME = "Cairn"
