#!/usr/bin/env bash
# The Python SDK's checks, as `npm run test:python` runs them: the venv made or updated, then
# ruff (lint and format), mypy --strict, and pytest against a service the tests start.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-venv.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
.venv/bin/python -m pytest -q "$@"
