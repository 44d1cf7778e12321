#!/usr/bin/env bash
# The README's first command's install (the quick start, less the demo), into a fresh venv made by a Python whose
# venv brings pip 23.0.1, the oldest pip the quick start supports: Debian 12's own python3. Run by .ci/run, so a
# quick start that no longer installs there (its venv's pip upgraded first, --upgrade-deps, or a dependency that
# needs more) fails CI. QUICKSTART_PYTHON names another interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${QUICKSTART_PYTHON:-/usr/bin/python3}
[ -x "$py" ] || { echo "check_quickstart_install: no $py here — set QUICKSTART_PYTHON to a Python whose venv brings pip < 23.1"; exit 1; }
bundled=$("$py" -c "import ensurepip; print(ensurepip.version())") || { echo "check_quickstart_install: $py has no ensurepip (Debian: apt-get install python3-venv)"; exit 1; }
"$py" - "$bundled" <<'PY' || { echo "check_quickstart_install: $py's venv brings pip $bundled, not an old one (< 23.1) — set QUICKSTART_PYTHON"; exit 1; }
import sys
major, minor = (int(x) for x in sys.argv[1].split(".")[:2])
sys.exit(0 if (major, minor) < (23, 1) else 1)
PY
cmd=$(grep -m1 '^python3 -m venv' README.md) || { echo "check_quickstart_install: no quick-start line (python3 -m venv …) in README.md"; exit 1; }
install=${cmd% && .venv/bin/xlsent demo}
[ "$install" != "$cmd" ] || { echo "check_quickstart_install: the README's first command no longer ends in the demo"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
install=${install/#python3 /$py }
install=${install//.venv/$work/venv}
echo "the quick start's install with $py (pip $bundled in a new venv): $install"
eval "$install"
"$work/venv/bin/xlsent" --version
"$work/venv/bin/python" -c "import seqeval, xlsent.evaluation.tagging" && echo "quick start install: ok"
