#!/bin/sh
# The worked example, end to end (README.md tells the story). Needs:
#   MVM           the mvm binary
#   WORK          an empty host directory for this run
#   REGISTRY_WWW  a directory the test host serves at http://203.0.113.10:8080/
#                 (tests/integration/net.lib's busybox httpd serves $T/www)
#   MVM_STATE_DIR where the sandbox lives (the caller removes it)
# and the debian image (with PostgreSQL) in the store. Exit 0: every step held; anything else:
# a step failed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
NAME=${NAME:-invoice}
say() { printf '\n== %s\n' "$*"; }
die() { echo "worked-example: FAILED: $*" >&2; exit 1; }
x() { "$MVM" exec "$NAME" -w /srv/invoice-service -- bash -c "$1"; }

say "1. the repository on the host (a git repository: what the patch must apply to)"
cp -a "$here/repo" "$WORK/invoice-service"
(cd "$WORK/invoice-service" && git init -q && git add -A &&
	git -c user.email=dev@example.invalid -c user.name=dev commit -qm "invoice-service") ||
	die "git init"
mkdir -p "$REGISTRY_WWW" && cp -a "$here/registry/money" "$REGISTRY_WWW/"

say "2. a sandbox from the debian image with the repository copied in; the network allows only the registry"
"$MVM" create "$NAME" --image debian --memory 512M --copy "$WORK/invoice-service:/srv/invoice-service" >/dev/null
"$MVM" net allow "$NAME" 203.0.113.10:8080/tcp
x db/start.sh || die "the test database (PostgreSQL) did not start"
x ./tests/run.sh || die "the tests fail before any change"

say "3. upgrade money 1.4 -> 2.0 from the registry: the tests now fail"
sha2=$(sha256sum "$here/registry/money/2.0.0/money.sh" | cut -d' ' -f1)
x "sed -i 's/^money .*/money 2.0.0 $sha2/' deps.lock && scripts/fetch-deps.sh" || die "fetch from the registry"
if x ./tests/run.sh; then die "the tests pass with money 2.0 and an unmigrated database"; fi

say "4. checkpoint the running server, then a data migration in SQL that corrupts the test database"
db_sum=$(x 'db/query.sh digest')
server=$(x 'db/query.sh server')
tag=$("$MVM" checkpoint "$NAME" before-migration) || die "checkpoint"
x 'mkdir -p migrations'
"$MVM" cp "$here/naive-migration.sh" "$NAME:/srv/invoice-service/migrations/001-balance-to-cents.sh"
x migrations/001-balance-to-cents.sh || die "the naive migration did not run"
if x 'db/query.sh check >/dev/null'; then die "the naive migration did not corrupt the database"; fi
[ "$(x 'db/query.sh digest')" != "$db_sum" ] || die "database unchanged"

say "5. rollback to the checkpoint: the same server keeps serving, with the original rows"
"$MVM" rollback "$NAME" "$tag" || die "rollback"
[ "$(x 'db/query.sh server')" = "$server" ] || die "the server after rollback is not the one checkpointed"
[ "$(x 'db/query.sh digest')" = "$db_sum" ] || die "database digest after rollback"
[ "$(x 'db/query.sh row 3' | cut -f4)" = "211.59" ] || die "query after rollback"
x 'db/query.sh amcheck' || die "pg_amcheck found corruption after rollback"

say "6. a safer migration: the tests pass"
x 'mkdir -p migrations'
"$MVM" cp "$here/safe-migration.sh" "$NAME:/srv/invoice-service/migrations/001-balance-to-cents.sh"
x 'migrations/001-balance-to-cents.sh && ./tests/run.sh' ||
	die "tests after the safe migration"

say "7. a fetch from a domain not on the allowlist is blocked and logged"
if x 'timeout 20 bash -c "exec 3<>/dev/tcp/blocked.test/80"' 2>/dev/null; then die "blocked.test reachable"; fi
grep -q '"name":"blocked.test"' "$MVM_STATE_DIR/$NAME/events.jsonl" || die "no denial event for blocked.test"

say "8. promote: checks in the sandbox, a bundle whose patch applies to the original"
"$MVM" promote "$NAME" --check ./tests/run.sh --check 'db/query.sh check' --out "$WORK/bundle"
(cd "$WORK/invoice-service" && git apply --check "$WORK/bundle/changes.patch") || die "git apply --check"
grep -q 'blocked.test' "$WORK/bundle/report.json" || die "report.json lacks the denied attempt"
echo "changes.patch sha256 $(sha256sum "$WORK/bundle/changes.patch" | cut -d' ' -f1)"
grep -A1 '"sha256"' "$WORK/bundle/report.json" | head -2

echo "worked-example: ok"
