#!/bin/bash
# 001: balances from decimals to integer cents, in one transaction on the
# running server: exact arithmetic (numeric * 100, then the cast), and the
# row count and cent total checked against the audit totals before COMMIT,
# so a wrong result is never visible to anyone.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(db/query.sh schema)" = "balance decimal" ] || { echo "001: already migrated" >&2; exit 0; }
db/psql.sh <<'SQL'
BEGIN;
ALTER TABLE customers ALTER COLUMN balance TYPE bigint USING (balance * 100)::bigint;
DO $$
BEGIN
	IF (SELECT count(*) FROM customers) <> (SELECT rows FROM control)
	   OR (SELECT sum(balance) FROM customers) <> (SELECT total_cents FROM control) THEN
		RAISE EXCEPTION '001: the totals changed; nothing migrated';
	END IF;
END $$;
COMMIT;
SQL
echo "001: $(db/query.sh count) rows migrated to cents"
