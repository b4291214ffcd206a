#!/usr/bin/env bash
# omega-monitor.sh: the poll loop of omega-monitor. It watches one session,
# local or on an ssh host, forever: probes -> capture -> tick -> act -> wait.
#
#   omega-monitor.sh <target> [flags]     (omega-monitor.sh --help)
#
# It holds the effects (the probes, the capture, typing a nudge, handing an
# alert to the funnel, waiting) and no rule: the Go binary resolves every
# setting once, at start (loop-env, whose assignments this script evals),
# locks the state directory (hold), judges each poll (tick), checks the screen
# before a nudge is typed and before its Enter (confirm), records what each
# action came to (ack) and hands the outbox to the funnel (deliver).
#
# A watcher that dies or freezes while claiming to watch is worse than none:
# no set -e (every error is a rendered line), and every call runs in a process
# group of its own under a wall clock that ends the whole group. The only exits
# are --help, a refused command line (status 2) and a signal, passed on to
# whatever runs at the time. Per poll: a forked shell per probe, one capture
# (over ssh, one round trip that also reads the agent's status), one tick, the
# diff when the tick asks; the clocks are builtins reading fifos. Bash 5. Env:
# OMEGA_MONITOR_BIN (else omega-monitor on PATH); the rest is loop-env's.

# shellcheck disable=SC2154 # the settings come from loop-env's assignments

PROG=omega-monitor.sh

# running is the process group of the call under way, for the signal handler;
# watchdog is the pid of the process that keeps the calls' wall clock.
running='' watchdog='' relay='' rc=0 why='' line='' next_pause=0 diff_said=() woken=''

say() { printf '%s: %s\n' "$PROG" "$*" >&2; }

# log MESSAGE: one line in the watcher's own log.
log() {
	printf '%(%Y-%m-%dT%H:%M:%S%z)T %s\n' -1 "$*" >>"$state/watcher.log" 2>/dev/null
}

# render STATE DETAIL: a MONITOR line of the loop's own, for what the tick
# could not say.
render() {
	printf '%(%H:%M:%S)T MONITOR · %s · %s · %s\n' -1 "$target" "$1" "$2"
}

# run_bounded SECONDS IN OUT ERR COMMAND...: runs COMMAND with standard input
# from the file IN and its output in the files OUT and ERR, in a process group
# of its own, under a wall clock of SECONDS that the watchdog keeps (0: none of
# ours). Sets rc to the command's status, or 124 when the clock ended it. One
# fork, and the builtin wait, which a signal interrupts. Once the command is
# over, whatever is left of its group is killed, so none outlives the call.
run_bounded() {
	local secs=$1 in=$2 out=$3 err=$4 start=${EPOCHREALTIME/./}
	shift 4
	((secs == 0)) || kill -0 "$watchdog" 2>/dev/null || start_watchdog
	set -m
	"$@" <"$in" >"$out" 2>"$err" 7>&- 8>&- 9>&- &
	running=$!
	set +m
	((secs == 0)) || printf 'arm %s %s\n' "$running" "$secs" >&7
	while :; do
		rc=0
		wait "$running" 2>/dev/null || rc=$?
		# A wake (USR1) ends the wait with the call still running: wait on.
		if ((rc <= 128)) || ! kill -0 "$running" 2>/dev/null; then
			break
		fi
	done
	((secs == 0)) || printf 'done\n' >&7
	((rc <= 128 || secs == 0 || ${EPOCHREALTIME/./} - start < secs * 1000000)) || rc=124
	kill -KILL -- "-$running" 2>/dev/null || :
	running=''
}

# watchdog: the wall clock of every call, a process of its own for the loop's
# life. Told "arm PGID SECONDS" when a call starts (again, if a signal moved
# the loop on) and "done" when it ends, it ends the call's group (TERM, KILL
# 2 s later) when the end does not come in time. It ends itself once the loop
# is gone, and holds no lock (fd 8: the next loop would wait) and none of the
# loop's output (a reader may be waiting to see it end).
watchdog() {
	local loop=$1 what pgid secs p s
	while :; do
		if ! read -r -t 5 what pgid secs <&7; then
			kill -0 "$loop" 2>/dev/null || exit 0
			continue
		fi
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
	local loop=$BASHPID
	watchdog "$loop" </dev/null >/dev/null 2>&1 8>&- 9>&- &
	watchdog=$!
}

# last_line FILE: the last non-blank line of FILE, at most 300 bytes, into $why.
last_line() {
	local l
	why=''
	while IFS= read -r l || [[ -n $l ]]; do
		l=${l%$'\r'}
		[[ -z ${l//[[:space:]]/} ]] || why=${l:0:300}
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
	line=''
	IFS= read -r -d '' line <"$1" || :
	line=${line:0:4096}
	while [[ $line == *$'\n' ]]; do line=${line%$'\n'}; done
}

# call NAME [IN]: runs the command line in the array NAME (set by loop-env)
# under the wall clock; standard input from the file IN. Sets rc and, on a
# failure, why.
call() {
	local cmd="$1[@]"
	run_bounded "$call_timeout" "${2:-/dev/null}" "$work/call.out" "$work/call.err" "${!cmd}"
	((rc == 0)) || failure "$work/call.err"
}

# capture FILE: the capture frame into FILE. Sets why when it failed.
capture() {
	why=$mux_error
	[[ -z $why ]] || return 1
	run_bounded "$call_timeout" /dev/null "$1" "$work/capture.err" "${capture[@]}"
	((rc == 0)) && return 0
	failure "$work/capture.err"
	return 1
}

# probe NAME COMMAND: runs a probe (work or progress) in the probe directory
# and adds its reading to args: its output when it exited 0 in time (and what
# it said on standard error, the reason when the output is no count), else
# why it failed (the tick reads that as unknown).
probe() {
	run_bounded "$call_timeout" /dev/null "$work/$1.out" "$work/$1.err" run_probe "$2"
	if ((rc == 0)); then
		read_capped "$work/$1.out"
		args+=("--$1" "$line")
		last_line "$work/$1.err"
		[[ -z $why ]] || args+=("--$1-stderr" "$why")
	else
		failure "$work/$1.err"
		args+=("--$1-error" "$why")
	fi
}

# run_probe COMMAND: a probe, in the shell run_bounded forked for it (an sh
# would cost a process start), without the loop's functions.
run_probe() {
	unset -f "${functions[@]}"
	cd -- "$probe_dir" || exit 125
	eval "$1"
}

# judge IN ARGS...: one call of the Go binary (tick, confirm or ack), its
# line printed. The binary bounds its own time (it exits 124 past its
# deadline): no clock of ours. Fails when the call says the action must not
# go on, or could not say anything.
judge() {
	local in=$1
	shift
	run_bounded 0 "$in" "$work/judge.out" "$work/judge.err" "$@"
	if [[ -s $work/judge.err ]]; then
		read_capped "$work/judge.err"
		log "$2: $line"
	fi
	read_capped "$work/judge.out"
	[[ -z $line ]] || printf '%(%H:%M:%S)T %s\n' -1 "$line"
	case $rc in
	0) return 0 ;;
	1) return 1 ;;
	124) why="no answer within its deadline" ;;
	*) last_line "$work/judge.err" && why="${why:-no message} (exit $rc)" ;;
	esac
	render ERROR "omega-monitor $2 failed: $why"
	return 1
}

# nudge FILE: types the nudge, but only on the screen it was judged for: a
# fresh capture is judged again before the text is typed, and once more
# before Enter, which is sent only when the input box holds exactly our text
# and no dialog is live. An enter-only action (our text already in the box)
# skips the typing. Each outcome is acked, whatever it is.
nudge() {
	local file=$1
	if ! capture "$work/fresh"; then
		judge /dev/null "${ack[@]}" --action "$file" nudge_not_typed "the capture before typing failed: $why"
		return
	fi
	judge "$work/fresh" "${confirm[@]}" --action "$file" --stage before || return
	if [[ $file != *.enter ]]; then
		rc=0
		[[ -z $paste ]] || call load_buffer "$file"
		((rc == 0)) && call type_text
		if ((rc != 0)); then
			judge /dev/null "${ack[@]}" --action "$file" nudge_not_typed "$why"
			return
		fi
		# Let the agent draw the text before looking at the box.
		rest 1
	fi
	if ! capture "$work/typed"; then
		judge /dev/null "${ack[@]}" --action "$file" enter_withheld "the capture before Enter failed: $why"
		return
	fi
	judge "$work/typed" "${confirm[@]}" --action "$file" --stage typed || return
	call enter
	if ((rc != 0)); then
		judge /dev/null "${ack[@]}" --action "$file" enter_withheld "Enter not sent: $why"
		return
	fi
	judge /dev/null "${ack[@]}" --action "$file" nudge_typed
}

# answer FILE: moves a dialog's cursor to the option the operator chose and
# presses Enter, only in the dialog the answer was accepted for: a fresh
# capture is judged before the first key, before Enter (the cursor must be
# on that option) and after it (the dialog must have moved on); a refusal is
# recorded by the judge. FILE's first line is the keys: up|down COUNT, and
# field or tab when the option takes the operator's words, which are its
# second line (see fill); or esc 1, the dialog's Esc, with no Enter after.
answer() {
	local file=$1 key n form words
	{ read -r key n form && IFS= read -r words; } <"$file"
	[[ $key =~ ^(up|down|esc)$ && $n =~ ^[0-9]{1,2}$ ]] || n=0
	step answer "$work/fresh" || return
	rc=0
	while ((n-- > 0 && rc == 0)); do call "key_$key"; done
	((rc == 0)) || { judge /dev/null "${ack[@]}" --action "$file" answer_refused "$why"; return; }
	rest 1
	# Esc is the whole answer: the dialog must be gone after it.
	if [[ $key == esc ]]; then
		step answered "$work/after" && judge /dev/null "${ack[@]}" --action "$file" answer_typed
		return
	fi
	step selected "$work/typed" || return
	if [[ $form == field || $form == tab ]]; then
		fill "$form" "$words" || return
	fi
	call enter
	((rc == 0)) || { judge /dev/null "${ack[@]}" --action "$file" answer_refused "Enter not sent: $why"; return; }
	rest 1
	step answered "$work/after" && judge /dev/null "${ack[@]}" --action "$file" answer_typed
}

# fill FORM WORDS: types the operator's words into the field of the option
# the cursor is on, and nowhere else: Tab first where Tab opens the field
# (FORM tab), and the field judged open and empty; then the words through
# the answer's own paste buffer, and the field judged to hold exactly them
# before the caller's Enter. Fails, the refusal recorded, when any of it
# does.
fill() {
	if [[ $1 == tab ]]; then
		call key_tab
		((rc == 0)) || { judge /dev/null "${ack[@]}" --action "$file" answer_refused "Tab not sent: $why"; return 1; }
		rest 1
		step opened "$work/opened" || return 1
	fi
	printf '%s' "$2" >"$work/words"
	call load_answer "$work/words"
	((rc == 0)) && call paste_answer
	rm -f -- "$work/words"
	((rc == 0)) || { judge /dev/null "${ack[@]}" --action "$file" answer_refused "the words were not typed: $why"; return 1; }
	rest 1
	step filled "$work/filled"
}

# step STAGE OUT: a fresh capture into OUT, judged for the answer's STAGE.
step() {
	if ! capture "$2"; then
		judge /dev/null "${ack[@]}" --action "$file" answer_refused "the capture failed: $why"
		return 1
	fi
	judge "$2" "${confirm[@]}" --action "$file" --stage "$1"
}

# act: does what the tick wrote in the actions directory, in lexical order.
# Each action's ack removes its file; a wait only sets the next pause (in
# seconds, a fraction allowed: the tick sets the pace, shorter than the
# interval after a wake, longer for a running turn while the agent's hooks
# are heard and when the session is gone); a
# diff is run, here or on the host, and what it said goes to the next tick.
act() {
	local f
	for f in "$state/actions/"*; do
		[[ -f $f ]] || continue
		case $f in
		*.nudge | *.enter) nudge "$f" ;;
		*.answer) answer "$f" ;;
		*.wait)
			read_capped "$f"
			rm -f -- "$f"
			[[ ! $line =~ ^[0-9]{1,6}(\.[0-9]{1,6})?$ ]] || next_pause=$line
			;;
		*.diff)
			IFS= read -r -d '' line <"$f" || :
			rm -f -- "$f"
			run_bounded "$call_timeout" /dev/null "$work/diff.out" "$work/diff.err" "${diff_run[@]}" "$line"
			diff_said=(--diff-output "$work/diff.out")
			((rc == 0)) || { failure "$work/diff.err" && diff_said=(--diff-error "$why"); }
			;;
		*) judge /dev/null "${ack[@]}" --action "$f" unknown ;;
		esac
	done
}

# poll: one tick of the loop. The probes run first, so the screen judged is
# the newest thing the loop saw.
poll() {
	local in=$work/pane
	args=("${tick[@]}" "${diff_said[@]}")
	# Said, not judged: the tick sets the pace after a wake.
	[[ -z $woken ]] || args+=(--woken)
	diff_said=()
	[[ -z $work_probe ]] || probe work "$work_probe"
	[[ -z $progress_probe ]] || probe progress "$progress_probe"
	if ! capture "$in"; then
		args+=(--capture-error "$why")
		in=/dev/null
	fi
	judge "$in" "${args[@]}" && act
	# Alerts go whatever the tick said: one left by a stopped watcher too.
	# An empty outbox costs no process.
	local waiting=("$state/outbox/"*.alert)
	[[ ! -e ${waiting[0]} ]] || judge /dev/null "${deliver[@]}"
}

# on_wake: a wake (USR1, from omega-monitor when something on the watched
# screen may have changed: an answer to type, an agent's hook) is a line on
# the loop's clock, which ends the pause it is in or the next one.
on_wake() { printf '\n' >&9; }

# pause SECONDS: waits until the next poll, in a read that a stop's signal
# or a wake ends at once (SECONDS may hold a fraction). A wake sets woken,
# and the wakes that come within wake_gather_us microseconds of it make the
# same poll: a burst of hooks is one poll, and hooks run in a loop cannot
# make the polls follow each other closer than that.
pause() {
	woken=''
	read -r -t "$1" -u 9 _ || return 0
	woken=1
	take_wakes "$wake_gather_us" || :
}

# rest SECONDS: waits that long whatever wakes come, and passes a wake it
# took on to the pause.
rest() {
	! take_wakes $(($1 * 1000000)) || on_wake
}

# take_wakes USECS: takes the wakes that come within USECS microseconds, and
# succeeds when one did.
take_wakes() {
	local end=$((${EPOCHREALTIME/./} + $1)) left frac woke=1
	while left=$((end - ${EPOCHREALTIME/./})) && ((left > 0)); do
		printf -v frac '%06d' $((left % 1000000))
		! read -r -t "$((left / 1000000)).$frac" -u 9 _ || woke=0
	done
	return $woke
}

# start_relay: the wake relay of a remote target (loop-env's wake_relay;
# none for a local target), which keeps a listener for the agent's hooks
# running on the host over the ssh master and wakes this loop. It runs in a
# process group of its own beside the loop, with none of the loop's
# descriptors, its lines in the watcher's log; it ends when the loop does,
# and is started again when it is gone.
start_relay() {
	((${#wake_relay[@]} > 0)) || return 0
	[[ -n $relay ]] && kill -0 "$relay" 2>/dev/null && return 0
	set -m
	"${wake_relay[@]}" </dev/null >/dev/null 2>>"$state/watcher.log" 7>&- 8>&- 9>&- &
	relay=$!
	set +m
}

# on_interrupt: Ctrl-C in the watcher's own session, where an operator who
# attached to read it pressed it: it does not stop the watcher (stop does).
on_interrupt() {
	printf '%(%H:%M:%S)T Ctrl-C does not stop this watcher of %s: detach with Ctrl-b d; stop it with: omega-monitor stop %s\n' -1 "$target" "$target"
}

# on_signal NAME NUMBER: the watcher is being stopped. Whatever runs now is
# ended with its process group, the wake relay with its own (before the ssh
# master it uses), the ssh master is closed, and the loop exits.
on_signal() {
	trap '' HUP INT TERM
	[[ -z $running ]] || kill -TERM -- "-$running" 2>/dev/null
	# Said first: whoever stopped the watcher may be removing its files.
	log "stopped by SIG$1"
	printf '%(%Y-%m-%d %H:%M:%S)T MONITOR · %s · stopped (SIG%s)\n' -1 "$target" "$1" >>"$state/monitor.log" 2>/dev/null
	if [[ -n $running ]]; then
		for _ in 1 2 3 4 5; do kill -0 -- "-$running" 2>/dev/null && read -r -t 0.2 -u 9 _; done
		kill -KILL -- "-$running" 2>/dev/null
	fi
	[[ -z $relay ]] || kill -TERM -- "-$relay" 2>/dev/null
	((${#close_master[@]} == 0)) || run_bounded 5 /dev/null /dev/null /dev/null "${close_master[@]}"
	# A stop, not a death: the board shows this watcher gone, not stale.
	TZ=UTC0 printf '{"at":"%(%Y-%m-%dT%H:%M:%SZ)T","by":"SIG%s"}\n' -1 "$1" >"$state/.ended.json" &&
		mv -f -- "$state/.ended.json" "$state/ended.json"
	kill "$watchdog" 2>/dev/null && wait "$watchdog"
	trap - "$1"
	exit $((128 + $2))
}

main() {
	local bin=${OMEGA_MONITOR_BIN:-} settings fifo
	[[ -n $bin ]] || bin=$(command -v omega-monitor)
	if [[ ! -x $bin ]]; then
		say "the omega-monitor binary is not found (${bin:-not on PATH}; set OMEGA_MONITOR_BIN)"
		return 2
	fi
	umask 077
	settings=$("$bin" loop-env --pid "$$" --loop-script "$0" "$@") || return
	if [[ $settings == usage:* ]]; then
		printf '%s\n' "${settings//omega-monitor loop-env/omega-monitor.sh}"
		return 0
	fi
	eval "$settings"
	mapfile -t functions < <(compgen -A function)
	# The state directory is this loop's for its whole life: the lock is on
	# descriptor 8, which only this shell keeps (calls run with it closed).
	if ! exec 8>>"$state/loop.lock" || ! "${hold[@]}"; then
		return 1
	fi
	work=$state/poll
	# Two fifos, each open both ways: fd 9, read with a timeout, is the clock;
	# fd 7, the watchdog's orders (not 10+: bash saves descriptors there).
	fifo=$work/fifo.$$
	if ! mkfifo -m 600 -- "$fifo.9" "$fifo.7" || ! exec 9<>"$fifo.9" 7<>"$fifo.7"; then
		say "cannot make the fifos $fifo.*"
		return 1
	fi
	rm -f -- "$fifo.9" "$fifo.7"
	trap 'on_signal HUP 1' HUP
	trap 'on_signal INT 2' INT
	trap 'on_signal TERM 15' TERM
	trap on_wake USR1
	log "watching $target every ${interval}s (pid $$; wall clock ${call_timeout}s); settings: $settings_said"
	# In its own session (watch started it), the pane says what it is.
	if [[ -n ${OMEGA_MONITOR_SESSION:-} ]]; then
		trap on_interrupt INT
		printf 'This is the watcher of %s: its lines follow. Detach with Ctrl-b d (it goes on);\n' "$target"
		printf 'stop it with: omega-monitor stop %s. Ctrl-C here does not stop it.\n' "$target"
	fi
	while :; do
		next_pause=$interval
		poll
		# After the poll: its capture made the ssh master the relay uses.
		start_relay
		pause "$next_pause"
	done
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
	main "$@"
	exit
fi
