#!/usr/bin/env bash
# bench.sh: the cost figures of the poll path, each as a ratio of whole
# processes measured side by side in one run, their runs alternating, so
# that the machine's speed and load cancel out. CPU is user+sys of the
# measured processes and their children, read from bash's times builtin.
#
#   scripts/bench.sh [-n RUNS]
#
# Figures (goals from issue 11):
#   loop poll / Go start   CPU of one poll of the loop (the loop and all its
#                          children, its judge's calls too: the loop waits for
#                          its judge when it stops, before the bench reads;
#                          a working Claude Code screen, two probes,
#                          local tmux, a poll a second; the multiplexer's
#                          wakes off: a listener started for 20 polls would
#                          weigh as one over an hour's, and TestMuxWakeFigures
#                          measures it apart): what 20 more polls cost, per
#                          poll (runs of 25 polls and of 5), per
#                          start of a minimal Go program at the same pace (a
#                          start a second; see measure_paced)  goal <= x5;
#                          the ratio to a start not paced is printed too
#   loop start and stop    the rest of the run of 5 polls: settings, lock,
#                          the judge's start, the first poll's diff, the stop
#   --help / Go start      omega-monitor --help                 goal <= x1.5
#   classify 17MB / wc -l  a 17 MB capture on stdin (a file)    goal <= x1.5
#   ledger / none          classify --ledger with 2000 distinct nudges on a
#                          2k-line pane, against no ledger      goal <= x1.2
#   loop forks             processes the loop forks a poll, and programs run
#                          (strace -f over 10 polls, when strace is installed)
#   loop lines             scripts/omega-monitor.sh             goal <= 350
#   fleet                  agents one core watches at one poll a minute
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
runs=200
[[ ${1:-} == -n ]] && runs=$2

dir=$(mktemp -d)
sock=omega-bench-$$
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null
	rm -rf -- "$dir"
}
trap cleanup EXIT

say() { printf '%s\n' "$*" >&2; }

# cpu_us: user+sys CPU of this shell's finished children so far, in us,
# into $cpu. times runs in this shell (never in a subshell, which has
# children of its own).
cpu_us() {
	local u s
	times >"$dir/times"
	{
		read -r _ _
		read -r u s
	} <"$dir/times"
	cpu=$(($(us "$u") + $(us "$s")))
}
# us 1m2.345s: microseconds.
us() {
	local m=${1%%m*} s=${1#*m}
	s=${s%s}
	echo $((10#$m * 60000000 + 10#${s%.*} * 1000000 + 10#${s#*.} * 1000))
}

# measure_pair N IN A B: the CPU of N runs each of the commands in the
# arrays named A and B, with standard input from IN, in us per run, into
# $result_a and $result_b. The runs alternate, and so does which of the two
# goes first: the machine's speed drifts over a run of the bench (other
# tenants, the virtual CPU's clock), and two batches measured one after the
# other would carry that drift into their ratio.
measure_pair() {
	local n=$1 in=$2 i ta=0 tb=0
	local -n cmd_a=$3 cmd_b=$4
	for ((i = 0; i < n; i++)); do
		if ((i % 2)); then
			timed tb "$in" "${cmd_b[@]}"
			timed ta "$in" "${cmd_a[@]}"
		else
			timed ta "$in" "${cmd_a[@]}"
			timed tb "$in" "${cmd_b[@]}"
		fi
	done
	result_a=$((ta / n)) result_b=$((tb / n))
}

# timed SUM IN CMD...: adds the CPU of one run of CMD, with standard input
# from IN, to the variable named SUM, in us.
timed() {
	local -n sum=$1
	local in=$2 t0
	shift 2
	cpu_us
	t0=$cpu
	"$@" <"$in" >/dev/null 2>&1
	cpu_us
	sum=$((sum + cpu - t0))
}

# measure_paced N IN CMD...: the CPU of N runs of CMD with standard input
# from IN, in us per run, into $result, at the loop's pace: one run a
# second, idle in between. A process started after an idle second costs this
# machine about twice the CPU of one started right after another (caches and
# the virtual CPU go cold), and the loop starts every process of a poll so.
measure_paced() {
	local n=$1 in=$2 i total=0
	shift 2
	for ((i = 0; i < n; i++)); do
		read -r -t 1 -u 7 _
		timed total "$in" "$@"
	done
	result=$((total / n))
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "x%.2f", a / b }'; }
ms() { awk -v a="$1" 'BEGIN { printf "%.2f ms", a / 1000 }'; }

say "building..."
mkdir -p "$dir/hello"
printf 'package main\n\nimport "os"\n\nfunc main() { os.Stdout.WriteString("hello\\n") }\n' >"$dir/hello/main.go"
printf 'module hello\n\ngo 1.26.0\n' >"$dir/hello/go.mod"
# Both built as the README installs omega-monitor: static, stripped.
build() { CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' "$@"; }
(cd "$dir/hello" && build -o "$dir/hello/hello" .) || exit 1
build -o "$dir/omega-monitor" ./cmd/omega-monitor || exit 1
bin=$dir/omega-monitor

say "binary start..."
# shellcheck disable=SC2034 # read by measure_pair, by name
hello_cmd=("$dir/hello/hello") help_cmd=("$bin" --help)
measure_pair "$runs" /dev/null hello_cmd help_cmd
hello=$result_a help=$result_b

say "classify on 17 MB..."
{
	for ((i = 0; i < 48000; i++)); do
		printf '%s\n' '⏺ Bash(go test ./... 2>&1 | tail -40)' \
			'  ⎿  ok  	github.com/example/project/internal/store	0.412s   (cached)   some more words to widen it' \
			'     --- FAIL: TestReplay (0.00s) replay_test.go:41: got 3 nudges, want 2 and then some explanation' \
			'⏺ The replay test expects two nudges; the budget resets on progress, so I will read the state code.' ''
	done
	cat golden/panes/adv-custom-statusline-working.pane
} >"$dir/big.pane"
# shellcheck disable=SC2034
wc_cmd=(wc -l) classify_cmd=("$bin" classify)
measure_pair "$((runs / 2 + 1))" "$dir/big.pane" wc_cmd classify_cmd
wc_big=$result_a classify_big=$result_b

say "ledger..."
{
	for ((i = 0; i < 1900; i++)); do printf 'line %d of the scrollback, with some words in it\n' "$i"; done
	cat golden/panes/GOLDEN-stalled-real.pane
} >"$dir/2k.pane"
{
	printf '\037omega-monitor echo ledger\357\277\276\n'
	for ((i = 0; i < 2000; i++)); do printf 'continue with step %d of the plan; say what you are waiting for\n' "$i"; done
} >"$dir/ledger"
# shellcheck disable=SC2034
none_cmd=("$bin" classify --work 5) with_cmd=("$bin" classify --work 5 --ledger "$dir/ledger")
measure_pair "$runs" "$dir/2k.pane" none_cmd with_cmd
none=$result_a with=$result_b

say "the loop, 5 polls and 25, twice..."
tmux -L "$sock" -f /dev/null new-session -d -s agent -x 200 -y 50 \
	"cat golden/panes/adv-custom-statusline-working.pane; exec sleep 100000"
mux=$dir/tmux
printf '#!/bin/sh\nexec tmux -L %s "$@"\n' "$sock" >"$mux"
chmod +x "$mux"
polls=20
mkfifo "$dir/lines" "$dir/idle"
exec 7<>"$dir/idle"
# The wrapper costs an exec a call; it is measured alone, at the loop's pace,
# and taken off. So is the floor the poll is compared with.
measure_paced "$polls" /dev/null "$mux" -V
wrap=$result
measure_paced "$polls" /dev/null tmux -V
bare=$result
measure_paced "$polls" /dev/null "$dir/hello/hello"
hello_paced=$result
# run_loop N: runs the loop until it has printed N lines, then stops it;
# its CPU (the loop and all its children, its judge too), in us, into $result.
run_loop() {
	local got=0 t0
	rm -rf -- "${dir:?}/home"
	cpu_us
	t0=$cpu
	OMEGA_MONITOR_BIN=$bin OMEGA_MONITOR_HOME=$dir/home HOME=$dir \
		bash scripts/omega-monitor.sh agent --mux "$mux" --interval 1 --mux-wake 0 \
		--work-probe 'echo 5' --progress-probe 'echo 41' >"$dir/lines" 2>"$dir/loop.err" &
	loop=$!
	# Lines are counted by builtins, so the count costs no process.
	while ((got < $1)) && IFS= read -r line; do
		printf '%s\n' "$line" >>"$dir/loop.out"
		got=$((got + 1))
	done <"$dir/lines"
	kill -TERM "$loop"
	wait "$loop"
	cpu_us
	result=$((cpu - t0))
}
# A poll is what one more poll costs: runs of few and of many polls, their
# order alternating, and the difference of their CPU per poll between
# them, so that the loop's start and stop (its settings, its lock, its
# judge's start, the first poll's diff) are not spread over the polls; they
# are a figure of their own. The capture's wrapper is taken off each poll.
few=5 few_cpu=0 many_cpu=0
for n in "$few" "$((few + polls))" "$((few + polls))" "$few"; do
	run_loop "$n"
	if ((n == few)); then few_cpu=$((few_cpu + result)); else many_cpu=$((many_cpu + result)); fi
done
poll=$(((many_cpu - few_cpu) / 2 / polls - (wrap - bare)))
start=$((few_cpu / 2 - few * (poll + wrap - bare)))
grep -Ev '^([0-9:]+ )?MONITOR · agent · WORKING' "$dir/loop.out" >&2

# Forks a poll: the same loop again under strace, its process clones (not
# threads) and execs counted between its 2nd line and its 12th, so that
# its start and its first poll, which measures the diff, are left out.
# The execs count the bench's multiplexer wrapper: one more a capture.
forks=n/a execs=n/a
if command -v strace >/dev/null; then
	say "the loop's forks, 10 polls under strace..."
	rm -rf -- "${dir:?}/home"
	OMEGA_MONITOR_BIN=$bin OMEGA_MONITOR_HOME=$dir/home HOME=$dir \
		strace -f -qq -e trace=clone,clone3,fork,vfork,execve -o "$dir/trace" \
		bash scripts/omega-monitor.sh agent --mux "$mux" --interval 1 --mux-wake 0 \
		--work-probe 'echo 5' --progress-probe 'echo 41' >"$dir/lines" 2>"$dir/loop.err" &
	loop=$!
	got=0 from=0 to=0
	while ((got < 12)) && IFS= read -r line; do
		got=$((got + 1))
		((got == 2)) && from=$(wc -l <"$dir/trace")
		((got == 12)) && to=$(wc -l <"$dir/trace")
	done <"$dir/lines"
	kill -TERM "$loop"
	wait "$loop"
	sed -n "$((from + 1)),${to}p" "$dir/trace" >"$dir/window"
	forks=$(grep -E '(clone3?|v?fork)\(' "$dir/window" | grep -vc CLONE_THREAD)
	execs=$(grep -c 'execve.*= 0$' "$dir/window") # not a PATH search's misses
	forks=$(awk -v n="$forks" 'BEGIN { printf "%.1f", n / 10 }') execs=$(awk -v n="$execs" 'BEGIN { printf "%.1f", n / 10 }')
fi

lines=$(wc -l <scripts/omega-monitor.sh)

printf '\n%-34s %12s %12s %8s %s\n' figure measured base ratio goal
printf '%-34s %12s %12s %8s %s\n' "loop CPU per poll / Go start" "$(ms "$poll")" "$(ms "$hello_paced")" "$(ratio "$poll" "$hello_paced")" "<= x5 (both a start a second)"
printf '%-34s %12s %12s %8s %s\n' "  the same / Go start, not paced" "$(ms "$poll")" "$(ms "$hello")" "$(ratio "$poll" "$hello")" "(for reference)"
printf '%-34s %12s %12s %8s %s\n' "loop start and stop / Go start" "$(ms "$start")" "$(ms "$hello")" "$(ratio "$start" "$hello")" "(once a watcher's life)"
printf '%-34s %12s %12s %8s %s\n' "--help / Go start" "$(ms "$help")" "$(ms "$hello")" "$(ratio "$help" "$hello")" "<= x1.5"
printf '%-34s %12s %12s %8s %s\n' "classify 17 MB / wc -l" "$(ms "$classify_big")" "$(ms "$wc_big")" "$(ratio "$classify_big" "$wc_big")" "<= x1.5"
printf '%-34s %12s %12s %8s %s\n' "classify --ledger 2000 / none" "$(ms "$with")" "$(ms "$none")" "$(ratio "$with" "$none")" "<= x1.2"
printf '%-34s %12s %12s %8s %s\n' "loop forks per poll (strace)" "$forks" "" "" "(execs $execs, the wrapper's included)"
printf '%-34s %12s %12s %8s %s\n' "loop script lines" "$lines" "" "" "<= 350"
printf '%-34s %12s\n' "fleet: agents per core, 1 poll/min" "$(awk -v p="$poll" 'BEGIN { printf "%d", 60e6 / p }')"
