#!/bin/bash
# The test database: customers.tsv (tab-separated, header first), anonymized.
#   query.sh count | row ID | sum [COUNTRY] | check
# SCHEMA says how balances are stored ("balance decimal" or "balance cents").
set -eu
dir=$(dirname "$0")
db=$dir/customers.tsv
schema=$(cat "$dir/SCHEMA")
case $1 in
count) awk -F'\t' 'NR > 1 { n++ } END { print n + 0 }' "$db" ;;
row) awk -F'\t' -v id="$2" 'NR > 1 && $1 == id' "$db" ;;
sum)
	awk -F'\t' -v c="${2:-}" -v s="$schema" 'NR > 1 && (c == "" || $3 == c) { t += $4 }
		END { if (s == "balance cents") printf "%d\n", t; else printf "%.2f\n", t }' "$db" ;;
check)
	awk -F'\t' -v s="$schema" '
		NR == 1 { if ($0 != "id\tcustomer\tcountry\tbalance") bad++; next }
		NF != 4 { bad++; next }
		s == "balance decimal" && $4 !~ /^[0-9]+\.[0-9][0-9]$/ { bad++ }
		s == "balance cents" && $4 !~ /^[0-9]+$/ { bad++ }
		END { print bad + 0; exit bad > 0 }' "$db" ;;
*) echo "usage: query.sh count | row ID | sum [COUNTRY] | check" >&2; exit 2 ;;
esac
