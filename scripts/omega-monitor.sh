#!/usr/bin/env bash
# omega-monitor.sh: the poll loop of omega-monitor. It watches one session,
# local or on an ssh host, forever:
#
#   capture the pane -> run the probes -> omega-monitor tick -> act -> sleep
#
# It holds every effect (multiplexer and ssh calls, the probes, typing a
# nudge, handing an alert to the funnel, sleeping) and no judgement: the Go
# binary decides what the screen means and what to do, and says so in one
# MONITOR line and in action files.
#
#   omega-monitor.sh <target> [--work-probe CMD] [--progress-probe CMD]
#                    [--nudge-budget N] [--interval SECONDS] [--nudge-text TEXT]
#                    [--mux PATH] [--ssh-config PATH]
#
# A watcher that dies or freezes while claiming to watch is worse than none,
# so: it never exits on an error (no set -e; every error is a rendered line),
# and every capture, probe and call runs under its own wall clock that ends
# its whole process group, so that a grandchild holding a pipe cannot freeze
# the loop. The only exits are --help, a refused command line (status 2,
# before the loop starts) and a signal (the watcher being stopped), which is
# passed on to whatever runs at the time.
#
# Environment: OMEGA_MONITOR_BIN (the Go binary, else omega-monitor on PATH),
# OMEGA_MONITOR_HOME (default ~/.omega/monitor), OMEGA_MONITOR_WATCHER (this
# watcher's session name), OMEGA_MONITOR_STATE (its state directory, default
# $OMEGA_MONITOR_HOME/<watcher>), OMEGA_MONITOR_MUX (the local multiplexer),
# OMEGA_MONITOR_TIMEOUT (the wall clock of one call, default 20 seconds),
# OMEGA_MONITOR_ALERT_SEND (the alert funnel, default
# ~/.omega/bin/omega-alert-send.sh).
#
# Written for bash 3.2 as on stock macOS: no mapfile, no associative arrays,
# no ${var,,}, and coreutils timeout only where it exists.

PROG=omega-monitor.sh

# The command line, set by parse_args.
target='' host='' session=''
work_probe='' progress_probe='' nudge_budget='' nudge_text='' nudge_text_set=''
interval=60 mux_flag='' ssh_config='' want_help=''

# The run's settings, set by setup.
state='' work='' logfile='' mux='' timeout_bin='' call_timeout=20 kill_grace=2
enter_delay=0.5 buffer='' warned_no_funnel=''
ssh_opts=()

# The process groups of whatever runs now, for the signal handler.
running=''

say() { printf '%s: %s\n' "$PROG" "$*" >&2; }

usage() {
	cat <<'EOF'
usage: omega-monitor.sh <target> [flags]

Watches one session forever and prints one MONITOR line per poll. A target is
a session name, or host:session where host is an ssh config alias.

  --work-probe CMD      shell command printing the amount of work remaining
  --progress-probe CMD  shell command printing a monotonic progress count
  --nudge-budget N      nudges without progress before escalating (default 5)
  --interval SECONDS    seconds between polls, 1 and up (default 60)
  --nudge-text TEXT     the text of a nudge
  --mux PATH            local multiplexer (default $OMEGA_MONITOR_MUX,
                        ~/.local/bin/rmux, tmux)
  --ssh-config PATH     ssh config for the host alias (default ~/.ssh/config)
EOF
}

# usage_error MESSAGE: says what is wrong with the command line; status 2.
usage_error() {
	say "$*"
	say "run $PROG --help for the flags"
	return 2
}

# parse_args ARGS...: reads the command line into the globals above. Status 2
# for a command line it refuses; want_help is set for --help.
parse_args() {
	local arg name ntargets=0
	while (($#)); do
		arg=$1
		shift
		case $arg in
		-h | -help | --help)
			want_help=1
			return 0
			;;
		--)
			while (($#)); do
				target=$1
				ntargets=$((ntargets + 1))
				shift
			done
			;;
		--work-probe | --progress-probe | --nudge-budget | --interval | --nudge-text | --mux | --ssh-config)
			if (($# == 0)); then
				usage_error "$arg needs a value"
				return 2
			fi
			set_option "$arg" "$1" || return 2
			shift
			;;
		--*=*)
			name=${arg%%=*}
			case $name in
			--work-probe | --progress-probe | --nudge-budget | --interval | --nudge-text | --mux | --ssh-config)
				set_option "$name" "${arg#*=}" || return 2
				;;
			*)
				usage_error "unknown flag $name"
				return 2
				;;
			esac
			;;
		-*)
			usage_error "unknown flag $arg"
			return 2
			;;
		*)
			target=$arg
			ntargets=$((ntargets + 1))
			;;
		esac
	done
	if ((ntargets != 1)); then
		usage_error "want one target (session, or host:session), got $ntargets"
		return 2
	fi
	check_target "$target"
}

# set_option FLAG VALUE: one flag's value, checked.
set_option() {
	case $1 in
	--work-probe) work_probe=$2 ;;
	--progress-probe) progress_probe=$2 ;;
	--nudge-text)
		nudge_text=$2
		nudge_text_set=1
		;;
	--mux) mux_flag=$2 ;;
	--ssh-config) ssh_config=$2 ;;
	--nudge-budget)
		if ! is_count "$2"; then
			usage_error "--nudge-budget must be a whole number, 0 and up; got '$2'"
			return 2
		fi
		nudge_budget=$((10#$2))
		;;
	--interval)
		if ! is_count "$2" || ((10#$2 < 1)); then
			usage_error "--interval must be a whole number of seconds, 1 and up; got '$2'"
			return 2
		fi
		interval=$((10#$2))
		;;
	esac
}

# is_count WORD: a whole number small enough for shell arithmetic.
is_count() {
	[[ $1 =~ ^[0-9]+$ && ${#1} -le 9 ]]
}

# The characters of a safe name, spelled out: a bracket range such as a-z
# can match accented letters in some locales.
safe_session_chars='ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-'

# check_target TARGET: splits "session" or "host:session" into host and
# session, refusing (status 2) any name that is not safe to hand to a shell
# or a multiplexer. The rules are coord.CheckSession and coord.CheckHost: rmux
# does not reject a bad name, it rewrites ':' and '.' to '_' and then acts on
# another session, so an unsafe name is refused, never mangled.
check_target() {
	local t=$1 why
	host='' session=$t
	if [[ $t == *:* ]]; then
		host=${t%%:*}
		session=${t#*:}
		if why=$(unsafe_reason host "$host"); then
			usage_error "refusing target '$t': unsafe host name '$host': $why"
			return 2
		fi
	fi
	if why=$(unsafe_reason session "$session"); then
		usage_error "refusing target '$t': unsafe session name '$session': $why"
		return 2
	fi
	return 0
}

# unsafe_reason KIND NAME: prints why NAME cannot be a KIND (session or host)
# and succeeds; fails, printing nothing, when the name is safe.
unsafe_reason() {
	local kind=$1 name=$2 allowed=$safe_session_chars i c
	[[ $kind == host ]] && allowed=$allowed.
	if [[ -z $name ]]; then
		echo "it is empty (an empty multiplexer target silently means the most recent session)"
		return 0
	fi
	if ((${#name} > 128)); then
		echo "it is longer than 128 bytes"
		return 0
	fi
	case $name in
	-*)
		echo "it starts with '-', which a command would read as a flag"
		return 0
		;;
	.*)
		if [[ $kind == host ]]; then
			echo "it starts with '.'"
			return 0
		fi
		;;
	esac
	for ((i = 0; i < ${#name}; i++)); do
		c=${name:i:1}
		case $allowed in
		*"$c"*) continue ;;
		esac
		case $c in
		. | :) echo "it contains '$c', which the multiplexer silently rewrites to '_'" ;;
		*) echo "it contains '$c' (allowed: letters, digits, '_' and '-'${allowed//[!.]/}; '.' in a host)" ;;
		esac
		return 0
	done
	return 1
}

# watcher_name HOST SESSION: the watcher's session name as coord.WatcherName
# makes it, for a loop started by hand without OMEGA_MONITOR_WATCHER.
watcher_name() {
	local h=$1 s=$2 name='' t
	if [[ -z $h ]]; then
		if [[ $s != *-* ]] && ! is_fingerprint "$s"; then
			name=monitor-$s
		fi
		t=$s
	else
		if [[ $h != *[-.]* ]]; then
			name=monitor-$h-$s
		fi
		t=$h:$s
	fi
	if [[ -n $name ]] && ((${#name} <= 128)); then
		printf '%s\n' "$name"
		return 0
	fi
	name=$(printf '%s' "$t" | sha256_hex) || return 1
	printf 'monitor-%s\n' "${name:0:16}"
}

is_fingerprint() {
	[[ ${#1} -eq 16 && $1 != *[!0123456789abcdef]* ]]
}

# sha256_hex: the SHA-256 of standard input, in hex, by whichever tool exists.
sha256_hex() {
	local sum
	if command -v sha256sum >/dev/null 2>&1; then
		sum=$(sha256sum)
	elif command -v shasum >/dev/null 2>&1; then
		sum=$(shasum -a 256)
	elif command -v openssl >/dev/null 2>&1; then
		sum=$(openssl dgst -sha256 -r)
	else
		return 1
	fi
	printf '%s\n' "${sum%% *}"
}

# resolve_mux: the local multiplexer, by the rule of coord.MuxBinary: --mux,
# else $OMEGA_MONITOR_MUX, else ~/.local/bin/rmux where it is executable
# (rmux is not on a non-interactive PATH), else tmux on PATH. Empty when there
# is none; each capture then renders that as its error.
resolve_mux() {
	mux=${mux_flag:-${OMEGA_MONITOR_MUX:-}}
	if [[ -z $mux ]]; then
		if [[ -n ${HOME:-} && -f $HOME/.local/bin/rmux && -x $HOME/.local/bin/rmux ]]; then
			mux=$HOME/.local/bin/rmux
		else
			mux=$(command -v tmux 2>/dev/null) || mux=''
		fi
	fi
}

# resolve_timeout: coreutils timeout (gtimeout where it is installed under
# that name, as on macOS with Homebrew), once; empty means the bash watchdog.
# A timeout that cannot take -k is not used.
resolve_timeout() {
	local t p
	timeout_bin=''
	for t in timeout gtimeout; do
		p=$(command -v "$t" 2>/dev/null) || continue
		if "$p" -k 1 5 true </dev/null >/dev/null 2>&1; then
			timeout_bin=$p
			return 0
		fi
	done
}

# run_bounded SECONDS IN OUT ERR COMMAND...: runs COMMAND with standard input
# from the file IN and its output in the files OUT and ERR, in a process group
# of its own, under a wall clock of SECONDS. It returns the command's status,
# or 124 when the clock ended it (137 when it took SIGKILL).
#
# The output goes to files, never to a pipe this shell reads, so a
# grandchild that keeps it open cannot hold the loop; once the command is
# over, whatever is left of its group is killed, so none outlives the call.
run_bounded() {
	local secs=$1 in=$2 out=$3 err=$4 pid rc
	shift 4
	if [[ -n $timeout_bin ]]; then
		# timeout puts itself and the command in a process group of
		# their own and signals the whole group when the clock runs out.
		"$timeout_bin" -k "$kill_grace" "$secs" "$@" <"$in" >"$out" 2>"$err" &
		pid=$!
		running=$pid
		rc=0
		wait "$pid" || rc=$?
	else
		rc=0
		run_watched "$secs" "$in" "$out" "$err" "$@" || rc=$?
		pid=$watched_pid
	fi
	{ kill -KILL -- "-$pid" || true; } 2>/dev/null
	running=''
	return "$rc"
}

# run_watched SECONDS IN OUT ERR COMMAND...: run_bounded without coreutils
# timeout. Job control (set -m) gives the command a process group of its own;
# a watchdog, in a group of its own too, signals that group when the clock runs
# out. The watchdog's output goes nowhere, so it never holds a pipe that the
# caller reads, and it is killed, with its sleep, as soon as the command is
# over. Sets watched_pid.
run_watched() {
	local secs=$1 in=$2 out=$3 err=$4 pid dog rc expired
	shift 4
	expired=$out.expired
	rm -f -- "$expired"
	set -m
	"$@" <"$in" >"$out" 2>"$err" &
	pid=$!
	watchdog "$secs" "$pid" "$expired" </dev/null >/dev/null 2>&1 &
	dog=$!
	set +m
	watched_pid=$pid
	running="$pid $dog"
	rc=0
	wait "$pid" || rc=$?
	# bash reports a job killed by a signal on stderr: not for these.
	{
		kill -KILL -- "-$dog" || true
		wait "$dog" || true
	} 2>/dev/null
	if [[ -e $expired ]]; then
		rm -f -- "$expired"
		((rc == 137)) || rc=124
	fi
	return "$rc"
}

# watchdog SECONDS PGID FLAG: after SECONDS, marks FLAG and ends the process
# group PGID: SIGTERM, then SIGKILL after the grace.
watchdog() {
	sleep "$1"
	: >"$3"
	kill -TERM -- "-$2" 2>/dev/null
	sleep "$kill_grace"
	kill -KILL -- "-$2" 2>/dev/null
}

# shell_quote WORD: WORD as one single-quoted POSIX shell word (as
# coord.ShellQuote), for a remote shell, which may be sh rather than bash.
shell_quote() {
	local q="'\\''"
	printf "'%s'" "${1//\'/$q}"
}

# shell_join WORD...: every word quoted, joined by spaces.
shell_join() {
	local w sep=''
	for w in "$@"; do
		printf '%s' "$sep"
		shell_quote "$w"
		sep=' '
	done
}

# remote_script finds the remote multiplexer by the local rule (on the remote
# host: $OMEGA_MONITOR_MUX, else ~/.local/bin/rmux where it is executable,
# else tmux) and runs it with the arguments after the first, bounded by the
# first (seconds) on the remote side too: coreutils timeout there, else a sh
# watchdog whose output goes nowhere, so that it never holds the ssh channel.
# It travels single-quoted, so $HOME and the rest expand there, never here.
# shellcheck disable=SC2016 # expanded by the remote shell
remote_script='m=${OMEGA_MONITOR_MUX:-}; '\
'if [ -z "$m" ]; then if [ -x "$HOME/.local/bin/rmux" ]; then m=$HOME/.local/bin/rmux; else m=tmux; fi; fi; '\
's=$1; shift; '\
'if command -v timeout >/dev/null 2>&1; then exec timeout -k 2 "$s" "$m" "$@"; fi; '\
'exec 3<&0; "$m" "$@" <&3 3<&- & p=$!; '\
'( trap '\''kill $w 2>/dev/null; exit 0'\'' TERM; sleep "$s" & w=$!; wait $w; kill -9 $p ) </dev/null >/dev/null 2>&1 3<&- & d=$!; '\
'wait $p; r=$?; kill $d 2>/dev/null; exit $r'

# remote_command SECONDS ARGS...: the command line to give ssh so that the
# remote multiplexer runs with exactly ARGS under a clock of SECONDS. ssh
# joins its arguments with spaces and the remote login shell parses them
# again, so each word is quoted for that shell: a '#S' format, a '$' or a ';'
# reaches the multiplexer untouched.
remote_command() {
	printf 'sh -c %s omega-monitor %s' "$(shell_quote "$remote_script")" "$(shell_join "$@")"
}

# mux_call IN OUT ERR ARGS...: the multiplexer with ARGS, on this machine or
# on the host, under the wall clock; standard input from the file IN.
mux_call() {
	local in=$1 out=$2 err=$3 remote_secs
	shift 3
	if [[ -z $host ]]; then
		if [[ -z $mux ]]; then
			echo "no multiplexer: ~/.local/bin/rmux is not executable and tmux is not on PATH (set --mux or OMEGA_MONITOR_MUX)" >"$err"
			: >"$out"
			return 127
		fi
		run_bounded "$call_timeout" "$in" "$out" "$err" "$mux" "$@"
		return
	fi
	# The remote side gives up a little before this side does.
	remote_secs=$((call_timeout > 2 ? call_timeout - 1 : call_timeout))
	if [[ $in == /dev/null ]]; then
		run_bounded "$call_timeout" "$in" "$out" "$err" ssh -n "${ssh_opts[@]}" -- "$host" "$(remote_command "$remote_secs" "$@")"
	else
		run_bounded "$call_timeout" "$in" "$out" "$err" ssh "${ssh_opts[@]}" -- "$host" "$(remote_command "$remote_secs" "$@")"
	fi
}

# set_ssh_opts: ssh's options for every call to the host. BatchMode keeps ssh
# from asking for anything; ConnectTimeout bounds the connect only and
# ServerAlive a connection that goes silent (the wall clock is still the real
# bound); one ControlMaster socket per watcher makes each call after the first
# cost a round trip instead of a handshake.
set_ssh_opts() {
	local connect=$((call_timeout / 2)) alive=$((call_timeout / 4)) control
	((connect >= 1)) || connect=1
	((alive >= 1)) || alive=1
	ssh_opts=(
		-o BatchMode=yes
		-o "ConnectTimeout=$connect"
		-o "ServerAliveInterval=$alive"
		-o ServerAliveCountMax=2
	)
	if control=$(control_path); then
		# The master lingers this long after the last call, so one left by
		# a loop killed without a chance to close it ends by itself.
		ssh_opts+=(-o ControlMaster=auto -o "ControlPath=$control" -o "ControlPersist=$((interval + 60))")
	else
		ssh_opts+=(-o ControlMaster=no -o ControlPath=none)
	fi
	if [[ -n $ssh_config ]]; then
		ssh_opts+=(-F "$ssh_config")
	fi
}

# control_path: the ControlMaster socket, in the state directory where the
# path is short enough for a unix socket (about 100 bytes), else in a
# directory of this user's under /tmp. Fails when neither will do.
control_path() {
	local p=$state/ssh-control dir sum
	if ((${#p} <= 100)); then
		printf '%s\n' "$p"
		return 0
	fi
	dir=/tmp/omega-monitor-$UID
	(umask 077 && mkdir -p -- "$dir") 2>/dev/null || return 1
	[[ -d $dir && -O $dir && ! -L $dir ]] || return 1
	chmod 700 -- "$dir" 2>/dev/null || return 1
	sum=$(printf '%s' "$state" | cksum) || return 1
	printf '%s/%s\n' "$dir" "${sum%% *}"
}

# close_master: ends this watcher's ssh ControlMaster, if one runs.
close_master() {
	[[ -n $host ]] || return 0
	local control
	control=$(control_path) || return 0
	[[ -S $control ]] || return 0
	run_bounded 5 /dev/null /dev/null /dev/null ssh -n "${ssh_opts[@]}" -O exit -- "$host"
}

# last_line FILE: the last non-empty line of FILE, at most 300 bytes.
last_line() {
	local line='' l
	[[ -f $1 ]] || return 0
	while IFS= read -r l || [[ -n $l ]]; do
		l=${l%$'\r'}
		[[ -n ${l//[[:space:]]/} ]] && line=$l
	done < <(tail -n 20 -- "$1" 2>/dev/null)
	printf '%s\n' "${line:0:300}"
}

# read_capped FILE: FILE's content, at most 4096 bytes, NULs dropped.
read_capped() {
	head -c 4096 -- "$1" 2>/dev/null | tr -d '\000'
}

# failure STATUS ERRFILE: describes a call that did not succeed.
failure() {
	local rc=$1 msg
	msg=$(last_line "$2")
	case $rc in
	124 | 137) echo "no answer within ${call_timeout}s" ;;
	255) if [[ -n $host ]]; then echo "ssh $host: ${msg:-exit 255}"; else echo "${msg:-exit 255}"; fi ;;
	*) echo "${msg:-exit $rc}${msg:+ (exit $rc)}" ;;
	esac
}

now() { date +%H:%M:%S; }

# log MESSAGE: one line in the watcher's own log.
log() {
	printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >>"$logfile" 2>/dev/null
}

# render STATE DETAIL: a MONITOR line of the loop's own, for what the tick
# could not say.
render() {
	printf 'MONITOR · %s · %s · %s · %s\n' "$target" "$1" "$2" "$(now)"
}

# capture: the pane into $work/pane. Sets capture_error when it failed.
capture() {
	local rc
	capture_error=''
	rc=0
	mux_call /dev/null "$work/pane" "$work/capture.err" capture-pane -p -J -e -t "=$session:" || rc=$?
	if ((rc != 0)); then
		capture_error=$(failure "$rc" "$work/capture.err")
	fi
}

# probe NAME COMMAND: runs a probe (work or progress) under the wall clock and
# adds its reading to tick_args: its output when it exited 0 in time, else
# why it failed (the Go side reads that as unknown).
probe() {
	local name=$1 rc
	rc=0
	run_bounded "$call_timeout" /dev/null "$work/$name.out" "$work/$name.err" /bin/sh -c "$2" || rc=$?
	if ((rc == 0)); then
		tick_args+=("--$name" "$(read_capped "$work/$name.out")")
		return
	fi
	case $rc in
	124 | 137) tick_args+=("--$name-error" "no answer within ${call_timeout}s") ;;
	*) tick_args+=("--$name-error" "$(failure "$rc" "$work/$name.err")") ;;
	esac
}

# tick_bin: the Go binary: $OMEGA_MONITOR_BIN, else omega-monitor on PATH.
tick_bin() {
	if [[ -n ${OMEGA_MONITOR_BIN:-} ]]; then
		printf '%s\n' "$OMEGA_MONITOR_BIN"
	else
		command -v omega-monitor 2>/dev/null
	fi
}

# tick: one judgement by the Go binary over the capture and the readings. It
# prints the MONITOR line, and succeeds when the actions it wrote may be
# acted on.
tick() {
	local bin in=$work/pane rc msg
	if [[ -n $capture_error ]]; then
		tick_args+=(--capture-error "$capture_error")
		in=/dev/null
	fi
	bin=$(tick_bin)
	if [[ -z $bin || ! -x $bin ]]; then
		render ERROR "cannot judge: the omega-monitor binary is not found (${bin:-not on PATH}; set OMEGA_MONITOR_BIN)"
		return 1
	fi
	rc=0
	run_bounded "$((call_timeout + 10))" "$in" "$work/tick.out" "$work/tick.err" "$bin" "${tick_args[@]}" || rc=$?
	if [[ -s $work/tick.err ]]; then
		log "tick: $(read_capped "$work/tick.err")"
	fi
	if ((rc != 0)); then
		case $rc in
		124 | 137) msg="no answer within $((call_timeout + 10))s" ;;
		*)
			msg=$(last_line "$work/tick.err")
			msg="${msg:-no message} (exit $rc)"
			;;
		esac
		render ERROR "omega-monitor tick failed: $msg"
		return 1
	fi
	if [[ ! -s $work/tick.out ]]; then
		render ERROR "omega-monitor tick printed no line"
		return 1
	fi
	printf '%s\n' "$(read_capped "$work/tick.out")"
	return 0
}

# act: does what the tick wrote in the actions directory, in lexical order,
# deleting each file once done. A file is deleted even when acting failed: a
# nudge typed late is unsafe, and the next tick judges afresh.
act() {
	local f
	for f in "$state/actions/"*; do
		[[ -f $f ]] || continue
		case $f in
		*.nudge) nudge "$f" ;;
		*.alert) alert "$f" ;;
		*) log "ignored the unknown action file $f" ;;
		esac
		rm -f -- "$f"
	done
}

# drop_actions: deletes actions that must not be acted on.
drop_actions() {
	local f
	for f in "$state/actions/"*; do
		[[ -f $f ]] || continue
		log "dropped the action $f: the tick did not finish"
		rm -f -- "$f"
	done
}

# needs_paste TEXT: whether send-keys could read TEXT as something else: a
# leading '-' (a flag), a trailing ';' (tmux's command separator), quotes,
# backslashes, control characters or anything not plain ASCII. Such text goes
# through the paste buffer, which no argument parser sees.
needs_paste() {
	local safe=' ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.,:!?()/_+=@%#*&<>[]{}|~^-' LC_ALL=C i c
	case $1 in
	-* | *\;) return 0 ;;
	esac
	for ((i = 0; i < ${#1}; i++)); do
		c=${1:i:1}
		case $safe in
		*"$c"*) ;;
		*) return 0 ;;
		esac
	done
	return 1
}

# nudge FILE: types the text in FILE into the watched pane as literal text,
# then Enter as a separate call (rmux needs it so, and an agent may read a
# fast "text and Enter" as a paste).
nudge() {
	local file=$1 text rc t=$exact
	text=$(cat -- "$file")
	if [[ -z $text ]]; then
		log "ignored an empty nudge $file"
		return
	fi
	if needs_paste "$text"; then
		rc=0
		mux_call "$file" "$work/send.out" "$work/send.err" load-buffer -b "$buffer" - || rc=$?
		if ((rc == 0)); then
			# -r: a newline stays a newline, not an Enter in mid-text.
			rc=0
			mux_call /dev/null "$work/send.out" "$work/send.err" paste-buffer -d -r -b "$buffer" -t "$t" || rc=$?
		fi
	else
		rc=0
		mux_call /dev/null "$work/send.out" "$work/send.err" send-keys -t "$t" -l "$text" || rc=$?
	fi
	if ((rc != 0)); then
		render ERROR "nudge not typed: $(failure "$rc" "$work/send.err")"
		log "nudge not typed: $(failure "$rc" "$work/send.err")"
		return
	fi
	sleep "$enter_delay"
	rc=0
	mux_call /dev/null "$work/send.out" "$work/send.err" send-keys -t "$t" Enter || rc=$?
	if ((rc != 0)); then
		render ERROR "nudge typed, Enter not sent: $(failure "$rc" "$work/send.err")"
		log "nudge typed, Enter not sent: $(failure "$rc" "$work/send.err")"
	fi
}

# alert FILE: hands the message in FILE to the alert funnel, or appends it to
# the watcher's log when no funnel is installed.
alert() {
	local file=$1 funnel rc
	funnel=${OMEGA_MONITOR_ALERT_SEND:-${HOME:-}/.omega/bin/omega-alert-send.sh}
	if [[ ! -f $funnel || ! -x $funnel ]]; then
		if [[ -z $warned_no_funnel ]]; then
			warned_no_funnel=1
			say "no alert funnel installed at $funnel: alerts are appended to $logfile"
			log "no alert funnel installed at $funnel: alerts are appended to this log"
		fi
		{
			printf '%s alert:\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
			cat -- "$file"
			printf '\n'
		} >>"$logfile"
		return
	fi
	# The funnel retries within its own deadline; the clock here is longer.
	rc=0
	OMEGA_ALERT_DEADLINE=${OMEGA_ALERT_DEADLINE:-60} \
		run_bounded 90 /dev/null "$work/alert.out" "$work/alert.err" "$funnel" "$(cat -- "$file")" || rc=$?
	if [[ -s $work/alert.err ]]; then
		log "alert funnel: $(read_capped "$work/alert.err")"
	fi
	if ((rc != 0)); then
		say "alert not delivered: $(failure "$rc" "$work/alert.err")"
		log "alert not delivered: $(failure "$rc" "$work/alert.err")"
	fi
}

# poll: one tick of the loop.
# The agent's own status, where it writes one: Claude Code keeps
# ~/.claude/sessions/<pid>.json naming the tmux pane it runs in; Codex CLI
# keeps a session log (rollout-*.jsonl) open while it runs, found among the
# open files of the processes under the pane's process $2 (Linux /proc).
# This script prints the file (a log's tail) for pane $1, read on the host
# where the agent runs.
# shellcheck disable=SC2016 # expanded by the sh that runs it
witness_script='for f in "$HOME"/.claude/sessions/*.json; do [ -f "$f" ] && grep -qF "\"tmux\":\"$1\"" "$f" && exec cat "$f"; done
[ -n "$2" ] && [ -d /proc/self/fd ] || exit 1
pids=$(ps -A -o pid= -o ppid= | awk -v root="$2" '"'"'{ up[$1] = $2 } END { in_[root] = 1; do { more = 0; for (p in up) if (!(p in in_) && (up[p] in in_)) { in_[p] = 1; more = 1 } } while (more); for (p in in_) print p }'"'"')
for pid in $pids; do
	f=$(ls -l /proc/"$pid"/fd 2>/dev/null | sed -n "s|.* -> \(/.*/sessions/.*/rollout-[^/]*\.jsonl\)\$|\1|p" | head -n 1)
	[ -n "$f" ] && exec tail -c 65536 "$f"
done
exit 1'

# witness: finds the watched pane's coordinate and the agent's status file
# for it, and hands both to the tick, which decides what they are worth.
# Nothing found is no witness: the screen decides alone.
witness() {
	local pane_id pane_pid rc=0
	mux_call /dev/null "$work/pane-id" "$work/pane-id.err" display-message -p -t "$exact" '#{session_name}:#{window_id}.#{pane_id} #{pane_pid}' || return 0
	pane_id=$(read_capped "$work/pane-id")
	pane_pid=${pane_id##* }
	pane_id=${pane_id% *}
	[[ $pane_id == *:@*.%* && $pane_pid =~ ^[0-9]+$ ]] || return 0
	if [[ -z $host ]]; then
		run_bounded "$call_timeout" /dev/null "$work/agent-status.json" "$work/agent-status.err" /bin/sh -c "$witness_script" omega-monitor "$pane_id" "$pane_pid" || rc=$?
	else
		run_bounded "$call_timeout" /dev/null "$work/agent-status.json" "$work/agent-status.err" \
			ssh -n "${ssh_opts[@]}" -- "$host" "sh -c $(shell_quote "$witness_script") omega-monitor $(shell_quote "$pane_id") $pane_pid" || rc=$?
	fi
	if ((rc == 0)) && [[ -s $work/agent-status.json ]]; then
		tick_args+=(--agent-status "$work/agent-status.json" --pane "$pane_id")
	fi
}

poll() {
	tick_args=(tick --state "$state" --target "$target")
	capture
	if [[ -z $capture_error ]]; then
		witness
	fi
	if [[ -n $work_probe ]]; then
		probe work "$work_probe"
	fi
	if [[ -n $progress_probe ]]; then
		probe progress "$progress_probe"
	fi
	if [[ -n $nudge_budget ]]; then
		tick_args+=(--nudge-budget "$nudge_budget")
	fi
	if [[ -n $nudge_text_set ]]; then
		tick_args+=(--nudge-text "$nudge_text")
	fi
	if tick; then
		act
	else
		drop_actions
	fi
	trim_log
}

# trim_log: keeps the watcher's log under about a megabyte.
trim_log() {
	local size
	[[ -f $logfile ]] || return 0
	size=$(wc -c 2>/dev/null <"$logfile") || return 0
	if ((size > 1048576)); then
		mv -f -- "$logfile" "$logfile.1"
	fi
}

# pause SECONDS: sleeps, in a way a signal interrupts at once.
pause() {
	sleep "$1" &
	running=$!
	wait "$running"
	running=''
}

# on_signal NAME NUMBER: the watcher is being stopped. Whatever runs now is
# ended with its process group, the ssh master is closed, and the loop exits.
on_signal() {
	local p
	trap '' HUP INT TERM
	for p in $running; do
		{
			kill -TERM -- "-$p" || kill -TERM "$p"
		} 2>/dev/null
	done
	if [[ -n $running ]]; then
		sleep 0.2
		for p in $running; do
			{
				kill -KILL -- "-$p"
				kill -KILL "$p"
			} 2>/dev/null
		done
	fi
	running=''
	close_master
	rm -rf -- "$work"
	log "stopped by SIG$1"
	trap - "$1"
	exit $((128 + $2))
}

# setup: the state directory, the settings resolved once, the signal traps.
setup() {
	local watcher home
	umask 077
	state=${OMEGA_MONITOR_STATE:-}
	if [[ -z $state ]]; then
		home=${OMEGA_MONITOR_HOME:-${HOME:-}/.omega/monitor}
		watcher=${OMEGA_MONITOR_WATCHER:-}
		[[ -n $watcher ]] || watcher=$(watcher_name "$host" "$session") || watcher=monitor-unnamed
		state=$home/$watcher
	fi
	mkdir -p -- "$state" 2>/dev/null || say "cannot create the state directory $state"
	chmod 700 -- "$state" 2>/dev/null
	logfile=$state/watcher.log
	work=$state/poll
	mkdir -p -- "$work" "$state/actions" 2>/dev/null
	if is_count "${OMEGA_MONITOR_TIMEOUT:-}" && ((10#$OMEGA_MONITOR_TIMEOUT >= 1)); then
		call_timeout=$((10#$OMEGA_MONITOR_TIMEOUT))
	fi
	buffer=omega-monitor-$$
	exact="=$session:"
	resolve_mux
	resolve_timeout
	set_ssh_opts
	trap 'on_signal HUP 1' HUP
	trap 'on_signal INT 2' INT
	trap 'on_signal TERM 15' TERM
	log "watching $target every ${interval}s (pid $$; wall clock ${call_timeout}s; ${timeout_bin:-bash watchdog})"
}

main() {
	parse_args "$@"
	case $? in
	0) ;;
	*) return 2 ;;
	esac
	if [[ -n $want_help ]]; then
		usage
		return 0
	fi
	setup
	while :; do
		poll
		pause "$interval"
	done
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
	main "$@"
	exit
fi
