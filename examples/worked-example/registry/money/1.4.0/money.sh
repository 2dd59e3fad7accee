# money 1.4.0 — format amounts for invoices.
# money_fmt AMOUNT CURRENCY: AMOUNT is a decimal string ("12.50"); prints "EUR 12.50".
money_fmt() {
	case $1 in
	'' | *[!0-9.]* | *.*.*) echo "money: bad amount '$1'" >&2; return 2 ;;
	esac
	awk -v a="$1" -v c="$2" 'BEGIN { printf "%s %.2f\n", c, a }'
}
