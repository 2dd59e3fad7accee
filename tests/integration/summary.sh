#!/bin/sh
# summary.sh ROWS... — the integration suite's closing report, from the rows
# run-all.sh records ("name verdict seconds attempts [retry reasons]", one
# test per line): a table of every test, its verdict, its duration, its
# attempts and why it was retried; a "retried: N (...)" line; the failures;
# and, last, the plain "integration: N passed, N failed, N skipped" line that
# scripts rely on. Several ROWS files (one per box, tests/nested/shards.sh)
# make one report. Status 0 only when nothing failed and something passed.
set -u
all=$(mktemp) && trap 'rm -f "$all"' EXIT
sort -k1,1 "$@" >"$all"
echo
printf '%-28s %-7s %7s %8s  %s\n' test verdict seconds attempts "retried because"
while read -r n v secs tries why; do
	printf '%-28s %-7s %7s %8s  %s\n' "$n" "$v" "$secs" "$tries" "$why"
done <"$all"
retried=$(awk '$4 > 1 { n++ } END { print n + 0 }' "$all")
reasons=$(awk '$4 > 1 { $1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); print }' "$all" |
	tr ';' '\n' | sed 's/^ *//; /^$/d' | sort | uniq -c |
	awk '{ c = $1; $1 = ""; printf "%s%s x%d", sep, substr($0, 2), c; sep = "; " }')
echo "retried: $retried${reasons:+ ($reasons)}"
pass=$(awk '$2 == "PASS"' "$all" | wc -l)
skipped=$(awk '$2 == "SKIP"' "$all" | wc -l)
failures=$(awk '$2 != "PASS" && $2 != "SKIP" { printf " %s", $1 }' "$all")
failed=$(awk '$2 != "PASS" && $2 != "SKIP"' "$all" | wc -l)
[ -z "$failures" ] || echo "failed:$failures"
echo "integration: $pass passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] && [ "$pass" -gt 0 ]
