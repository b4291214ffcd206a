#!/usr/bin/env bash
# omega-monitor.sh: the poll loop of omega-monitor. It watches one session,
# local or on an ssh host, forever: probes -> capture -> tick -> act -> wait.
#   omega-monitor.sh <target> [flags]     (omega-monitor.sh --help)
# It holds the effects and no rule: the Go binary resolves every setting at
# start (loop-env, whose assignments this script evals), locks the state
# directory (hold), judges each poll (tick) and each look before a key
# (confirm), writes each action as steps, records what came of it (ack) and
# delivers the outbox apart from the poll (deliver --worker); tick, confirm
# and ack run in the judge, one process of the binary the loop keeps.
# A watcher that dies or freezes while claiming to watch is worse than none:
# no set -e (every error is a rendered line), and every call runs in a process
# group of its own under a wall clock that ends the whole group. The only exits
# are --help, a refused command line (status 2) and a signal. Bash 5. Env:
# OMEGA_MONITOR_BIN (else omega-monitor on PATH); the rest is loop-env's.

# shellcheck disable=SC2154,SC2015,SC2153 # the settings (and JUDGE) come from loop-env (coproc); A && B || C means C when either failed

# running: the process group of the call under way; watchdog: the clock's pid;
# judge_pid: the judge's; judge_wait: its answer's bound, the binary's own (60 s) and 10 s.
running='' watchdog='' relay='' deliverer='' judge_pid='' judge_wait=70 rc=0 why='' line='' next_pause=0 diff_said=() woken=''

say() { printf 'omega-monitor.sh: %s\n' "$*" >&2; }
# log MESSAGE: one line in the watcher's own log.
log() { printf '%(%Y-%m-%dT%H:%M:%S%z)T %s\n' -1 "$*" >>"$state/watcher.log" 2>/dev/null; }

# run_bounded SECONDS IN OUT ERR COMMAND...: runs COMMAND, standard input from
# the file IN, output to the files OUT and ERR, in a process group of its own,
# under a wall clock of SECONDS kept by the watchdog (0: none of ours); rc its
# status, or 124 when the clock ended it. What is left of its group is killed.
run_bounded() {
	local secs=$1 in=$2 out=$3 err=$4 start=${EPOCHREALTIME/./}
	shift 4
	((secs == 0)) || kill -0 "$watchdog" 2>/dev/null || start_watchdog
	set -m
	"$@" <"$in" >"$out" 2>"$err" 7>&- 8>&- 9>&- &
	running=$!
	set +m
	((secs == 0)) || printf 'arm %s %s\n' "$running" "$secs" >&7
	# A wake (USR1) ends the wait with the call still running: wait on.
	while rc=0 && { wait "$running" 2>/dev/null || rc=$?; } && ((rc > 128)) && kill -0 "$running" 2>/dev/null; do :; done
	((secs == 0)) || printf 'done\n' >&7
	((rc <= 128 || secs == 0 || ${EPOCHREALTIME/./} - start < secs * 1000000)) || rc=124
	kill -KILL -- "-$running" 2>/dev/null || :
	running=''
}

# watchdog: the wall clock of every call, a process of its own. Told "arm PGID
# SECONDS" when a call starts and "done" when it ends, it ends a late call's
# group (TERM, KILL 2 s later); it ends with the loop, holding no lock (fd 8).
watchdog() {
	local loop=$1 what pgid secs p s
	while :; do
		read -r -t 5 what pgid secs <&7 || { kill -0 "$loop" 2>/dev/null && continue || exit 0; }
		[[ $what == arm ]] || continue
		while read -r -t "$secs" what p s <&7; do
			[[ $what == arm ]] || continue 2
			pgid=$p secs=$s
		done
		kill -TERM -- "-$pgid" 2>/dev/null || continue
		# Not the loop's clock (fd 9), whose lines are its wakes.
		sleep 2
		kill -KILL -- "-$pgid" 2>/dev/null || :
	done
}
start_watchdog() {
	local loop=$BASHPID # the loop's, not the child's
	watchdog "$loop" </dev/null >/dev/null 2>&1 8>&- 9>&- &
	watchdog=$!
}

# last_line FILE: the last non-blank line of FILE, at most 300 bytes, into $why.
last_line() {
	local l && why=''
	while IFS= read -r l || [[ -n $l ]]; do
		l=${l%$'\r'} && [[ -z ${l//[[:space:]]/} ]] || why=${l:0:300}
	done <"$1"
	return 0
}

# failure ERRFILE: says why the last call failed, into $why.
failure() {
	case $rc in
	124) why="no answer within ${call_timeout}s" ;;
	255) last_line "$1" && why="ssh $host: ${why:-exit 255}" ;;
	*) last_line "$1" && why="${why:-exit $rc}${why:+ (exit $rc)}" ;;
	esac
}

# read_capped FILE: FILE's content, at most 4096 bytes, into $line.
read_capped() {
	line='' && IFS= read -r -d '' line <"$1" || :
	line=${line:0:4096}
	while [[ $line == *$'\n' ]]; do line=${line%$'\n'}; done
}

# capture FILE: the frame into FILE; a host's cut a byte past its cap (no host
# fills the disk; the tick says it is too long, whatever the cut did to ssh),
# as a measure's output is (a cut one fails).
capture() {
	why=$mux_error && [[ -z $why ]] || return 1
	run_bounded "$call_timeout" /dev/null "$1" "$work/capture.err" ${capture_cap:+capped} "${capture[@]}"
	((rc == 0)) || { [[ -n $capture_cap ]] && (($(wc -c <"$1") >= capture_cap)); } || { failure "$work/capture.err" && return 1; }
}
capped() { "$@" | head -c "$capture_cap"; return "${PIPESTATUS[0]}"; }
# probe NAME COMMAND: runs a probe (work or progress) in the probe directory
# and adds its reading to args: its output (and its standard error's last
# line) when it exited 0 in time, else why it failed (unknown to the tick).
probe() {
	run_bounded "$call_timeout" /dev/null "$work/$1.out" "$work/$1.err" run_probe "$2"
	if ((rc == 0)); then
		read_capped "$work/$1.out" && args+=("--$1" "$line") && last_line "$work/$1.err"
		[[ -z $why ]] || args+=("--$1-stderr" "$why")
	else
		failure "$work/$1.err" && args+=("--$1-error" "$why")
	fi
}
# run_probe COMMAND: a probe, in the shell forked for it, without the loop's functions.
run_probe() { unset -f "${functions[@]}"; cd -- "$probe_dir" || exit 125; eval "$1"; }

# judge IN ARGS...: one call of the Go binary (124 past its own deadline), its
# line printed; rc its status (0 go on, 1 stop, 3 look again); any other is
# said in an ERROR line through the binary (ack --failed-call), else on stderr.
judge() {
	local in=$1 status
	shift
	ask "$in" "$work/judge.out" "$work/judge.err" "$@"
	status=$rc
	[[ ! -s $work/judge.err ]] || { read_capped "$work/judge.err" && log "$2: $line"; }
	read_capped "$work/judge.out"
	[[ -z $line ]] || printf '%(%H:%M:%S)T %s\n' -1 "$line"
	case $status in
	0 | 1 | 3) rc=$status && return ;;
	124) why="no answer within its deadline" ;;
	*) last_line "$work/judge.err" && why="${why:-no message} (exit $status)" ;;
	esac
	ask /dev/null "$work/judge.out" /dev/null "${ack[@]}" --failed-call "$2" "$why"
	read_capped "$work/judge.out"
	((rc == 0)) && [[ -n $line ]] && printf '%(%H:%M:%S)T %s\n' -1 "$line" || say "omega-monitor $2 failed: $why"
	rc=$status
}

# ask IN OUT ERR COMMAND...: a call of the binary, as run_bounded 0 runs it,
# by the judge when one runs; by a new process when it cannot (none, refused,
# gone, or no status in time: then it is ended, said in the log).
ask() {
	local reply=''
	if [[ -n $judge_pid && $4 == "${judge_run[0]}" ]]; then
		running=$judge_pid && trap '' PIPE # a judge gone fails the write, not the loop
		# Bytes before the request are a judge out of step (or gone): not asked.
		{ ! read -r -t 0 -u "${JUDGE[0]}" && printf '%s\0' "$1" "$2" "$3" $(($# - 3)) "${@:4}" >&"${JUDGE[1]}" &&
			read -r -t "$judge_wait" -n 40 -u "${JUDGE[0]}" reply; } 2>/dev/null || :
		trap - PIPE && running=''
		[[ $reply =~ ^([0-9]{1,3})( last)?$ ]] && rc=${BASH_REMATCH[1]} && [[ -z ${BASH_REMATCH[2]} ]] && return
		[[ -n ${BASH_REMATCH[2]} || $reply == again ]] || log "the judge gave no status (${reply//[^[:print:]]/?}): ended, a new one at the next poll"
		end_judge && [[ -n ${BASH_REMATCH[2]} ]] && return
	fi
	run_bounded 0 "$@"
}
# end_judge: ends the judge's group, waited for (its CPU is the loop's).
end_judge() { { kill -KILL -- "-$judge_pid"; wait "$judge_pid"; } 2>/dev/null || :; judge_pid=''; }

# steps FILE: carries out the action FILE, the steps Go wrote in it, in order
# (internal/statedir/steps.go): the loop knows the steps, not the actions. A
# capture, key or paste that fails ends the action, said to Go with the step's
# number; so do a look (confirm) that refuses (3: asked again on a fresh
# capture), an ack and an unknown step.
steps() {
	local file=$1 n=0 op a b c try k all s
	mapfile -t all <"$file"
	for s in "${all[@]}"; do
		read -r op a b c <<<"$s"
		((++n))
		case $op in
		capture) capture "$work/$a" || { failed "$file" "$n" && return; } ;;
		confirm)
			try=1
			while judge "$work/$b" "${confirm[@]}" --action "$file" --step "$n" --try "$try" && ((rc == 3)); do
				rest "$c"
				capture "$work/$b" || { failed "$file" "$n" && return; }
				((++try))
			done
			((rc == 0)) || return
			;;
		keys)
			k="key_${a}[@]" why="no such key: $a"
			[[ -n ${!k:-} ]] && call_in "$work/condition" "${!k}" || { failed "$file" "$n" && return; }
			;;
		paste)
			call_in "$pastes/$a" "${load_buffer[@]}" && call_in "$work/condition" "${paste_if[@]}" ||
				{ failed "$file" "$n" && return; }
			;;
		rest) rest "$a" ;;
		ack) judge /dev/null "${ack[@]}" --action "$file" "$a" && return ;;
		pace) next_pause=$a ;;
		wake) on_wake ;;
		measure)
			IFS= read -r -d '' line <"$pastes/$a" || :
			run_bounded "$call_timeout" /dev/null "$work/diff.out" "$work/diff.err" ${capture_cap:+capped} "${diff_run[@]}" "$line"
			diff_said=(--diff-output "$work/diff.out")
			((rc == 0)) || { failure "$work/diff.err" && diff_said=(--diff-error "$why"); }
			;;
		*) why="a step this loop does not know: $op" && failed "$file" "$n" && return ;;
		esac
	done
	rm -f -- "$file"
}

# call_in IN ARGS...: runs ARGS under the wall clock, standard input from the
# file IN; fails, why set, when it did.
call_in() {
	run_bounded "$call_timeout" "$1" "$work/call.out" "$work/call.err" "${@:2}"
	((rc == 0)) || { failure "$work/call.err" && return 1; }
}

# failed FILE N: step N of the action FILE failed, for the reason in why; the ack removes FILE.
failed() { judge /dev/null "${ack[@]}" --action "$1" --failed-step "$2" "$why"; }

# act: carries out what the tick handed over, in lexical order.
act() {
	local f
	for f in "$state/actions/"*; do [[ ! -f $f ]] || steps "$f"; done
}

# poll: one tick of the loop. The probes run first, so the screen judged is
# the newest thing the loop saw.
poll() {
	local in=$work/pane
	# The judge (loop-env's judge_run): a coprocess in a group of its own,
	# without the loop's descriptors, its own errors in watcher.log.
	[[ -n $judge_pid || ${#judge_run[@]} -eq 0 ]] || {
		set -m && coproc JUDGE { exec "${judge_run[@]}" 2>>"$state/watcher.log" 7>&- 8>&- 9>&-; }
		judge_pid=$JUDGE_PID && set +m
	}
	args=("${tick[@]}" "${diff_said[@]}")
	# Said, not judged: the tick sets the pace after a wake.
	[[ -z $woken ]] || args+=(--woken)
	diff_said=()
	[[ -z $work_probe ]] || probe work "$work_probe"
	[[ -z $progress_probe ]] || probe progress "$progress_probe"
	capture "$in" || { args+=(--capture-error "$why") && in=/dev/null; }
	judge "$in" "${args[@]}"
	((rc == 0)) && act
	# Alerts (one a stopped watcher left too) and a group's page (groups.wait) go whatever
	# the tick said, by a deliverer the poll never waits for; an empty outbox costs none.
	local waiting=("$state/outbox/"*.alert)
	[[ ! -e ${waiting[0]} && ! -e $state/groups.wait ]] || apart deliverer "${deliver[@]}" --worker
}

# apart VAR COMMAND...: unless VAR's pid still runs, runs COMMAND beside the
# loop (its own group, none of the loop's fds, errors in watcher.log).
apart() {
	local -n pid=$1
	[[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && return 0
	set -m
	"${@:2}" </dev/null >/dev/null 2>>"$state/watcher.log" 7>&- 8>&- 9>&- &
	pid=$!
	set +m
}

# on_wake: a wake (USR1: an answer to type, an agent's hook) is a line on the
# loop's clock, which ends the pause it is in or the next one.
on_wake() { printf '\n' >&9; }

# pause SECONDS: waits until the next poll, in a read that a signal or a wake
# ends at once. A wake sets woken, and those within wake_gather_us
# microseconds of it make the same poll: a burst of hooks is one poll.
pause() {
	woken=''
	read -r -t "$1" -u 9 _ || return 0
	woken=1 && take_wakes "$wake_gather_us" || :
}

# rest USECS: waits that long whatever wakes come; a wake it took goes on to the pause.
rest() { ! take_wakes "$1" || on_wake; }

# take_wakes USECS: takes the wakes within USECS microseconds; succeeds when one came.
take_wakes() {
	local end=$((${EPOCHREALTIME/./} + $1)) left frac woke=1
	while left=$((end - ${EPOCHREALTIME/./})) && ((left > 0)); do
		printf -v frac '%06d' $((left % 1000000))
		! read -r -t "$((left / 1000000)).$frac" -u 9 _ || woke=0
	done
	return $woke
}

# on_interrupt: Ctrl-C in the watcher's own session, where an operator who
# attached to read it pressed it: it does not stop the watcher (stop does).
on_interrupt() { printf '%(%H:%M:%S)T %s\n' -1 "$interrupt_said"; }

# on_signal NAME NUMBER: the watcher is being stopped. Whatever runs ends with
# its group, the wake relay before the ssh master it uses (waited for, 10 s at
# most: it puts the multiplexer's options back), then the master is closed.
on_signal() {
	trap '' HUP INT TERM
	local was=$running g
	# The call under way and the deliverer (its send under way is written as
	# not delivered, for the next one) end with their groups, or in 2 s.
	for g in "$was" "$deliverer" "$judge_pid"; do [[ -z $g ]] || kill -TERM -- "-$g" 2>/dev/null; done
	# Said first, and recorded as a stop, not a death (the board shows the
	# watcher gone, not stale): whoever stopped it may be removing its files.
	log "stopped by SIG$1"
	run_bounded 5 /dev/null /dev/null /dev/null "${ack[@]}" --stopped "SIG$1"
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		{ kill -0 -- "-$was" || kill -0 -- "-$deliverer"; } 2>/dev/null && read -r -t 0.2 -u 9 _
	done
	for g in "$was" "$deliverer" "$judge_pid"; do [[ -z $g ]] || kill -KILL -- "-$g" 2>/dev/null; done
	# A group's page the stop made (ack, above) goes by a deliverer that outlives the loop.
	[[ ! -e $state/groups.wait ]] || apart last_deliverer "${deliver[@]}"
	[[ -z $relay ]] || { kill -TERM -- "-$relay" && for _ in {1..50}; do kill -0 -- "-$relay" && read -r -t 0.2 -u 9 _; done; } 2>/dev/null
	((${#close_master[@]} == 0)) || run_bounded 5 /dev/null /dev/null /dev/null "${close_master[@]}"
	kill "$watchdog" 2>/dev/null; wait "$watchdog" ${judge_pid:+"$judge_pid"} 2>/dev/null
	trap - "$1"
	exit $((128 + $2))
}

main() {
	local bin=${OMEGA_MONITOR_BIN:-} settings fifo
	[[ -n $bin ]] || bin=$(command -v omega-monitor)
	[[ -x $bin ]] || { say "the omega-monitor binary is not found (${bin:-not on PATH}; set OMEGA_MONITOR_BIN)" && return 2; }
	umask 077
	settings=$("$bin" loop-env --pid "$$" --loop-script "$0" "$@") || return
	[[ $settings != usage:* ]] || { printf '%s\n' "${settings//omega-monitor loop-env/omega-monitor.sh}" && return 0; }
	eval "$settings"
	mapfile -t functions < <(compgen -A function)
	# The state directory is this loop's for its whole life: the lock is on
	# descriptor 8, which only this shell keeps (calls run with it closed).
	exec 8>>"$state/loop.lock" && "${hold[@]}" || return 1
	work=$state/poll
	# Two fifos, each open both ways: fd 9, read with a timeout, is the clock;
	# fd 7, the watchdog's orders (not 10+: bash saves descriptors there).
	fifo=$work/fifo.$$
	mkfifo -m 600 -- "$fifo.9" "$fifo.7" && exec 9<>"$fifo.9" 7<>"$fifo.7" || { say "cannot make the fifos $fifo.*" && return 1; }
	rm -f -- "$fifo.9" "$fifo.7"
	trap 'on_signal HUP 1' HUP && trap 'on_signal INT 2' INT && trap 'on_signal TERM 15' TERM && trap on_wake USR1
	log "watching $target every ${interval}s (pid $$; wall clock ${call_timeout}s); settings: $settings_said"
	# In its own session (watch started it), the pane says what it is.
	[[ -z ${OMEGA_MONITOR_SESSION:-} ]] || { trap on_interrupt INT && printf '%s\n' "$banner"; }
	while :; do
		next_pause=$interval
		poll
		# A remote target's wake relay (loop-env's wake_relay: a listener for the
		# hooks on the host) after the poll, whose capture made the ssh master it uses.
		((${#wake_relay[@]} == 0)) || apart relay "${wake_relay[@]}"
		pause "$next_pause"
	done
}

[[ "${BASH_SOURCE[0]}" != "$0" ]] || { main "$@"; exit; }
