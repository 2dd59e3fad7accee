#!/bin/bash
# Start the test database (the image's PostgreSQL cluster) if it is not
# running, and load the anonymized data (seed.sql) the first time.
set -euo pipefail
cd "$(dirname "$0")"
ver=$(ls /etc/postgresql | sort -n | tail -1)
# No systemd in the sandbox: nothing made the socket directory at boot.
install -d -m 2775 -o postgres -g postgres /run/postgresql
pg_ctlcluster "$ver" main status >/dev/null 2>&1 || pg_ctlcluster "$ver" main start
if [ -z "$(runuser -u postgres -- psql -X -A -t -c "SELECT 1 FROM pg_database WHERE datname = 'invoice'")" ]; then
	runuser -u postgres -- createdb invoice
	./psql.sh < seed.sql
	echo "db: PostgreSQL $ver, $(./psql.sh -c 'SELECT count(*) FROM customers') customers loaded"
fi
