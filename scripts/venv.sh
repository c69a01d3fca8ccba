# shellcheck shell=bash
# Sourced by scripts/run and scripts/test: the virtual environment and the project install.
# Expects a `say` function and the repository root as the current directory.

# The first of python3, python3.13, python3.12, python3.11 that is 3.11 or newer.
find_python() {
    local candidate
    for candidate in python3 python3.13 python3.12 python3.11; do
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            printf '%s\n' "$candidate"
            return 0
        fi
    done
    return 1
}

ensure_venv() {
    if .venv/bin/python -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        return 0
    fi
    local python
    if ! python="$(find_python)"; then
        say "Cairn needs Python 3.11 or newer (Debian: apt-get install python3 python3-venv)"
        exit 1
    fi
    say "creating .venv with $("$python" --version 2>&1)"
    if ! "$python" -m venv --clear .venv >/dev/null 2>&1; then
        # Debian's python3 has no ensurepip until its -venv package is installed.
        local venv_package
        venv_package="python$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')-venv"
        if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
            say "installing $venv_package"
            DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
                "$venv_package" </dev/null >/dev/null
            "$python" -m venv --clear .venv
        else
            say "can't create .venv; install $venv_package (sudo apt-get install $venv_package)"
            exit 1
        fi
    fi
}

stamp_matches() { # NAME HASH
    [[ -f .venv/.cairn-installed-$1 && "$(<".venv/.cairn-installed-$1")" == "$2" ]]
}

# Installs `.[EXTRAS]` unless a stamp in .venv says this pyproject.toml is installed
# already. A test install (`.[test]`) counts as an app install too.
install_project() { # [EXTRAS]
    local extras="${1:-}" wanted
    wanted="$(sha256sum pyproject.toml | cut -d' ' -f1)"
    if stamp_matches "${extras:-app}" "$wanted" ||
        { [[ -z $extras ]] && stamp_matches test "$wanted"; }; then
        return 0
    fi
    say "installing the project${extras:+ with [$extras]} into .venv" \
        "(new .venv or changed pyproject.toml)"
    PIP_NO_INPUT=1 .venv/bin/python -m pip install --quiet --disable-pip-version-check \
        --editable ".${extras:+[$extras]}" </dev/null
    printf '%s\n' "$wanted" >".venv/.cairn-installed-${extras:-app}"
    if [[ -n $extras ]]; then
        printf '%s\n' "$wanted" >.venv/.cairn-installed-app
    fi
}

