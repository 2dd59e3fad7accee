#!/bin/bash
# The invoice service:
#   invoice.sh line ID       one customer's balance: "ID COUNTRY EUR 12.50"
#   invoice.sh total COUNTRY the country's total:   "EUR 1234.56"
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/vendor/money/money.sh"
case $1 in
line)
	row=$("$root/db/query.sh" row "$2")
	[ -n "$row" ] || { echo "no customer $2" >&2; exit 1; }
	IFS=$'\t' read -r id _ country balance <<<"$row"
	echo "$id $country $(money_fmt "$balance" EUR)" ;;
total) money_fmt "$("$root/db/query.sh" sum "$2")" EUR ;;
*) echo "usage: invoice.sh line ID | total COUNTRY" >&2; exit 2 ;;
esac
