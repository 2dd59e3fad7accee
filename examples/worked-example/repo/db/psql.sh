#!/bin/bash
# psql on the test database as its owner, unaligned, tab-separated, stopping
# at the first error: `db/psql.sh -c SQL`, or SQL on stdin.
exec runuser -u postgres -- psql -X -q -A -t -F $'\t' -v ON_ERROR_STOP=1 -d invoice "$@"
