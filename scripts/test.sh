#!/usr/bin/env bash
# The tests of every module of the repository: the SDK and the nested
# modules go.work joins to it. It first installs what the tests need and
# the machine lacks (scripts/install-deps.sh), then runs them with the race
# detector. Extra arguments go to go test, e.g. scripts/test.sh -run Webhook.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
exec go test -race -count=1 "$@" github.com/invoicing-api/invoicing-go/...
