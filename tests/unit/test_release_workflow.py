"""The release workflow (.github/workflows/release.yml) passes actionlint, which checks
its syntax, expressions, runner labels, action inputs and, through shellcheck, the
shell of every bash `run:` step. It runs on GitHub's runners only; this is what can be
checked of it here."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
# The test extras install actionlint and shellcheck into the environment's scripts folder.
SCRIPTS = sysconfig.get_path("scripts")

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="actionlint is installed for Linux only (pyproject.toml's test extras): "
    "the workflow is checked once, in the Linux job",
)


def actionlint(workflow: Path) -> subprocess.CompletedProcess[str]:
    program = shutil.which("actionlint", path=SCRIPTS) or shutil.which("actionlint")
    assert program, "actionlint is missing: pip install -e '.[test]'"
    # shellcheck from the same folder, so the run: steps' shell is checked too.
    environment = {**os.environ, "PATH": os.pathsep.join([SCRIPTS, os.environ["PATH"]])}
    return subprocess.run(
        [program, "-no-color", str(workflow)],
        capture_output=True,
        encoding="utf-8",
        env=environment,
        timeout=60,
    )


def test_actionlint_passes_on_the_release_workflow() -> None:
    assert shutil.which("shellcheck", path=SCRIPTS), "shellcheck is missing from the test extras"
    result = actionlint(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("change", "found"),
    [
        # shellcheck through actionlint: an unquoted file name in a bash step.
        (('hdiutil verify "$DMG"', "hdiutil verify $DMG"), "SC2086"),
        (("runner: macos-15-intel", "runner: macos-15-intel-xl"), "runner-label"),
        (("needs.version.outputs.version", "needs.versions.outputs.version"), "needs"),
        (("if: env.MACOS_CERTIFICATE != ''", "if: secrets.MACOS_CERTIFICATE != ''"), "secrets"),
    ],
)
def test_actionlint_would_catch_a_mistake(
    change: tuple[str, str], found: str, tmp_path: Path
) -> None:
    before, after = change
    text = WORKFLOW.read_text(encoding="utf-8")
    assert before in text
    broken = tmp_path / ".github" / "workflows" / "release.yml"
    broken.parent.mkdir(parents=True)
    broken.write_text(text.replace(before, after, 1), encoding="utf-8")

    result = actionlint(broken)

    assert result.returncode == 1 and found in result.stdout, result.stdout


def test_every_system_builds_tests_and_smoke_tests_on_a_tag() -> None:
    text = WORKFLOW.read_text(encoding="utf-8")

    assert re.search(r'^  push:\n    tags: \["v\*"\]$', text, re.MULTILINE)
    for runner in ("ubuntu-24.04", "windows-2022", "macos-15", "macos-15-intel"):
        assert re.search(rf"(runs-on|runner): {re.escape(runner)}$", text, re.MULTILINE), runner
    assert "./scripts/test" in text and "./scripts/package --check" in text
    assert text.count("python -m pytest") == 2  # Windows and macOS (Linux: ./scripts/test)
    # The bundle, then the installed or mounted Cairn, each smoke-tested.
    assert text.count("python scripts/smoke_bundle.py") == 4
    # Signing only where its secrets are.
    for step in re.findall(r"- name: (Sign[^\n]*|Notarize[^\n]*)\n\s+if: ([^\n]+)", text):
        assert "!= ''" in step[1], step
    assert len(re.findall(r"- name: (Sign|Notarize)", text)) == 4
