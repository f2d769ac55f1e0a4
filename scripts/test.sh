#!/usr/bin/env bash
# The one test command: installs everything the test-suite needs, then runs all of it, the way a
# user installs nstviz: in fresh virtual environments with the newest release of every dependency,
# torch pinned per leg.
#
#   bash scripts/test.sh                      (what .ci/run calls; works on a fresh Debian machine)
#   NSTVIZ_LEGS=torch2.13 bash scripts/test.sh -k html   (one leg; extra arguments go to pytest)
#
# Legs (each its own new venv under a temporary folder, removed at the end):
#   torch2.13   torch==2.13.0 (CPU wheel), newest everything else: the whole suite
#   torch2.14   torch==2.14.1 (pip takes the CUDA build, ~4.4 GB with nvidia packages; runs on CPU):
#               unit, analysis, capture, offline, cli, jupyter, reliability, rewrites, one corpus model
#   ipython8    torch==2.13.0 with IPython 8 and ipykernel 6: the Jupyter tests
# Steps: the venvs are started first, all in the background (the later legs' at a lower CPU priority;
# they finish while the first leg's tests run); meanwhile Debian chromium + graphviz (skipped when
# present), the JS deps, the viewer bundle and the JS tests; then ruff, then pytest per leg.
# pytest runs cold: TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR and XDG_CACHE_HOME point at new empty
# folders for every leg, skips are listed (-rs) and any skip not
# declared in tests/expected_skips.txt fails the run (NSTVIZ_STRICT_SKIPS=1, see tests/conftest.py).
# pytest runs one worker per core (-n auto --dist loadfile), the heaviest files first (tests/conftest.py's
# _HEAVY_FIRST; --no-loadscope-reorder keeps that order). Exits non-zero on any failure; the last
# line is the total over all legs.
set -euo pipefail

cd "$(dirname "$0")/.."
root="$(pwd)"
PYTHON="${PYTHON:-python3}"
LEGS="${NSTVIZ_LEGS:-torch2.13 torch2.14 ipython8}"
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
export DEBIAN_FRONTEND=noninteractive
start=$(date +%s)
step() { printf '\n==> %s [%ss]\n' "$*" "$(( $(date +%s) - start ))"; }

# What each leg installs (besides nstviz[test]) and what it tests.
leg_requirements() {
    case "$1" in
        torch2.13) echo "torch==2.13.0" ;;
        torch2.14) echo "torch==2.14.1" ;;
        ipython8) echo "torch==2.13.0 ipython<9 ipykernel<7" ;;
        *) echo "unknown leg '$1' (NSTVIZ_LEGS takes: torch2.13 torch2.14 ipython8)" >&2; return 2 ;;
    esac
}
leg_tests() {
    case "$1" in
        torch2.13) echo "tests" ;;
        torch2.14) echo "tests/unit tests/analysis tests/capture tests/offline tests/cli tests/jupyter tests/reliability tests/rewrites tests/models/test_corpus_bigbird.py" ;;
        ipython8) echo "tests/jupyter tests/reliability/test_magic_state.py tests/capture/test_exit_clean.py" ;;
    esac
}
for leg in $LEGS; do leg_requirements "$leg" >/dev/null; done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Each venv is new: `pip install` resolves the newest release of every dependency, as for a user.
# The installs skip the build hook's npm step (NSTVIZ_SKIP_JS): the bundle is built once, below, in
# the checkout the editable installs point at.
# pip's own warnings about this machine's local index folders are not ours to show
pip_install() {
    local pip="$1"; shift
    "$pip" install -q "$@" 2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2)
}
make_venv() {
    local leg="$1" venv="$work/venv-$1"
    "$PYTHON" -m venv "$venv" || return 1
    pip_install "$venv/bin/pip" --upgrade pip || return 1
    # --no-compile: pip byte-compiles every file it installs (torch, transformers, nvidia: about 50 s
    # of CPU per venv, most of it for modules no test imports, and the later legs' installs take it
    # from the first leg's tests); Python compiles what is imported instead, once, as it writes the
    # .pyc files (PYTHONDONTWRITEBYTECODE is unset for the venvs' pythons). Same files, same code.
    # shellcheck disable=SC2046
    NSTVIZ_SKIP_JS=1 pip_install "$venv/bin/pip" --no-compile $(leg_requirements "$leg") -e ".[test]" || return 1
    # the modules every test process imports are compiled here (in the background for the later legs)
    env -u PYTHONDONTWRITEBYTECODE "$venv/bin/python" -c "import torch, IPython, ipykernel, transformers, torch._dynamo, torch._inductor.compile_fx, nstviz.api; print('$leg:', 'torch', torch.__version__, '| IPython', IPython.__version__, '| ipykernel', ipykernel.__version__, '| transformers', transformers.__version__)"
}

# Seconds per leg, printed at the end: its venv's install (all run in the background from the start,
# beside the system packages and the JS steps), the wait for it, and its pytest run.
declare -A install_s=() wait_s=() tests_s=()
first=""
for leg in $LEGS; do
    # The first leg's venv is needed first; the later legs' installs run at a lower CPU priority,
    # so they take the core the first install (one process) leaves idle rather than the tests' CPU.
    if [ -z "$first" ]; then first="$leg" niceness=0; else niceness=10; fi
    echo "venv $leg: installing in the background, nice $niceness ($work/install-$leg.log)"
    ( set +e; renice -n "$niceness" -p "$BASHPID" >/dev/null; t0=$(date +%s)
      make_venv "$leg" >"$work/install-$leg.log" 2>&1; rc=$?
      echo "$(( $(date +%s) - t0 ))" >"$work/install-$leg.s"
      echo "install took $(( $(date +%s) - t0 ))s" >>"$work/install-$leg.log"; echo "$rc" >"$work/install-$leg.rc" ) &
done

# Waits for the leg's venv; prints its install log. Fails if the install failed.
wait_for_venv() {
    local leg="$1" t0
    t0=$(date +%s)
    while [ ! -f "$work/install-$leg.rc" ]; do sleep 2; done
    wait_s[$leg]=$(( $(date +%s) - t0 ))
    install_s[$leg]="$(cat "$work/install-$leg.s" 2>/dev/null || echo '?')"
    cat "$work/install-$leg.log"
    if [ "$(cat "$work/install-$leg.rc")" != 0 ]; then echo "leg $leg: installing its venv failed"; return 1; fi
}

step "system packages: chromium, graphviz"
if command -v chromium >/dev/null && command -v dot >/dev/null; then
    echo "chromium and dot already installed"
else
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends chromium graphviz >/dev/null
fi

step "JS dependencies (npm ci) and the viewer bundle"
npm ci --prefix js --no-audit --no-fund
(cd js && node build.mjs)

step "JS tests (npm test)"
npm test --prefix js

step "venv $first: waiting for its install"
wait_for_venv "$first"

step "ruff check"
"$work/venv-$first/bin/python" -m ruff check .

export NSTVIZ_STRICT_SKIPS=1
# One intra-op thread per process: pytest runs one worker per core, and two workers of two OpenMP
# threads each on two cores spin-wait for each other's cores (measured: two corpus tests side by
# side, 96/89 s with torch's default of 2 threads, 86/86 s with 1). Test processes only: the
# product leaves the user's thread count as it is (tests/analysis/test_output_check.py checks).
export OMP_NUM_THREADS=1
passed=0 failed=0 errors=0 skipped=0 status=0
summaries=()
for leg in $LEGS; do
    if [ "$leg" != "$first" ]; then
        step "venv $leg: waiting for its install"
        if ! wait_for_venv "$leg"; then
            status=1 failed=$((failed + 1))
            summaries+=("$leg: install failed")
            continue
        fi
    fi
    caches="$work/caches-$leg"
    mkdir -p "$caches/inductor" "$caches/triton" "$caches/xdg"
    log="$work/pytest-$leg.log"
    step "pytest, leg $leg: $(leg_tests "$leg") (empty caches: $caches)"
    set +e
    t0=$(date +%s)
    # shellcheck disable=SC2046
    TORCHINDUCTOR_CACHE_DIR="$caches/inductor" TRITON_CACHE_DIR="$caches/triton" XDG_CACHE_HOME="$caches/xdg" \
        env -u PYTHONDONTWRITEBYTECODE "$work/venv-$leg/bin/python" -m pytest -q -rfEs -p no:cacheprovider --durations=15 -n auto --dist loadfile --no-loadscope-reorder \
        $(leg_tests "$leg") "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    tests_s[$leg]=$(( $(date +%s) - t0 ))
    set -e
    # pytest's "no tests ran" (5) is a failure, except when the caller's own arguments selected nothing
    if [ "$rc" = 5 ] && [ "$#" -gt 0 ]; then rc=0; fi
    if [ "$rc" != 0 ]; then status=1; fi
    closing="$(grep -E '^=* ?[0-9]+ (passed|failed|error|skipped|deselected)|no tests ran' "$log" | tail -n 1 || true)"
    summaries+=("$leg: ${closing:-no closing line} (exit $rc)")
    for kind in passed failed error skipped; do
        n="$(printf '%s\n' "$closing" | grep -oE "[0-9]+ $kind" | grep -oE '^[0-9]+' || echo 0)"
        case "$kind" in
            passed) passed=$((passed + n)) ;; failed) failed=$((failed + n)) ;;
            error) errors=$((errors + n)) ;; skipped) skipped=$((skipped + n)) ;;
        esac
    done
    if [ "$rc" != 0 ] && [ -z "$closing" ]; then failed=$((failed + 1)); fi
done

step "done"
# every failing test again, by leg, next to the totals (the end of a long log is what gets read)
for leg in $LEGS; do
    grep -E '^(FAILED|ERROR) ' "$work/pytest-$leg.log" 2>/dev/null | sed "s/^/$leg: /" || true
done
printf '%s\n' "${summaries[@]}"
for leg in $LEGS; do
    echo "time $leg: install ${install_s[$leg]:-?}s in the background, waited ${wait_s[$leg]:-?}s for it, tests ${tests_s[$leg]:-?}s"
done
echo "time total: $(( $(date +%s) - start ))s"
# The plain closing line over all legs (errors count as failures).
echo "$passed passed, $((failed + errors)) failed, $skipped skipped"
exit "$status"
