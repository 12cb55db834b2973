#!/usr/bin/env bash
# Fail if `go mod tidy` would change go.mod or go.sum: every direct dependency must be listed as
# direct (no `// indirect` on a module the code imports), and nothing unused may stay.
#
# `go mod tidy -diff` changes nothing; it prints the diff it would apply and exits 1.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! diff=$(go mod tidy -diff); then
	echo "go.mod/go.sum are not tidy: run \`go mod tidy\` and commit the result. It would change:" >&2
	printf '%s\n' "$diff" >&2
	exit 1
fi
echo "check-tidy: go.mod and go.sum are tidy"
