"""Helpers shared by tests of several folders (what a conftest cannot share: plain functions)."""
