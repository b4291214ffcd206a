#!/usr/bin/env bash
# bench-hooks.sh: the figures of the agents' hooks (issue 25), with the real
# Claude Code and Codex against the fake APIs, each watched by the real loop.
# It runs TestHookFigures (cmd/omega-monitor/hookbench_test.go, which says
# how each figure is taken) and prints its figure lines; the whole log is
# kept in a file it names. About an hour; it needs tmux, node and npm, and
# the pinned agents in the cache (.ci/run installs them).
#
#   scripts/bench-hooks.sh [-n EVENTS] [-m CPU_MINUTES] [-c CYCLE_MINUTES] [-p PARTS]
#
#   -n  events a figure (20)
#   -m  minutes of the CPU run (10)
#   -c  minutes of each cycle of the CPU run (1): a turn that ends 40 s
#       before the cycle does, then a dialog refused 10 s after it is asked
#   -p  parts, a comma list of dialogs, dialogs-nohooks, nudges,
#       nudges-nohooks, cpu (all)
#
# Figures (goals from issue 25, at --interval 60 with hooks installed):
#   dialog drawn -> its alert     median <= 3 s, worst <= 6 s
#   turn's end -> the nudge       median <= 5 s
#   without hooks                 every event caught within the interval
#   CPU per agent-hour            with hooks within x1.10 of without
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

events=20 minutes=10 cycle=1 parts=dialogs,dialogs-nohooks,nudges,nudges-nohooks,cpu
while getopts n:m:c:p: opt; do
	case $opt in
	n) events=$OPTARG ;;
	m) minutes=$OPTARG ;;
	c) cycle=$OPTARG ;;
	p) parts=$OPTARG ;;
	*) exit 2 ;;
	esac
done

log=$(mktemp "${TMPDIR:-/tmp}/bench-hooks.XXXXXX")
printf 'bench-hooks: the whole log in %s\n' "$log" >&2
OMEGA_HOOK_BENCH=1 OMEGA_HOOK_BENCH_EVENTS=$events OMEGA_HOOK_BENCH_CPU_MINUTES=$minutes \
	OMEGA_HOOK_BENCH_CPU_CYCLE=$cycle \
	OMEGA_HOOK_BENCH_PARTS=$parts \
	go test ./cmd/omega-monitor -run '^TestHookFigures$' -count=1 -v -timeout 4h >"$log" 2>&1
rc=$?
# The figure lines, without go test's file:line prefix.
sed -n 's/^ *[a-z_]*\.go:[0-9]*: FIGURE //p' "$log"
((rc == 0)) || printf 'bench-hooks: go test failed (exit %d); see %s\n' "$rc" "$log" >&2
exit "$rc"
