#!/usr/bin/env bats
# Unit tests for scripts/omega-monitor.sh: its functions, sourced. The
# end-to-end tests, against real tmux and sshd with the real Go binary, are in
# cmd/omega-monitor/loop_e2e_test.go. Bounds are generous: the machines that
# run these are often loaded.
# Each test runs in a subshell of its own, and '$' in single quotes is the
# point of many of them:
# shellcheck disable=SC2030,SC2031,SC2016

setup() {
	SCRIPT="$BATS_TEST_DIRNAME/../omega-monitor.sh"
	# shellcheck source-path=SCRIPTDIR source=../omega-monitor.sh disable=SC1091
	source "$SCRIPT"
	T=$BATS_TEST_TMPDIR
	state=$T/state
	work=$state/poll
	logfile=$state/watcher.log
	mkdir -p "$work" "$state/actions"
	kill_grace=1
	call_timeout=5
	enter_delay=0
	# A marker unique to this test, carried by every process it starts, so
	# that leftovers can be found.
	MARK=$((300 + RANDOM % 600)).$$
	unset OMEGA_MONITOR_MUX OMEGA_MONITOR_ALERT_SEND
}

teardown() {
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

# no_timeout_path: a PATH directory with the tools the tests need and no
# coreutils timeout, as on stock macOS.
no_timeout_path() {
	local dir=$T/bin t
	mkdir -p "$dir"
	for t in sh bash sleep cat rm ps head tail tr date mkdir grep env wc awk cksum chmod mv; do
		ln -sf "$(command -v "$t")" "$dir/$t"
	done
	printf '%s\n' "$dir"
}

# --- the command line --------------------------------------------------------

@test "parse_args reads a target and every flag, in both spellings" {
	parse_args --interval 7 box:agent --work-probe 'echo 3' --progress-probe='cat n' \
		--nudge-budget=0 --nudge-text '-go on; "now"' --mux /x/tmux --ssh-config=/x/cfg
	[ "$host" = box ]
	[ "$session" = agent ]
	[ "$interval" = 7 ]
	[ "$work_probe" = 'echo 3' ]
	[ "$progress_probe" = 'cat n' ]
	[ "$nudge_budget" = 0 ]
	[ "$nudge_text" = '-go on; "now"' ]
	[ "$nudge_text_set" = 1 ]
	[ "$mux_flag" = /x/tmux ]
	[ "$ssh_config" = /x/cfg ]
}

@test "parse_args refuses what it cannot use, status 2" {
	run parse_args agent --interval 0
	[ "$status" -eq 2 ]
	[[ $output == *"--interval must be a whole number of seconds, 1 and up"* ]]
	run parse_args agent --interval 1.5
	[ "$status" -eq 2 ]
	run parse_args agent --interval
	[ "$status" -eq 2 ]
	[[ $output == *"--interval needs a value"* ]]
	run parse_args agent --nudge-budget -1
	[ "$status" -eq 2 ]
	run parse_args agent --bogus
	[ "$status" -eq 2 ]
	[[ $output == *"unknown flag --bogus"* ]]
	run parse_args --bogus=1 agent
	[ "$status" -eq 2 ]
	run parse_args a b
	[ "$status" -eq 2 ]
	[[ $output == *"want one target"* ]]
	run parse_args
	[ "$status" -eq 2 ]
}

@test "--help prints the usage and exits 0; a refused target exits 2 before any loop" {
	run bash "$SCRIPT" --help
	[ "$status" -eq 0 ]
	[[ $output == "usage: omega-monitor.sh <target> [flags]"* ]]
	OMEGA_MONITOR_HOME=$T/home run bash "$SCRIPT" 'my.agent' --interval 1
	[ "$status" -eq 2 ]
	[[ $output == *"refusing target 'my.agent'"*"rewrites to '_'"* ]]
	[ ! -e "$T/home" ]
}

@test "check_target follows coord's rules for sessions and hosts" {
	check_target agent_1-x
	[ "$host" = "" ]
	[ "$session" = agent_1-x ]
	check_target build.lan:agent
	[ "$host" = build.lan ]
	[ "$session" = agent ]
	local bad
	for bad in 'my.agent' 'h:a:b' 'h:a.b' '-x' 'h:-x' '.h:a' ':a' 'h:' '' 'a b' 'a;b' 'a$b' "a'b" 'a#b' 'ägent' 'h@x:a'; do
		run check_target "$bad"
		if [ "$status" -ne 2 ]; then
			echo "accepted unsafe target '$bad'"
			return 1
		fi
	done
	run check_target "$(printf 'a%.0s' {1..129})"
	[ "$status" -eq 2 ]
	[[ $output == *"longer than 128"* ]]
}

@test "watcher_name names watchers as coord does" {
	[ "$(watcher_name '' agent)" = monitor-agent ]
	[ "$(watcher_name box agent)" = monitor-box-agent ]
	[[ $(watcher_name '' my-agent) =~ ^monitor-[0-9a-f]{16}$ ]]
	[[ $(watcher_name build.lan agent) =~ ^monitor-[0-9a-f]{16}$ ]]
	[[ $(watcher_name '' 0123456789abcdef) =~ ^monitor-[0-9a-f]{16}$ ]]
	[ "$(watcher_name '' my-agent)" != "$(watcher_name '' my_agent)" ]
}

# --- the wall clock ----------------------------------------------------------

# bounded_cases: the wall clock's cases, run with whichever clock is set.
bounded_cases() {
	local start rc out
	# An ordinary command: its status and its output.
	rc=0
	run_bounded 10 /dev/null "$T/out" "$T/err" sh -c 'echo hello; echo oops >&2; exit 3' || rc=$?
	[ "$rc" -eq 3 ]
	[ "$(cat "$T/out")" = hello ]
	[ "$(cat "$T/err")" = oops ]

	# A hung command ends at its bound with 124, its grandchild too.
	start=$SECONDS
	rc=0
	run_bounded 1 /dev/null "$T/out" "$T/err" sh -c "sleep $MARK & sleep $MARK; echo never" || rc=$?
	[ "$rc" -eq 124 ]
	((SECONDS - start <= 8))
	[ ! -s "$T/out" ]
	[ -z "$(marked)" ]

	# A command that ignores SIGTERM takes SIGKILL: 137.
	start=$SECONDS
	rc=0
	run_bounded 1 /dev/null "$T/out" "$T/err" sh -c "trap '' TERM; sleep $MARK" || rc=$?
	[ "$rc" -eq 137 ]
	((SECONDS - start <= 10))
	[ -z "$(marked)" ]

	# A command that leaves a grandchild holding its output returns when it
	# exits, not when the grandchild does, and the grandchild is ended.
	start=$SECONDS
	rc=0
	run_bounded 30 /dev/null "$T/out" "$T/err" sh -c "sleep $MARK & echo done" || rc=$?
	[ "$rc" -eq 0 ]
	[ "$(cat "$T/out")" = 'done' ]
	((SECONDS - start <= 8))
	[ -z "$(marked)" ]

	# Called inside a command substitution, nothing of the clock holds the
	# substitution's pipe: it returns with the command, not with the clock.
	start=$SECONDS
	rc=0
	out=$(run_bounded 30 /dev/null "$T/out" "$T/err" true) || rc=$?
	[ "$rc" -eq 0 ]
	[ -z "$out" ]
	((SECONDS - start <= 8))

	# Standard input comes from the file given.
	printf 'from a file' >"$T/in"
	run_bounded 10 "$T/in" "$T/out" "$T/err" cat
	[ "$(cat "$T/out")" = 'from a file' ]
}

@test "run_bounded with coreutils timeout" {
	resolve_timeout
	[ -n "$timeout_bin" ]
	bounded_cases
}

@test "run_bounded without coreutils timeout: the bash watchdog" {
	PATH=$(no_timeout_path)
	resolve_timeout
	[ -z "$timeout_bin" ]
	bounded_cases
}

@test "the watchdog's own sleep does not outlive the command" {
	timeout_bin=''
	# The clock is the marker: the watchdog sleeps MARK seconds.
	run_bounded "$MARK" /dev/null "$T/out" "$T/err" true
	[ -z "$(marked)" ]
}

@test "failure renders timeouts (124, 137), ssh failures and plain exits" {
	printf 'first\nlast words\n\n' >"$T/err"
	[ "$(failure 124 "$T/err")" = "no answer within 5s" ]
	[ "$(failure 137 "$T/err")" = "no answer within 5s" ]
	[ "$(failure 1 "$T/err")" = "last words (exit 1)" ]
	: >"$T/empty"
	[ "$(failure 3 "$T/empty")" = "exit 3" ]
	host=box
	[ "$(failure 255 "$T/err")" = "ssh box: last words" ]
}

# --- remote commands ---------------------------------------------------------

# args_mux: a multiplexer that prints each argument on a line of its own, in
# brackets, and then its standard input.
args_mux() {
	cat >"$T/argsmux" <<'EOF'
#!/bin/sh
for a in "$@"; do printf '[%s]\n' "$a"; done
if [ "$1" = load-buffer ]; then printf 'stdin[%s]\n' "$(cat)"; fi
EOF
	chmod +x "$T/argsmux"
}

@test "remote_command reaches the remote multiplexer with every word intact" {
	args_mux
	local cmd want got
	# shellcheck disable=SC2016 # the $ is the point: it must not expand
	cmd=$(remote_command 5 display-message -p -t '=agent:' '#S' '$HOME' "it's" 'a;b' '-x' ' two  spaces ' 'é')
	# The remote login shell parses the line again, as ssh hands it over.
	got=$(OMEGA_MONITOR_MUX=$T/argsmux sh -c "$cmd")
	# shellcheck disable=SC2016
	want=$(printf '[%s]\n' display-message -p -t '=agent:' '#S' '$HOME' "it's" 'a;b' '-x' ' two  spaces ' 'é')
	[ "$got" = "$want" ]
}

@test "the remote side falls back to rmux, then tmux" {
	mkdir -p "$T/rhome/.local/bin"
	printf '#!/bin/sh\necho rmux "$@"\n' >"$T/rhome/.local/bin/rmux"
	chmod +x "$T/rhome/.local/bin/rmux"
	[ "$(HOME=$T/rhome sh -c "$(remote_command 5 list-sessions)")" = "rmux list-sessions" ]
}

# Without timeout the remote side can end only the multiplexer client itself
# (sh has no job control without a terminal); the client starts nothing of
# its own, and the local clock bounds the whole call in any case.
@test "the remote side bounds the call itself, with and without timeout" {
	printf '#!/bin/sh\nexec sleep %s\n' "$MARK" >"$T/hungmux"
	chmod +x "$T/hungmux"
	local start out
	start=$SECONDS
	out=$(OMEGA_MONITOR_MUX=$T/hungmux sh -c "$(remote_command 1 capture-pane)") || true
	((SECONDS - start <= 8))
	[ -z "$(marked)" ]
	start=$SECONDS
	out=$(PATH=$(no_timeout_path) OMEGA_MONITOR_MUX=$T/hungmux sh -c "$(remote_command 1 capture-pane)") || true
	((SECONDS - start <= 8))
	[ -z "$out" ]
	sleep 1
	[ -z "$(marked)" ]
}

@test "the remote side passes standard input through, with and without timeout" {
	args_mux
	printf 'typed text' >"$T/in"
	[[ $(OMEGA_MONITOR_MUX=$T/argsmux sh -c "$(remote_command 5 load-buffer -)" <"$T/in") == *'stdin[typed text]'* ]]
	[[ $(PATH=$(no_timeout_path) OMEGA_MONITOR_MUX=$T/argsmux sh -c "$(remote_command 5 load-buffer -)" <"$T/in") == *'stdin[typed text]'* ]]
}

@test "ssh options: the alias, batch mode, keepalive, one control socket per watcher" {
	call_timeout=8
	interval=60
	ssh_config=$T/cfg
	set_ssh_opts
	local all=" ${ssh_opts[*]} "
	[[ $all == *" -o BatchMode=yes "* ]]
	[[ $all == *" -o ConnectTimeout=4 "* ]]
	[[ $all == *" -o ServerAliveInterval=2 "* ]]
	[[ $all == *" -o ServerAliveCountMax=2 "* ]]
	[[ $all == *" -o ControlMaster=auto -o ControlPath=$state/ssh-control "* ]]
	[[ $all == *" -F $T/cfg "* ]]
	# A state directory too deep for a unix socket gets a short one.
	state=$T/$(printf 'd%.0s' {1..120})
	set_ssh_opts
	all=" ${ssh_opts[*]} "
	[[ $all == *" -o ControlPath=/tmp/omega-monitor-$UID/"* ]]
}

# --- acting ------------------------------------------------------------------

# recording_mux: a multiplexer that records each call (its arguments, and
# its standard input for load-buffer) in $T/calls.
recording_mux() {
	cat >"$T/recmux" <<EOF
#!/bin/sh
{ printf 'call'; for a in "\$@"; do printf ' <%s>' "\$a"; done; echo
  if [ "\$1" = load-buffer ]; then printf 'stdin <%s>\n' "\$(cat)"; fi; } >>"$T/calls"
EOF
	chmod +x "$T/recmux"
	mux=$T/recmux
}

@test "needs_paste sends what send-keys would misread through the paste buffer" {
	run needs_paste 'continue with the next step'
	[ "$status" -eq 1 ]
	run needs_paste 'step 2/3: go on (50%), then #4 & more'
	[ "$status" -eq 1 ]
	needs_paste '-continue'
	needs_paste 'go on;'
	needs_paste "it's"
	needs_paste 'say "now"'
	needs_paste 'a\b'
	needs_paste 'cost $5'
	needs_paste 'go on; then stop'
	needs_paste 'weiter so, schön'
	needs_paste $'two\nlines'
}

@test "act types each nudge as literal text, Enter as a separate call, in order" {
	recording_mux
	session=agent exact='=agent:' buffer=omega-monitor-test
	printf 'continue with the next step' >"$state/actions/001.nudge"
	# shellcheck disable=SC2016
	printf -- '-it'"'"'s "done"; $HOME é;' >"$state/actions/002.nudge"
	act
	cat "$T/calls"
	# shellcheck disable=SC2016
	[ "$(cat "$T/calls")" = "$(printf '%s\n' \
		'call <send-keys> <-t> <=agent:> <-l> <continue with the next step>' \
		'call <send-keys> <-t> <=agent:> <Enter>' \
		'call <load-buffer> <-b> <omega-monitor-test> <->' \
		"stdin <-it's \"done\"; \$HOME é;>" \
		'call <paste-buffer> <-d> <-r> <-b> <omega-monitor-test> <-t> <=agent:>' \
		'call <send-keys> <-t> <=agent:> <Enter>')" ]
	[ -z "$(ls "$state/actions")" ]
}

@test "act hands each alert to the funnel, in order, and deletes the files" {
	cat >"$T/funnel" <<EOF
#!/bin/sh
for m in "\$@"; do printf '%s\n' "\$m" >>"$T/sent"; done
EOF
	chmod +x "$T/funnel"
	export OMEGA_MONITOR_ALERT_SEND=$T/funnel
	printf '<b>QUESTION</b> · agent' >"$state/actions/001.alert"
	printf '<b>second</b>' >"$state/actions/002.alert"
	act
	[ "$(cat "$T/sent")" = "$(printf '%s\n' '<b>QUESTION</b> · agent' '<b>second</b>')" ]
	[ -z "$(ls "$state/actions")" ]
}

@test "without a funnel, alerts go to the log under a one-time line" {
	export OMEGA_MONITOR_ALERT_SEND=$T/none
	printf '<b>one</b>' >"$state/actions/001.alert"
	act 2>"$T/stderr"
	printf '<b>two</b>' >"$state/actions/002.alert"
	act 2>>"$T/stderr"
	[ "$(grep -c 'no alert funnel installed' "$logfile")" -eq 1 ]
	[ "$(grep -c 'no alert funnel installed' "$T/stderr")" -eq 1 ]
	grep -q '<b>one</b>' "$logfile"
	grep -q '<b>two</b>' "$logfile"
}

@test "a nudge that cannot be typed is rendered, and the file is still deleted" {
	session=agent exact='=agent:' buffer=b
	printf '#!/bin/sh\necho "can'"'"'t find session: agent" >&2\nexit 1\n' >"$T/failmux"
	chmod +x "$T/failmux"
	mux=$T/failmux target=agent
	printf 'continue' >"$state/actions/001.nudge"
	run act
	[[ $output == "MONITOR · agent · ERROR · nudge not typed: can't find session: agent (exit 1) · "* ]]
	[ -z "$(ls "$state/actions")" ]
}

# --- one poll ----------------------------------------------------------------

# fake_tick: a Go binary stand-in that records its arguments and standard
# input, prints a line and leaves a nudge.
fake_tick() {
	cat >"$T/tick" <<EOF
#!/bin/sh
for a in "\$@"; do printf '<%s>' "\$a"; done >"$T/tick.args"
cat >"$T/tick.stdin"
printf 'nudge text' >"$state/actions/001.nudge"
echo "MONITOR · agent · STALLED · work=3 · nudged (1/5)"
exit \${FAKE_TICK_STATUS:-0}
EOF
	chmod +x "$T/tick"
	export OMEGA_MONITOR_BIN=$T/tick
}

@test "poll: capture, probes and one tick call, then the actions" {
	fake_tick
	recording_mux
	printf '#!/bin/sh\nif [ "$1" = capture-pane ]; then printf "the pane\\n"; fi\n' >"$T/panemux"
	chmod +x "$T/panemux"
	target=agent session=agent exact='=agent:' buffer=b host=''
	work_probe='echo 7' progress_probe='echo oops >&2; exit 4' nudge_budget=3
	mux=$T/panemux
	run poll
	echo "$output"
	[ "$output" = "MONITOR · agent · STALLED · work=3 · nudged (1/5)" ]
	[ "$(cat "$T/tick.args")" = "<tick><--state><$state><--target><agent><--work><7><--progress-error><oops (exit 4)><--nudge-budget><3>" ]
	[ "$(cat "$T/tick.stdin")" = "the pane" ]
}

@test "poll: a failed capture is handed to the tick as --capture-error" {
	fake_tick
	printf '#!/bin/sh\necho "no server running on /tmp/x" >&2\nexit 1\n' >"$T/deadmux"
	chmod +x "$T/deadmux"
	target=agent session=agent exact='=agent:' host='' mux=$T/deadmux
	recording_mux
	mux=$T/deadmux
	run poll
	[[ $(cat "$T/tick.args") == *"<--capture-error><no server running on /tmp/x (exit 1)>"* ]]
}

@test "poll: a probe past its clock is an error reading" {
	fake_tick
	recording_mux
	call_timeout=1
	target=agent session=agent exact='=agent:' host=''
	work_probe="sleep $MARK"
	run poll
	[[ $(cat "$T/tick.args") == *"<--work-error><no answer within 1s>"* ]]
	[ -z "$(marked)" ]
}

@test "poll: a tick that fails or is missing is rendered, and its actions are dropped" {
	fake_tick
	recording_mux
	target=agent session=agent exact='=agent:' host=''
	FAKE_TICK_STATUS=2 run poll
	[[ $output == "MONITOR · agent · ERROR · omega-monitor tick failed: no message (exit 2) · "* ]]
	[ -z "$(ls "$state/actions")" ]
	[ ! -e "$T/calls" ] || ! grep -q send-keys "$T/calls"
	OMEGA_MONITOR_BIN=$T/missing run poll
	[[ $output == "MONITOR · agent · ERROR · cannot judge: the omega-monitor binary is not found ($T/missing"* ]]
}

@test "the loop stops on SIGTERM at once and leaves nothing behind" {
	fake_tick
	recording_mux
	OMEGA_MONITOR_STATE=$state bash "$SCRIPT" agent --mux "$T/recmux" --interval 1 \
		--work-probe "sleep $MARK" >"$T/loop.out" 2>&1 &
	local pid=$! start rc=0
	sleep 2
	start=$SECONDS
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	[ "$rc" -eq 143 ]
	((SECONDS - start <= 5))
	sleep 0.5
	[ -z "$(marked)" ]
	grep -q 'stopped by SIGTERM' "$logfile"
}

@test "poll: the agent's own status file for the pane goes to the tick" {
	fake_tick
	cat >"$T/panemux" <<'MUX'
#!/bin/sh
case $1 in
capture-pane) printf 'the pane\n' ;;
display-message) printf 'agent:@3.%%7\n' ;;
esac
MUX
	chmod +x "$T/panemux"
	mkdir -p "$T/home/.claude/sessions"
	printf '{"tmux":"other:@0.%%0","status":"busy"}\n' >"$T/home/.claude/sessions/1.json"
	printf '{"tmux":"agent:@3.%%7","status":"idle"}\n' >"$T/home/.claude/sessions/2.json"
	target=agent session=agent exact='=agent:' host='' mux=$T/panemux
	HOME=$T/home run poll
	[ "$(cat "$T/tick.args")" = "<tick><--state><$state><--target><agent><--agent-status><$work/agent-status.json><--pane><agent:@3.%7>" ]
	[ "$(cat "$work/agent-status.json")" = '{"tmux":"agent:@3.%7","status":"idle"}' ]
}

@test "poll: no status file for the pane is no witness" {
	fake_tick
	printf '#!/bin/sh\n[ "$1" = display-message ] && printf "agent:@3.%%%%7\\n"; [ "$1" = capture-pane ] && echo pane; exit 0\n' >"$T/panemux"
	chmod +x "$T/panemux"
	mkdir -p "$T/home/.claude/sessions"
	target=agent session=agent exact='=agent:' host='' mux=$T/panemux
	HOME=$T/home run poll
	[ "$(cat "$T/tick.args")" = "<tick><--state><$state><--target><agent>" ]
}
