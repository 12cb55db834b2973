#!/usr/bin/env bash
# Build and serve, for `make run`. The server runs as a foreground job of its own (job control,
# set -m): the terminal's Ctrl-C then reaches the server alone, which shuts down gracefully and
# exits 0, and make, which would otherwise take the same SIGINT and report "Interrupt", exits with
# the server's status. Without a terminal (CI, a pipe) it simply runs the server.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p bin
go build -o bin/inkwell ./cmd/inkwell
if [[ -t 0 ]]; then
	set -m
fi
bin/inkwell serve "$@"
