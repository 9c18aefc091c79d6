#!/usr/bin/env bash
# Makes packages/python/.venv: the package as pip installs it, with its test and lint tools
# (pytest, ruff, mypy) and the optional opentelemetry-api. Run it again after changing the
# package: the dependencies are installed once (again when pyproject.toml changes), the package
# itself every time.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=.venv/.installed-from
if [ ! -x .venv/bin/python ] || ! cmp -s pyproject.toml "$stamp"; then
  python3 -m venv .venv
  # --retries 0: where the default index cannot be reached, the configured mirrors answer at once.
  .venv/bin/python -m pip install --quiet --retries 0 --disable-pip-version-check ".[dev]"
  cp pyproject.toml "$stamp"
else
  .venv/bin/python -m pip install --quiet --no-deps --no-build-isolation --force-reinstall --disable-pip-version-check .
fi
