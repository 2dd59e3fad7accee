#!/bin/bash
# The service's tests; exit 0 when all pass.
cd "$(dirname "$0")/.."
fails=0
t() {
	local name=$1 want=$2 got
	shift 2
	got=$("$@" 2>&1) || true
	if [ "$got" = "$want" ]; then
		echo "ok   $name"
	else
		echo "FAIL $name: want '$want', got '$got'"
		fails=$((fails + 1))
	fi
}
t "invoice line"      "3 NL EUR 211.59" service/invoice.sh line 3
t "total for DE"      "EUR 1167.85" service/invoice.sh total DE
t "customers"         "20" db/query.sh count
t "database schema"   "0" db/query.sh check
exit $((fails > 0))
