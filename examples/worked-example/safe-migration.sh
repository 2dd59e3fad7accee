#!/bin/bash
# 001: balances from decimal strings to integer cents. Safe: header kept,
# tabs kept, exact integer arithmetic (no floating point), every row checked,
# written to a temporary file and swapped in only when complete.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(cat db/SCHEMA)" = "balance decimal" ] || { echo "001: already migrated" >&2; exit 0; }
before=$(db/query.sh count)
tmp=$(mktemp db/.customers.XXXXXX)
awk -F'\t' 'BEGIN { OFS = "\t" }
	NR == 1 { print; next }
	$4 !~ /^[0-9]+\.[0-9][0-9]$/ { print "001: bad balance on line " NR ": " $4 > "/dev/stderr"; exit 1 }
	{ split($4, p, "."); $4 = p[1] * 100 + p[2]; print }' db/customers.tsv > "$tmp"
echo "balance cents" > db/SCHEMA.new
[ "$(awk 'NR > 1' "$tmp" | wc -l)" = "$before" ] || { rm -f "$tmp" db/SCHEMA.new; echo "001: row count changed" >&2; exit 1; }
mv "$tmp" db/customers.tsv
mv db/SCHEMA.new db/SCHEMA
echo "001: $before rows migrated to cents"
