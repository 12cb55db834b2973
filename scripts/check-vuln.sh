#!/usr/bin/env bash
# govulncheck for `make check`: the known vulnerabilities of the Go modules and standard library
# the code calls (govulncheck is pinned as a tool in go.mod). It needs the Go vulnerability
# database (GOVULNDB, default https://vuln.go.dev), a host of its own that a machine reaching only
# the Go module proxy cannot reach. Then it says it SKIPPED and why, and exits 0, as check-alerts
# does without promtool; with the database reachable, a finding fails the check.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

db=${GOVULNDB:-https://vuln.go.dev}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
go tool govulncheck -db "$db" ./... >"$out" 2>&1 || status=$?
if ((status != 0)) && grep -q 'fetching vulnerabilities' "$out"; then
	echo "check-vuln: SKIPPED, the vulnerability database $db cannot be reached:"
	grep -m 1 'fetching vulnerabilities' "$out" | sed 's/^/  /'
	echo "  (run make check-vuln where it can be reached, or point GOVULNDB at a mirror)"
	exit 0
fi
cat "$out"
exit "$status"
