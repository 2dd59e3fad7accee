#!/bin/bash
# The test database (PostgreSQL, db/start.sh), anonymized customers:
#   query.sh count | row ID | sum [COUNTRY] | check | digest | server | amcheck
# Balances are stored as numeric decimals ("balance decimal") until the
# migration to integer cents ("balance cents"): `schema` says which.
set -eu
dir=$(dirname "$0")
q() { "$dir/psql.sh" "$@"; }
schema() {
	case $(q -c "SELECT data_type FROM information_schema.columns
		WHERE table_name = 'customers' AND column_name = 'balance'") in
	numeric) echo "balance decimal" ;;
	bigint | integer) echo "balance cents" ;;
	*) echo "balance unknown" ;;
	esac
}
cents="balance"
[ "$(schema)" = "balance cents" ] || cents="(balance * 100)"
case ${1:-} in
schema) schema ;;
count) q -c "SELECT count(*) FROM customers" ;;
row)
	[[ ${2:-} =~ ^[0-9]+$ ]] || { echo "query.sh row: ID must be a number" >&2; exit 2; }
	q -c "SELECT id, customer, country, balance FROM customers WHERE id = $2" ;;
sum)
	[[ ${2:-} =~ ^[A-Z]{0,2}$ ]] || { echo "query.sh sum: COUNTRY is two capitals" >&2; exit 2; }
	q -c "SELECT coalesce(sum(balance), 0) FROM customers WHERE '${2:-}' IN ('', country)" ;;
check)
	# Problems: the row count or the cent total differ from the audit
	# totals, or a balance is not whole cents.
	bad=$(q -c "SELECT (SELECT count(*) FROM customers) <> c.rows
			OR (SELECT coalesce(sum($cents), 0) FROM customers) <> c.total_cents
		FROM control c")
	frac=$(q -c "SELECT count(*) FROM customers WHERE $cents <> trunc($cents)")
	n=$frac
	[ "$bad" != t ] || n=$((n + 1))
	echo "$n"
	[ "$n" = 0 ] ;;
digest) q -c "SELECT md5(string_agg(concat_ws(' ', id, customer, country, balance), ',' ORDER BY id)) FROM customers" ;;
server) q -c "SELECT pg_postmaster_start_time()" ;;
amcheck)
	# Every table and index of the database, heap and B-tree (pg_amcheck).
	ver=$(ls /etc/postgresql | sort -n | tail -1)
	runuser -u postgres -- "/usr/lib/postgresql/$ver/bin/pg_amcheck" --install-missing \
		--heapallindexed --parent-check invoice ;;
*) echo "usage: query.sh count | row ID | sum [COUNTRY] | check | digest | server | amcheck" >&2; exit 2 ;;
esac
