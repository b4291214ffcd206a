#!/usr/bin/env bash
# bench-board.sh: how long "omega-monitor status --once" takes at fleet size.
# It builds the binary, generates a fleet of watchers under a temporary
# OMEGA_MONITOR_HOME (default 200, each with a full 10,000-line history inside
# the sparkline's 48 hours, the worst case for its read from the end, and a
# 1 MB log), and times:
#
#   - older watchers, first run: state.json as a watcher from before the
#     tally writes it (no "tally"), no cursors yet: every history is read
#     from its end back 48 hours, every log counted whole;
#   - first run: the same fleet after one real poll of each watcher
#     ("omega-monitor tick" on a captured Claude Code screen), which keeps
#     in state.json the tally of its history and log, then a line appended
#     to every log and history by another writer; the board has no cursors
#     yet and reads only what follows the tally;
#   - for either, the first run again (the board's cursors removed before
#     each: a single first run on a shared machine is one sample), and later
#     runs: cursors kept, a line appended to every log and history between
#     runs;
#   - the --tmux segment.
#
#   scripts/bench-board.sh [WATCHERS] [RUNS]
#
# BENCH_BOARD_SPAN_HOURS spreads each history over that many hours instead
# of 47 (a watcher's 10,000 lines usually span days: 336 is two weeks);
# BENCH_BOARD_KEEP=1 keeps the generated fleet.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

watchers=${1:-200}
runs=${2:-10}
lines=10000
span=$((${BENCH_BOARD_SPAN_HOURS:-47} * 3600))
tmp=$(mktemp -d) || exit 1
if [[ -n ${BENCH_BOARD_KEEP:-} ]]; then
	echo "keeping the fleet in $tmp"
else
	trap 'rm -rf -- "$tmp"' EXIT
fi
bin=$tmp/omega-monitor
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$bin" ./cmd/omega-monitor || exit 1
home=$tmp/home

# Every watcher's loop is this shell: a live pid with its start token.
read -r stat </proc/$$/stat
rest=${stat##*) }
read -ra fields <<<"$rest"
token=${fields[19]}
now=$(date -u +%s)
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
started=$(iso $((now - 172800)))
polled=$(iso "$now")

# One history and one log, copied to every watcher: 10,000 events spread
# over the span, one in five a progress advance.
awk -v n="$lines" -v now="$now" -v span="$span" 'BEGIN {
	for (i = 0; i < n; i++) {
		t = now - span + int(i * span / n)
		ev = (i % 5 == 0) ? "budget_reset" : (i % 5 == 1 ? "nudge" : "state")
		printf "{\"event\":\"%s\",\"from\":41,\"state\":\"WORKING\",\"target\":\"agent\",\"to\":42,\"ts\":\"%s\"}\n", ev, strftime("%Y-%m-%dT%H:%M:%SZ", t, 1)
	}
}' >"$tmp/history.jsonl"
line='2026-11-30T13:00:00Z MONITOR · host:agent · WORKING · work=7 · progress=41 · nudges 0/5 · 13:00:00'
yes "$line" | head -c 1048576 >"$tmp/monitor.log"

for ((i = 0; i < watchers; i++)); do
	d=$home/monitor-agent$i
	mkdir -p "$d"
	cp "$tmp/history.jsonl" "$tmp/monitor.log" "$d/"
	printf '{"pid":%d,"start_token":"%s","started_at":"%s","interval_s":60,"target":"agent%d","watcher":"monitor-agent%d","version":"bench","settings":{}}\n' \
		$$ "$token" "$started" "$i" "$i" >"$d/loop.json"
	printf '{"version":1,"polls":100,"budget":{"limit":5,"used":1},"state":"WORKING","state_since":"%s","last_poll":"%s","agent":"claude","work":"7","progress":"41"}\n' \
		"$started" "$polled" >"$d/state.json"
	printf '{"added":120,"removed":7,"at":"%s","dir":"/src","base":"origin/HEAD"}\n' "$polled" >"$d/diff.json"
done

# once: one run's wall clock and CPU (user + system) in milliseconds, as
# "WALL CPU": on a loaded machine the wall clock measures the others too.
once() {
	local t rc
	TIMEFORMAT='%R %U %S'
	t=$({ time OMEGA_MONITOR_HOME=$home "$bin" status "${1:---once}" >"$tmp/out"; } 2>&1)
	rc=$?
	read -r real user sys <<<"$t"
	awk -v r="$real" -v u="$user" -v s="$sys" 'BEGIN { printf "%d %d\n", r * 1000, (u + s) * 1000 }'
	((rc == 0)) || echo "status exited $rc" >&2
}

appendLines() {
	for ((i = 0; i < watchers; i++)); do
		echo "$line" >>"$home/monitor-agent$i/monitor.log"
		printf '{"event":"budget_reset","state":"WORKING","target":"agent","ts":"%s"}\n' "$(iso "$now")" >>"$home/monitor-agent$i/history.jsonl"
	done
}

echo "fleet: $watchers watchers, $lines history lines each over $((span / 3600)) hours, a 1 MB log each, $(du -sh "$home" | cut -f1) on disk"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# later RUNS: the median of RUNS runs, a line appended to every log and
# history before each.
later() {
	local walls=() cpus=() r
	for ((r = 0; r < runs; r++)); do
		appendLines
		read -r wall cpu <<<"$(once)"
		walls+=("$wall") cpus+=("$cpu")
	done
	echo "wall $(median "${walls[@]}") ms, cpu $(median "${cpus[@]}") ms"
}
# cold: the median of RUNS first runs again, the board's cursors removed
# (and the writes flushed) before each.
cold() {
	local walls=() cpus=() r
	for ((r = 0; r < runs; r++)); do
		rm -f -- "$home/.board-cursors.json"
		sync
		read -r wall cpu <<<"$(once)"
		walls+=("$wall") cpus+=("$cpu")
	done
	echo "wall $(median "${walls[@]}") ms, cpu $(median "${cpus[@]}") ms"
}

# The generator's writes (and later the ticks') are flushed before a first
# run, which then measures the board, not their writeback.
sync
read -r wall cpu <<<"$(once)"
echo "status --once, older watchers, first run (no tally, no cursors: every log counted, every history read from its end): wall ${wall} ms, cpu ${cpu} ms"
echo "status --once, older watchers, first run again (cursors removed), median of $runs: $(cold)"
echo "status --once, older watchers, later runs (cursors kept), median of $runs: $(later)"
rm -f -- "$home/.board-cursors.json"

# One real poll of every watcher writes its state.json with the tally.
pane=golden/panes/adv-custom-statusline-working.pane
for ((i = 0; i < watchers; i++)); do
	OMEGA_MONITOR_HOME=$home "$bin" tick --state "$home/monitor-agent$i" --target "agent$i" --work 7 --progress 41 <"$pane" >/dev/null ||
		echo "tick of monitor-agent$i exited $?" >&2
done
appendLines
sync
read -r wall cpu <<<"$(once)"
echo "status --once, first run (state.json with the tally a tick keeps, no cursors: only what follows the tally is read): wall ${wall} ms, cpu ${cpu} ms"
echo "status --once, first run again (cursors removed), median of $runs: $(cold)"
echo "status --once, later runs (cursors kept, a line appended to every log and history between runs), median of $runs: $(later)"
head -3 "$tmp/out"
read -r wall cpu <<<"$(once --tmux)"
echo "status --tmux: wall ${wall} ms, cpu ${cpu} ms"
