#!/bin/bash
# 001 (first try): balances to cents, in SQL on the running server. The cast
# to bigint rounds each balance to whole euros before multiplying, so every
# cent is lost: the database is corrupted (db/query.sh check: the total no
# longer matches the audit). The worked example rolls back after it.
cd "$(dirname "$0")/.."
db/psql.sh <<'SQL'
ALTER TABLE customers ALTER COLUMN balance TYPE bigint USING balance::bigint * 100;
SQL
