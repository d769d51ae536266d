#!/bin/sh
# make.sh: make, exiting with the documented status of the command its goal ran.
#   tools/make.sh GOAL [VAR=value ...]      e.g. tools/make.sh compare BASE=results/a RUNS=results/b
# GNU make exits 2 whenever a recipe fails, whatever the recipe's own status,
# so `make compare` cannot tell a cell that moved (1) from bad input (2). The
# goals that have statuses of their own (bench, compare, hyperfine, report,
# plots, record, trace-info) write that status to $AM_STATUS_FILE; this script gives make such a
# file and exits with what it holds. Where make failed before that command ran
# (bad input make itself refuses, a build that failed) it exits with make's 2.
status_file=$(mktemp "${TMPDIR:-/tmp}/allocmark-status.XXXXXX") || exit 2
trap 'rm -f "$status_file"' EXIT
AM_STATUS_FILE=$status_file ${MAKE:-make} "$@"
made=$?
[ "$made" -eq 0 ] && exit 0
status=$(cat "$status_file" 2>/dev/null)
case $status in
    '' | *[!0-9]*) exit "$made" ;;
    *) exit "$status" ;;
esac
