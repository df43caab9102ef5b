#!/usr/bin/env bash
# The tests of every module of the repository: the SDK and the nested
# modules go.work joins to it. It first installs what the tests need and
# the machine lacks (scripts/install-deps.sh), then runs them in three
# steps:
#
#  1. every test of every module with the race detector, -short (pgmirror's
#     fault proofs and its PostgreSQL outage at a reduced size), four tests
#     of a package at once (pgmirror's, each in a schema of its own, mostly
#     wait on their replicas and the fake service);
#  2. the SDK's root and webhooks packages again, without the race detector
#     and without -short: their allocation counts (which skip under -race,
#     as it makes sync.Pool drop items) and a list's memory over 20,000
#     records (which -short leaves out) are checked here;
#  3. pgmirror's fault proofs and outage test at full size, without the
#     race detector (their replicas are separate processes, built without
#     it anyway); then, alone, the lag of a default mirror under a burst of
#     writes (a figure the race detector's slowdown, or the proofs' load
#     beside it, would decide); and the fault proofs again at the reduced
#     size, every table hash-partitioned by business into 8 partitions
#     (PGMIRROR_TEST_PARTITIONS).
#
# Extra arguments go to the first step's go test, and skip the others, e.g.
# scripts/test.sh -run Webhook.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
go test -race -count=1 -short -parallel 4 "$@" github.com/invoicing-api/invoicing-go/...
if [ $# -eq 0 ]; then
  go test -count=1 github.com/invoicing-api/invoicing-go github.com/invoicing-api/invoicing-go/webhooks
  go test -count=1 -parallel 4 -run '^(TestProof|TestAnOutageOfPostgreSQL)' github.com/invoicing-api/invoicing-go/pgmirror
  go test -count=1 -run '^TestADefaultMirrorKeepsUpWithABurstOfWrites$' github.com/invoicing-api/invoicing-go/pgmirror
  PGMIRROR_TEST_PARTITIONS=8 go test -count=1 -short -parallel 4 -run '^TestProof' github.com/invoicing-api/invoicing-go/pgmirror
fi
