#!/usr/bin/env bash
# Fail if `go generate ./...` changes the tree: every generated file must be committed up to date.
#
# Compares a content hash of every tracked file and every untracked, non-ignored file before and
# after running the generators, so it works on a fresh clone, on a dirty tree (only what the
# generators change counts) and before the first commit.
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT_DIR"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# snapshot FILE: "<git blob hash> <path>" per tracked or untracked-not-ignored file, "- <path>" if
# it is listed but missing (a deleted tracked file).
snapshot() {
	local path
	: >"$tmp/present"
	: >"$1"
	git ls-files -z --cached --others --exclude-standard | sort -zu | tr '\0' '\n' |
		while IFS= read -r path; do
			if [[ -f $path ]]; then
				printf '%s\n' "$path" >>"$tmp/present"
			else
				printf -- '- %s\n' "$path" >>"$1"
			fi
		done
	if [[ -s $tmp/present ]]; then
		# shellcheck disable=SC2094 # reads $tmp/present, appends to $1: different files
		git hash-object --no-filters --stdin-paths <"$tmp/present" | paste -d ' ' - "$tmp/present" >>"$1"
	fi
}

snapshot "$tmp/before"
echo "check-generated: go generate ./..."
go generate ./...
snapshot "$tmp/after"

# Paths whose hash changed, appeared or disappeared.
changed=$(diff "$tmp/before" "$tmp/after" | sed -n 's/^[<>] [^ ]* //p' | sort -u || true)
if [[ -n $changed ]]; then
	echo "generated code is out of date: run \`make generate\` and commit" >&2
	echo "files changed by go generate:" >&2
	# shellcheck disable=SC2001 # indent every line
	sed 's/^/  /' <<<"$changed" >&2
	exit 1
fi
echo "check-generated: generated code is up to date"
