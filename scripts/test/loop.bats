#!/usr/bin/env bats
# Unit tests for scripts/omega-monitor.sh: its functions, sourced, with the
# settings loop-env would give them. Every rule (the target check, names,
# quoting, the remote script, ssh options) is Go's and tested there; these
# test the effects: the clock, the order of a poll, the checks around a
# nudge, the alerts and the signals. The end-to-end tests, against real tmux
# and sshd with the real Go binary, are in cmd/omega-monitor/loop_e2e_test.go.
# Bounds are generous: the machines that run these are often loaded.
# Each test runs in a subshell of its own, and '$' in single quotes is the
# point of many of them:
# shellcheck disable=SC2030,SC2031,SC2016,SC2034,SC2154

setup() {
	SCRIPT="$BATS_TEST_DIRNAME/../omega-monitor.sh"
	# shellcheck source-path=SCRIPTDIR source=../omega-monitor.sh disable=SC1091
	source "$SCRIPT"
	T=$BATS_TEST_TMPDIR
	state=$T/state
	work=$state/poll
	mkdir -p "$work" "$state/actions" "$state/pastes"
	# What Go's looks write before each key: the fake confirm writes none.
	printf '1\n' >"$work/condition"
	call_timeout=5 target=agent mux_error='' funnel=$T/none pastes=$state/pastes
	work_probe='' progress_probe='' probe_dir=$T next_pause=0 interval=60
	wake_gather_us=250000 woken=''
	load_buffer=() close_master=()
	diff_said=()
	mkfifo "$T/clock" "$T/watchdog"
	exec 9<>"$T/clock" 7<>"$T/watchdog"
	# The watchdog starts in the test's shell, so that 'run' (a subshell)
	# finds it alive instead of starting a second reader of the fifo, which
	# would take bytes of the first one's orders.
	start_watchdog
	# A marker unique to this test, carried by every process it starts, so
	# that leftovers can be found; as a sleep's length, it is short enough
	# that a clock which fails to end one fails its test in minutes.
	MARK=$((60 + RANDOM % 30)).$$
	recorder
}

teardown() {
	[[ -z $judge_pid ]] || end_judge
	[[ -z $watchdog ]] || kill "$watchdog" 2>/dev/null
	exec 7>&- 9>&-
	pkill_marked || true
}

# pkill_marked: kills what a test left behind, by its marker, and fails if
# there was any.
pkill_marked() {
	local pids
	pids=$(marked)
	[[ -z $pids ]] && return 0
	# shellcheck disable=SC2086 # a list of pids
	kill -KILL $pids 2>/dev/null
	return 1
}

# marked: the pids of processes whose command line carries MARK.
marked() {
	# shellcheck disable=SC2009 # pgrep is not everywhere (procps)
	ps -eo pid=,args= | grep -F -- "$MARK" | grep -v -e grep -e ps | awk '{print $1}'
}

# recorder: every command line of the loop (capture, tick, confirm, ack,
# the keys, the paste) is a script that records its name and arguments in
# $T/calls, one line each, keeps what a key or a paste read on its standard
# input, and answers as the variables FAKE_<NAME> say. FAKE_CONFIRM lists
# the codes of the looks, in order (0 when it runs out).
recorder() {
	cat >"$T/rec" <<EOF
#!/bin/sh
[ "\$1" != judge ] || exec "$T/judge"
name=\$1; shift
{ printf '%s' "\$name"; for a in "\$@"; do printf ' <%s>' "\$a"; done; echo; } >>"$T/calls"
case \$name in
capture) printf 'agent:@0.%%0\t/home\n[omega-monitor:pane]\nthe pane\n' ;;
tick) cat >"$T/tick.stdin"; echo "MONITOR · agent · STALLED · work=3 · nudged (1/5)"
	[ -z "\$FAKE_ACTION" ] || printf '%s' "\${FAKE_ACTION_TEXT:-the text}" >"$state/actions/\$FAKE_ACTION" ;;
confirm) n=\$(grep -c '^confirm' "$T/calls"); cat >"$T/confirm.stdin.\$n"
	if [ -n "\$FAKE_REFUSE" ]; then echo "MONITOR · agent · ERROR · \$FAKE_REFUSE"; exit 1; fi
	code=\$(echo \$FAKE_CONFIRM | cut -d' ' -f\$n); exit \${code:-0} ;;
load_buffer|paste_if|key_*) cat >"$T/\$name.stdin" ;;
deliver) [ -z "\$FAKE_DELIVER_SLEEP" ] || sleep "\$FAKE_DELIVER_SLEEP" ;;
ack) for a in "\$@"; do case \$a in *.nudge|*.enter|*.alert|*.answer) rm -f "\$a" ;; esac; done ;;
esac
eval "exit \\\${FAKE_\$(echo "\$name" | tr a-z A-Z)_STATUS:-0}"
EOF
	chmod +x "$T/rec"
	fake_judge
	local n
	for n in capture tick confirm ack load_buffer paste_if key_Enter key_Up key_Down key_Escape key_Tab deliver diff_run; do
		eval "$n=(\"$T/rec\" $n)"
	done
}

calls() { cat "$T/calls" 2>/dev/null; }

# fake_judge: the judge loop-env's judge_run would start ("$T/rec" judge
# runs it), speaking the protocol of omega-monitor judge: it runs each call
# it is sent as a process, so that the calls recorded are the same with a
# judge or without, and records its pid and each call's name in $T/judged.
# FAKE_JUDGE makes it fail once it has read a request: hang, die, garbage
# (bytes that are no status), extra (a status more than asked), last (ends after its answer: it reads its
# input to its end, as omega-monitor judge does), again.
fake_judge() {
	cat >"$T/judge" <<EOF
#!/usr/bin/env bash
while IFS= read -r -d '' in && IFS= read -r -d '' out && IFS= read -r -d '' err && IFS= read -r -d '' n; do
	args=()
	for ((i = 0; i < n; i++)); do IFS= read -r -d '' a && args+=("\$a"); done
	echo "\$\$ \${args[1]}" >>"$T/judged"
	case \$FAKE_JUDGE in
	hang) sleep $MARK ;;
	die) exit 0 ;;
	garbage) printf '0\033]0;pwned\007%0200d' 1; sleep $MARK ;;
	again) echo again; exec cat >/dev/null ;;
	esac
	"\${args[@]}" <"\$in" >"\$out" 2>"\$err"
	status=\$?
	[ "\$FAKE_JUDGE" != last ] || { echo "\$status last"; exec cat >/dev/null; }
	echo "\$status"
	[ "\$FAKE_JUDGE" != extra ] || echo 0
done
EOF
	chmod +x "$T/judge"
}

# judged: the pids of the judges that took a call, one a line, in order.
judged() { cut -d' ' -f1 "$T/judged" 2>/dev/null | uniq; }

# --- the start ---------------------------------------------------------------

@test "--help prints the usage; a refused target exits 2 before any loop, by loop-env's rules" {
	bin=$(cd "$BATS_TEST_DIRNAME/../.." && go build -o "$T/omega-monitor" ./cmd/omega-monitor && echo "$T/omega-monitor")
	OMEGA_MONITOR_BIN=$bin run bash "$SCRIPT" --help
	[ "$status" -eq 0 ]
	[[ $output == "usage: omega-monitor.sh <target>"* ]]
	OMEGA_MONITOR_BIN=$bin OMEGA_MONITOR_HOME=$T/home run bash "$SCRIPT" 'my.agent' --interval 1
	[ "$status" -eq 2 ]
	[[ $output == *"refusing target \"my.agent\""*"rewrites to '_'"* ]]
	[ ! -e "$T/home" ]
	# --help as a flag's value is a value, not a request for help.
	OMEGA_MONITOR_BIN=$bin OMEGA_MONITOR_HOME=$T/home run bash "$SCRIPT" 'a b' --nudge-text '--help'
	[ "$status" -eq 2 ]
	OMEGA_MONITOR_BIN=$bin OMEGA_MONITOR_HOME=$T/home run bash "$SCRIPT" agent --interval 0
	[ "$status" -eq 2 ]
	[[ $output == *"--interval must be a whole number"* ]]
	OMEGA_MONITOR_BIN=$T/missing run bash "$SCRIPT" agent
	[ "$status" -eq 2 ]
	[[ $output == *"binary is not found"* ]]
}

# --- the clock ---------------------------------------------------------------

@test "run_bounded: status, output, standard input" {
	run_bounded 10 /dev/null "$T/out" "$T/err" sh -c 'echo hello; echo oops >&2; exit 3'
	[ "$rc" -eq 3 ]
	[ "$(cat "$T/out")" = hello ]
	[ "$(cat "$T/err")" = oops ]
	printf 'from a file' >"$T/in"
	run_bounded 10 "$T/in" "$T/out" "$T/err" cat
	[ "$rc" -eq 0 ]
	[ "$(cat "$T/out")" = 'from a file' ]
}

@test "run_bounded: a hung command ends at its bound with 124, its grandchild and a TERM-deaf one too" {
	local start=$SECONDS
	run_bounded 1 /dev/null "$T/out" "$T/err" sh -c "sleep $MARK & sleep $MARK; echo never"
	[ "$rc" -eq 124 ]
	((SECONDS - start <= 8))
	[ ! -s "$T/out" ]
	[ -z "$(marked)" ]
	start=$SECONDS
	run_bounded 1 /dev/null "$T/out" "$T/err" sh -c "trap '' TERM; sleep $MARK"
	[ "$rc" -eq 124 ]
	((SECONDS - start <= 10))
	[ -z "$(marked)" ]
}

@test "run_bounded: a grandchild holding the output does not hold the call, and is ended" {
	local start=$SECONDS
	run_bounded 30 /dev/null "$T/out" "$T/err" sh -c "sleep $MARK & echo done"
	[ "$rc" -eq 0 ]
	[ "$(cat "$T/out")" = 'done' ]
	((SECONDS - start <= 8))
	[ -z "$(marked)" ]
}

@test "run_bounded: a call that ends a moment after its clock does not take the next call's clock" {
	run_bounded 1 /dev/null "$T/out" "$T/err" sh -c "trap '' TERM; sleep $MARK"
	[ "$rc" -eq 124 ]
	local start=$SECONDS
	run_bounded 1 /dev/null "$T/out" "$T/err" sh -c "sleep $MARK"
	[ "$rc" -eq 124 ]
	((SECONDS - start <= 8))
	run_bounded 10 /dev/null "$T/out" "$T/err" sh -c 'exit 4'
	[ "$rc" -eq 4 ]
	[ -z "$(marked)" ]
}

@test "the watchdog re-arms for a call that starts before the last one's done" {
	run_bounded 10 /dev/null "$T/out" "$T/err" true
	printf 'arm 999999 600\n' >&7 # a call the loop left without its done
	local start=$SECONDS
	run_bounded 1 /dev/null "$T/out" "$T/err" sh -c "sleep $MARK"
	[ "$rc" -eq 124 ]
	((SECONDS - start <= 8))
	[ -z "$(marked)" ]
}

@test "run_bounded: a command that dies of a signal of its own in time is not a timeout" {
	run_bounded 10 /dev/null "$T/out" "$T/err" sh -c 'kill -TERM $$'
	[ "$rc" -eq 143 ]
}

@test "run_bounded: a dead watchdog is started again, and the clock still holds" {
	run_bounded 10 /dev/null "$T/out" "$T/err" true
	# Reaped before the next call, which would find a zombie alive: on a
	# loaded machine the kill may not even have landed yet.
	kill -KILL "$watchdog"
	wait "$watchdog" || :
	local start=$SECONDS
	run_bounded 1 /dev/null "$T/out" "$T/err" sh -c "sleep $MARK"
	[ "$rc" -eq 124 ]
	((SECONDS - start <= 8))
}

@test "the watchdog ends itself once its loop is gone, and holds no lock" {
	mkfifo "$T/orders"
	(
		exec 8>>"$T/lock" 7<>"$T/orders"
		watchdog=''
		run_bounded 10 /dev/null "$T/out" "$T/err" true
		echo "$watchdog" >"$T/watchdog.pid"
	)
	local pid
	pid=$(cat "$T/watchdog.pid")
	flock -n "$T/lock" true
	for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
	run kill -0 "$pid"
	[ "$status" -ne 0 ]
}

@test "failure renders timeouts, ssh failures and plain exits" {
	printf 'first\nlast words\n\n' >"$T/err"
	rc=124 && failure "$T/err" && [ "$why" = "no answer within 5s" ]
	rc=1 && failure "$T/err" && [ "$why" = "last words (exit 1)" ]
	: >"$T/empty"
	rc=3 && failure "$T/empty" && [ "$why" = "exit 3" ]
	host=box rc=255 && failure "$T/err" && [ "$why" = "ssh box: last words" ]
}

@test "pause waits, and a signal ends it at once" {
	local start=$SECONDS
	pause 1
	((SECONDS - start >= 1))
	(
		trap 'exit 143' TERM
		pause 60
	) &
	local pid=$!
	sleep 0.5
	start=$SECONDS
	kill -TERM "$pid"
	wait "$pid" || true
	((SECONDS - start <= 3))
}

@test "a wake ends the pause at once; one during a call neither ends the call nor is lost" {
	(
		trap on_wake USR1
		pause 60
	) &
	local pid=$! start
	sleep 0.5
	start=$SECONDS
	kill -USR1 "$pid"
	wait "$pid"
	((SECONDS - start <= 3))

	# A wake while a call runs: the call goes on to its end, its status
	# is its own, and the pause after it does not wait.
	(
		trap on_wake USR1
		run_bounded 10 /dev/null "$T/out" "$T/err" sh -c "sleep 1.5; echo finished $MARK"
		[ "$rc" -eq 0 ] || exit 3
		start=$SECONDS
		pause 60
		((SECONDS - start <= 2)) || exit 4
	) &
	pid=$!
	sleep 0.5
	kill -USR1 "$pid"
	wait "$pid"
	grep -q "finished $MARK" "$T/out"
}

@test "a wake's pause says so, and the wakes of a burst make that one poll" {
	(
		trap on_wake USR1
		pause 60
		[ "$woken" = 1 ] || exit 3
		# The burst was taken with the first wake: this pause waits.
		start=${EPOCHREALTIME/./}
		pause 0.5
		[ -z "$woken" ] || exit 4
		((${EPOCHREALTIME/./} - start >= 400000)) || exit 5
	) &
	local pid=$! i
	sleep 0.3
	for i in 1 2 3 4 5; do
		kill -USR1 "$pid"
		sleep 0.02
	done
	wait "$pid"
}

@test "poll: a poll a wake brought is said to the tick (--woken)" {
	woken=1 run poll
	[[ $(calls) == *"tick <--woken>"* ]]
	: >"$T/calls"
	woken='' run poll
	[[ $(calls) != *"--woken"* ]]
}

@test "rest waits its time whatever wakes come" {
	(
		trap on_wake USR1
		start=${EPOCHREALTIME/./}
		rest 1000000
		(( ${EPOCHREALTIME/./} - start >= 1000000 )) || exit 3
		# The wakes it took make the next pause end at once.
		start=$SECONDS
		pause 60
		((SECONDS - start <= 2)) || exit 4
	) &
	local pid=$!
	sleep 0.3
	kill -USR1 "$pid"
	sleep 0.2
	kill -USR1 "$pid"
	wait "$pid"
}

# --- one poll ----------------------------------------------------------------

@test "poll: the probes, then one capture, then one tick with the frame" {
	work_probe='echo 7' progress_probe='echo oops >&2; exit 4'
	run poll
	echo "$output"
	[[ $output =~ ^[0-9]{2}:[0-9]{2}:[0-9]{2}\ MONITOR\ ·\ agent\ ·\ STALLED\ ·\ work=3\ ·\ nudged\ \(1/5\)$ ]]
	[ "$(calls)" = "$(printf '%s\n' 'capture' "tick <--work> <7> <--progress-error> <oops (exit 4)>")" ]
	[ "$(cat "$T/tick.stdin")" = "$(printf 'agent:@0.%%0\t/home\n[omega-monitor:pane]\nthe pane')" ]
}

@test "poll: the probes run before the capture" {
	work_probe="echo probe >>$T/calls; echo 3"
	run poll
	[ "$(head -2 "$T/calls")" = "$(printf '%s\n' probe capture)" ]
}

@test "poll: a failed capture is handed to the tick as --capture-error" {
	printf '#!/bin/sh\necho "no server running on /tmp/x" >&2\nexit 1\n' >"$T/dead"
	chmod +x "$T/dead"
	capture=("$T/dead")
	run poll
	[ "$(calls)" = "tick <--capture-error> <no server running on /tmp/x (exit 1)>" ]
	mux_error='coord: no multiplexer' run poll
	[[ $(calls) == *"tick <--capture-error> <coord: no multiplexer>" ]]
}

@test "poll: a probe past its clock is an error reading, and leaves nothing" {
	call_timeout=1 work_probe="sleep $MARK"
	run poll
	[[ $(calls) == *"<--work-error> <no answer within 1s>"* ]]
	[ -z "$(marked)" ]
}

@test "poll: a probe's pipeline and background job end with it at its clock" {
	call_timeout=1 work_probe="sleep $MARK & sleep $MARK | cat; echo 3"
	run poll
	[[ $(calls) == *"<--work-error> <no answer within 1s>"* ]]
	[ -z "$(marked)" ]
}

@test "poll: a probe sees none of the loop's functions, and its exit is its own" {
	functions=(poll probe capture judge log)
	work_probe='type poll >/dev/null 2>&1 && echo loop || echo 2' progress_probe='exit 3'
	run poll
	[[ $(calls) == *"<--work> <2>"* ]]
	[[ $(calls) == *"<--progress-error> <exit 3>"* ]]
	[[ $(calls) == *"tick"* ]]
}

@test "poll: a tick that fails is said through Go, and nothing is acted on" {
	FAKE_ACTION=001.nudge FAKE_ACTION_TEXT=$'keys Enter\n' FAKE_TICK_STATUS=4 run poll
	[[ $(calls) == *"ack <--failed-call> <tick> <no message (exit 4)>"* ]]
	[[ $(calls) != *key_* ]]
}

# --- an action's steps -------------------------------------------------------

# steps_of TEXT: an action with the steps TEXT, as the tick hands it over.
nudge_steps=$'capture fresh\nconfirm before fresh 0\npaste 001.text\nrest 1000\ncapture typed\nconfirm typed typed 0\nkeys Enter\nack nudge_typed\n'

@test "steps: each in order; the looks by their step's number; a paste from its file; keys and pastes on the last look's condition" {
	printf 'the text' >"$pastes/001.text"
	printf 'the condition\n' >"$work/condition"
	FAKE_ACTION=001.nudge FAKE_ACTION_TEXT=$nudge_steps run poll
	echo "$output"
	a=$state/actions/001.nudge
	[ "$(calls)" = "$(printf '%s\n' capture tick capture \
		"confirm <--action> <$a> <--step> <2> <--try> <1>" load_buffer paste_if capture \
		"confirm <--action> <$a> <--step> <6> <--try> <1>" key_Enter \
		"ack <--action> <$a> <nudge_typed>")" ]
	[ "$(cat "$T/confirm.stdin.1")" = "$(printf 'agent:@0.%%0\t/home\n[omega-monitor:pane]\nthe pane')" ]
	[ "$(cat "$T/load_buffer.stdin")" = 'the text' ]
	[ "$(cat "$T/paste_if.stdin")" = 'the condition' ]
	[ "$(cat "$T/key_Enter.stdin")" = 'the condition' ]
	[ -z "$(ls "$state/actions")" ]
}

@test "steps: a look that refuses ends the action, and no key goes" {
	FAKE_ACTION=001.nudge FAKE_ACTION_TEXT=$nudge_steps FAKE_REFUSE='nudge not typed: the screen changed' run poll
	[[ $output == *"ERROR · nudge not typed: the screen changed"* ]]
	[[ $(calls) != *paste_if* && $(calls) != *key_* && $(calls) != *"ack <--action>"* ]]
}

@test "steps: a look that says 3 is asked again on a fresh capture, its try counted" {
	FAKE_ACTION=001.answer FAKE_ACTION_TEXT=$'keys Down\ncapture m1\nconfirm at:2 m1 1000\nkeys Enter\nack answer_typed\n' \
		FAKE_CONFIRM='3 3 0' run poll
	a=$state/actions/001.answer
	[ "$(calls | grep -v '^tick')" = "$(printf '%s\n' capture key_Down capture \
		"confirm <--action> <$a> <--step> <3> <--try> <1>" capture \
		"confirm <--action> <$a> <--step> <3> <--try> <2>" capture \
		"confirm <--action> <$a> <--step> <3> <--try> <3>" key_Enter \
		"ack <--action> <$a> <answer_typed>")" ]
}

@test "steps: a key, a paste or a capture that fails ends the action, said to Go with its step" {
	printf 'the text' >"$pastes/001.text"
	FAKE_ACTION=001.nudge FAKE_ACTION_TEXT=$nudge_steps FAKE_KEY_ENTER_STATUS=1 run poll
	[[ $(calls) == *"ack <--action> <$state/actions/001.nudge> <--failed-step> <7> <exit 1>" ]]
	: >"$T/calls"
	FAKE_ACTION=001.nudge FAKE_ACTION_TEXT=$nudge_steps FAKE_PASTE_IF_STATUS=1 run poll
	[[ $(calls) == *"ack <--action> <$state/actions/001.nudge> <--failed-step> <3> <exit 1>" ]]
	[[ $(calls) != *key_Enter* ]]
	: >"$T/calls"
	FAKE_ACTION=001.nudge FAKE_ACTION_TEXT=$nudge_steps FAKE_CAPTURE_STATUS=2 run poll
	[[ $(calls) == *"ack <--action> <$state/actions/001.nudge> <--failed-step> <1> <exit 2>" ]]
	[ -z "$(ls "$state/actions")" ]
}

@test "steps: a step or a key the loop does not know ends the action, said to Go" {
	FAKE_ACTION=001.nudge FAKE_ACTION_TEXT=$'frobnicate a b\nkeys Enter\n' run poll
	[[ $(calls) == *"<--failed-step> <1> <a step this loop does not know: frobnicate>" ]]
	[[ $(calls) != *key_Enter* ]]
	: >"$T/calls"
	FAKE_ACTION=001.nudge FAKE_ACTION_TEXT=$'keys Left\nkeys Enter\n' run poll
	[[ $(calls) == *"<--failed-step> <1> <no such key: Left>" ]]
	[[ $(calls) != *key_Enter* ]]
}

@test "steps: a wake makes the next pause end at once" {
	(
		trap on_wake USR1
		printf 'wake\n' >"$state/actions/001.answer"
		act
		start=$SECONDS
		pause 60
		((SECONDS - start <= 2)) || exit 4
		[ -n "$woken" ] || exit 5
	)
}

# --- the judge ---------------------------------------------------------------

@test "the judge takes the loop's calls of the binary, the same calls, and lives from poll to poll" {
	judge_run=("$T/rec" judge)
	printf 'the text' >"$pastes/001.text"
	export FAKE_ACTION=001.nudge FAKE_ACTION_TEXT=$nudge_steps
	poll >"$T/out" || :
	a=$state/actions/001.nudge
	[ "$(calls)" = "$(printf '%s\n' capture tick capture \
		"confirm <--action> <$a> <--step> <2> <--try> <1>" load_buffer paste_if capture \
		"confirm <--action> <$a> <--step> <6> <--try> <1>" key_Enter \
		"ack <--action> <$a> <nudge_typed>")" ]
	[ "$(cut -d' ' -f2 "$T/judged")" = "$(printf '%s\n' tick confirm confirm ack)" ]
	[[ $(cat "$T/out") =~ ^[0-9:]{8}\ MONITOR\ ·\ agent\ ·\ STALLED ]]
	unset FAKE_ACTION
	poll >"$T/out" || :
	[ "$(judged)" = "$judge_pid" ]
	cat "$state/watcher.log" >&2 || :
	[ ! -s "$state/watcher.log" ]
}

@test "a judge that ends after its last answer, or answers again, is started anew at the next poll, and nothing is said" {
	judge_run=("$T/rec" judge)
	export FAKE_JUDGE=last
	poll >"$T/out" || :
	[ -z "$judge_pid" ]
	poll >>"$T/out" || :
	[ "$(judged | wc -l)" = 2 ]
	[ "$(grep -c '^tick' "$T/calls")" = 2 ]
	[ "$(grep -c MONITOR "$T/out")" = 2 ]
	export FAKE_JUDGE=again
	poll >"$T/out" || :
	# Not run by the judge: by the loop, once.
	[ "$(grep -c '^tick' "$T/calls")" = 3 ]
	[ "$(grep -c MONITOR "$T/out")" = 1 ]
	[ -z "$judge_pid" ]
	cat "$state/watcher.log" >&2 || :
	[ ! -s "$state/watcher.log" ]
}

@test "a judge that hangs, dies or answers garbage: the call runs as a process, the judge is ended and said once, the next poll has a new one" {
	judge_run=("$T/rec" judge) judge_wait=1
	local how start
	for how in hang die garbage; do
		rm -f "$T/calls" "$T/judged" "$state/watcher.log"
		export FAKE_JUDGE=$how
		start=$SECONDS
		poll >"$T/out" || :
		((SECONDS - start <= 10))
		# The poll is not lost: the tick ran once, as a process, its line printed.
		[ "$(grep -c '^tick' "$T/calls")" = 1 ]
		[[ $(cat "$T/out") =~ ^[0-9:]{8}\ MONITOR\ ·\ agent\ ·\ STALLED ]]
		[ -z "$judge_pid" ]
		[ -z "$(marked)" ]
		[ "$(grep -c 'the judge gave no status' "$state/watcher.log")" = 1 ]
		# Nothing of what the judge sent reaches the log but printable text.
		[ "$(grep -c $'\e' "$state/watcher.log")" = 0 ]
		# The next poll starts another judge.
		poll >"$T/out" || :
		[ "$(judged | wc -l)" = 2 ]
		end_judge
	done
}

@test "a judge out of step (a status more than it was asked) is not asked again: ended, said, the call a process" {
	judge_run=("$T/rec" judge)
	export FAKE_JUDGE=extra
	poll >"$T/out" || :
	poll >>"$T/out" || :
	[ "$(grep -c '^tick' "$T/calls")" = 2 ]
	[ "$(wc -l <"$T/judged")" = 1 ]
	[ "$(grep -c MONITOR "$T/out")" = 2 ]
	[ "$(grep -c 'the judge gave no status' "$state/watcher.log")" = 1 ]
}

@test "a judge that dies in a look: the look runs as a process, and a refusal still types no key" {
	judge_run=("$T/rec" judge) judge_wait=1
	export FAKE_ACTION=001.nudge FAKE_ACTION_TEXT=$nudge_steps FAKE_REFUSE='the pane moved' FAKE_JUDGE=die
	printf 'the text' >"$pastes/001.text"
	poll >"$T/out" || :
	[[ $(calls) != *key_* && $(calls) != *paste_if* ]]
	[ "$(grep -c '^confirm' "$T/calls")" = 1 ]
	grep -q 'the pane moved' "$T/out"
}

# --- alerts ------------------------------------------------------------------

@test "the outbox's deliverer starts after the tick, whatever the tick said, and the poll never waits for it; one at a time; an empty outbox costs nothing" {
	run poll
	[[ $(calls) != *deliver* ]]
	mkdir -p "$state/outbox"
	printf 'the alert' >"$state/outbox/001.alert"
	export FAKE_DELIVER_SLEEP=3
	local start=${EPOCHREALTIME/./}
	FAKE_TICK_STATUS=3 poll
	# Started, apart from the poll: the poll is back long before it ends.
	(( ${EPOCHREALTIME/./} - start < 2000000 ))
	for _ in 1 2 3 4 5 6 7 8 9 10; do [[ $(calls) == *$'\ndeliver <--worker>'* ]] && break; sleep 0.1; done
	[[ $(calls) == *$'\ndeliver <--worker>'* ]]
	# While it runs, the next poll starts none.
	poll
	[ "$(grep -c '^deliver' "$T/calls")" = 1 ]
	kill -TERM -- "-$deliverer"
}

@test "a pace sets the next pause, shorter or longer, and its action is removed" {
	printf 'pace 300\n' >"$state/actions/001.wait"
	act
	[ "$next_pause" = 300 ]
	[ ! -e "$state/actions/001.wait" ]
	printf 'pace 0.5\n' >"$state/actions/001.wait"
	act
	[ "$next_pause" = 0.5 ]
}

@test "a measure runs its command, and the next tick reads what it printed, or why it failed" {
	printf 'the command' >"$pastes/001.diff.sh"
	FAKE_ACTION=001.diff FAKE_ACTION_TEXT=$'measure 001.diff.sh\n' poll
	[ ! -e "$state/actions/001.diff" ]
	[[ $(calls) == *$'\ndiff_run <the command>' ]]
	[[ $(calls) != *"--diff"* ]]
	: >"$T/calls"
	FAKE_DIFF_RUN_STATUS=3 FAKE_ACTION=002.diff FAKE_ACTION_TEXT=$'measure 001.diff.sh\n' poll
	[[ $(calls) == *"tick"*"<--diff-output> <$work/diff.out>"*$'\ndiff_run <the command>' ]]
	: >"$T/calls"
	poll
	[[ $(calls) == *"tick"*"<--diff-error> <exit 3>"* ]]
	: >"$T/calls"
	poll
	[[ $(calls) != *"--diff"* ]]
}

@test "a probe runs in the probe directory, and what it says on stderr reaches the tick" {
	mkdir -p "$T/project"
	probe_dir=$T/project
	work_probe='pwd >"'"$T"'/where"; grep -c x missing || true'
	run poll
	[ "$(cat "$T/where")" = "$T/project" ]
	[[ $(calls) == *"tick <--work> <> <--work-stderr> <grep: missing: No such file or directory>"* ]]
}

# --- signals -----------------------------------------------------------------

@test "the loop stops on SIGTERM at once and leaves nothing behind" {
	cat >"$T/bin" <<EOF
#!/bin/sh
if [ "\$1" = loop-env ]; then
	printf 'target=agent state=%s interval=1 call_timeout=5 work_probe=%s progress_probe= funnel= mux_error= pastes=\n' '$state' "'sleep $MARK'"
	printf 'tick=(%s tick) confirm=(%s confirm) ack=(%s ack) capture=(%s capture) load_buffer=() paste_if=() close_master=()\n' "$T/rec" "$T/rec" "$T/rec" "$T/rec"
	printf 'deliver=(%s deliver) hold=(true) diff_run=(true) probe_dir=%s settings_said=\n' "$T/rec" "$T"
	exit 0
fi
EOF
	chmod +x "$T/bin"
	OMEGA_MONITOR_BIN=$T/bin bash "$SCRIPT" agent >"$T/loop.out" 2>&1 &
	local pid=$! start rc=0
	sleep 2
	start=$SECONDS
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	[ "$rc" -eq 143 ]
	((SECONDS - start <= 5))
	sleep 0.5
	[ -z "$(marked)" ]
	grep -q 'stopped by SIGTERM' "$state/watcher.log"
	# Said to Go, which logs it and records the stop.
	[[ $(calls) == *"ack <--stopped> <SIGTERM>"* ]]
}

@test "a stop while the judge has a call under way ends the judge with the loop, at once, and leaves nothing behind" {
	cat >"$T/bin" <<EOF
#!/bin/sh
if [ "\$1" = loop-env ]; then
	printf 'target=agent state=%s interval=1 call_timeout=5 work_probe= progress_probe= funnel= mux_error= pastes=\n' '$state'
	printf 'tick=(%s tick) confirm=(%s confirm) ack=(%s ack) capture=(%s capture) load_buffer=() paste_if=() close_master=()\n' "$T/rec" "$T/rec" "$T/rec" "$T/rec"
	printf 'judge_run=(%s judge) deliver=(%s deliver) hold=(true) diff_run=(true) probe_dir=%s settings_said=\n' "$T/rec" "$T/rec" "$T"
	exit 0
fi
EOF
	chmod +x "$T/bin"
	FAKE_JUDGE=hang OMEGA_MONITOR_BIN=$T/bin bash "$SCRIPT" agent >"$T/loop.out" 2>&1 &
	local pid=$! start rc=0
	for _ in $(seq 100); do [[ -n $(marked) ]] && break; sleep 0.1; done
	[[ -n $(marked) ]]
	start=$SECONDS
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	[ "$rc" -eq 143 ]
	((SECONDS - start <= 5))
	[ -z "$(marked)" ]
	# shellcheck disable=SC2009 # pgrep is not everywhere (procps)
	[ "$(ps -eo args= | grep -v grep | grep -cF -- "$T/judge")" = 0 ]
	[[ $(calls) == *"ack <--stopped> <SIGTERM>"* ]]
	[ "$(grep -c Killed "$T/loop.out")" = 0 ]
}
