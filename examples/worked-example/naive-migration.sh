#!/bin/bash
# 001 (first try): balances to cents. Rewrites the file in place with awk's
# default output separator and treats the header as a number: it corrupts
# the database. The worked example rolls back to the checkpoint after it.
cd "$(dirname "$0")/.."
awk -F'\t' '{ $4 = $4 * 100; print }' db/customers.tsv > db/new.tsv && mv db/new.tsv db/customers.tsv
