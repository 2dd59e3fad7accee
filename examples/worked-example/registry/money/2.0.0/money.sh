# money 2.0.0 — format amounts for invoices.
# BREAKING: amounts are integer minor units (cents), no more decimal strings.
# money_fmt CENTS CURRENCY: prints "EUR 12.50" for 1250.
money_fmt() {
	case $1 in
	'' | *[!0-9]*) echo "money 2: amount must be integer minor units (cents), got '$1'" >&2; return 2 ;;
	esac
	awk -v a="$1" -v c="$2" 'BEGIN { printf "%s %d.%02d\n", c, int(a / 100), a % 100 }'
}
