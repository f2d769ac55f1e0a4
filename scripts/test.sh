#!/usr/bin/env bash
# The one test command: installs everything the test-suite needs, then runs all of it.
#
#   bash scripts/test.sh            (what .ci/run calls; works on a fresh Debian machine)
#
# Steps: Debian chromium + graphviz (skipped when present), torch==2.13.0 and nstviz with its
# test extras (this builds the viewer bundle), the JS deps and JS tests, ruff, then pytest
# (unit, capture, HTML/CLI, notebook and real-browser tests). Exits non-zero on any failure.
# pytest runs cold: TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR and XDG_CACHE_HOME point at new empty
# folders (every run is a first run on a fresh machine), skips are listed (-rs) and any skip not
# declared in tests/expected_skips.txt fails the run (NSTVIZ_STRICT_SKIPS=1, see tests/conftest.py).
# pytest runs one worker per core (-n auto --dist loadfile). Extra arguments go to pytest, e.g.
# `bash scripts/test.sh -k html`, or `-n 0` for one process.
set -euo pipefail

cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
export DEBIAN_FRONTEND=noninteractive
start=$(date +%s)
step() { printf '\n==> %s [%ss]\n' "$*" "$(( $(date +%s) - start ))"; }

step "system packages: chromium, graphviz"
if command -v chromium >/dev/null && command -v dot >/dev/null; then
    echo "chromium and dot already installed"
else
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends chromium graphviz >/dev/null
fi

step "JS dependencies (npm ci)"
npm ci --prefix js --no-audit --no-fund

step "Python: torch==2.13.0 and nstviz[test] (builds the viewer bundle)"
"$PYTHON" -m pip install -q -r requirements-dev.txt

step "JS tests (npm test)"
npm test --prefix js

step "ruff check"
"$PYTHON" -m ruff check .

step "pytest (everything, browser and notebook tests included; empty caches)"
log="$(mktemp)"
caches="$(mktemp -d)"
trap 'rm -rf "$log" "$caches"' EXIT
mkdir -p "$caches/inductor" "$caches/triton" "$caches/xdg"
export TORCHINDUCTOR_CACHE_DIR="$caches/inductor" TRITON_CACHE_DIR="$caches/triton" XDG_CACHE_HOME="$caches/xdg"
export NSTVIZ_STRICT_SKIPS=1
echo "caches: $caches (empty)"
set +e
# One worker per core (pytest-xdist); a test file stays on one worker, so its module fixtures
# (JupyterLab servers, Chromium, the corpus's captured Reports) are made once.
"$PYTHON" -m pytest -q -rs -p no:cacheprovider --durations=15 -n auto --dist loadfile "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# Whatever the interpreter prints while shutting down, end with pytest's closing line.
closing="$(grep -E '^=* ?[0-9]+ (passed|failed|error|skipped|deselected)|no tests ran' "$log" | tail -n 1)"
if [ -n "$closing" ]; then printf '%s\n' "$closing"; fi
exit "$status"
