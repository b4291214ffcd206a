package demo

// AgentScript draws Claude Code screens (era D: rule, ❯ prompt, rule, and a
// status bar) and reacts to what is typed into it. It works for AGENT_WORK
// seconds under a spinner, then stops on an idle screen and reads a line:
// each line it reads is appended to AGENT_LOG and starts another turn. After
// AGENT_ASK_AFTER lines (0: never), once idle for AGENT_ASK_IDLE seconds, it
// asks for a permission and keeps asking; a key pressed in that dialog is
// logged as "KEY IN DIALOG". AGENT_MODE=idle starts stopped, question starts
// in the dialog, draft starts stopped with a half-typed draft in the box,
// limit starts stopped by a usage limit (AGENT_LIMIT: the limit's line, as
// Claude Code words it) and goes on as usual at the first line it reads.
// AGENT_DIALOG=menu makes the dialog answerable as Claude Code's is: the
// arrow keys move its cursor, Enter chooses (logged as "ANSWER N LABEL")
// and the agent goes on; any other key is still "KEY IN DIALOG".
// AGENT_BOX says how the input box shows what is typed: echo (as typed),
// noecho (never: a release that draws its box elsewhere), placeholder (as
// "[Pasted text #1 +3 lines]", as Claude Code collapses a long paste).
// AGENT_STOP_HOOK is a command line run, as Claude Code runs its Stop hook,
// each time a turn ends and the idle screen is drawn (its output dropped).
// AGENT_STATUS_DIR, when set, is where it keeps its own status as Claude
// Code does (<pid>.json: busy, waiting on its dialog, idle; its pane; when
// written and when its status last changed). AGENT_REASK=N asks the same
// question again N times after an answer, AGENT_REASK_WORK seconds of work
// (default 0) between, as a model that retries the same command does.
// Run from a file named claude, its process is named as Claude Code's is.
//
// It is the demo's agent and the end-to-end tests' agent alike, and runs on
// bash 3.2.
const AgentScript = `# omega-monitor demo agent (see AgentScript in internal/demo/agent.go)
log=${AGENT_LOG:?AGENT_LOG is required}
work=${AGENT_WORK:-3}
ask_after=${AGENT_ASK_AFTER:-0}
ask_idle=${AGENT_ASK_IDLE:-5}
mode=${AGENT_MODE:-work}
draft=${AGENT_DRAFT:-half a thought I am still typing}
box=${AGENT_BOX:-echo}
dialog=${AGENT_DIALOG:-}
stop_hook=${AGENT_STOP_HOOK:-}
reask=${AGENT_REASK:-0}
reask_work=${AGENT_REASK_WORK:-0}
status_file='' pane='' last_status='' changed=0
if [ -n "${AGENT_STATUS_DIR:-}" ] && mkdir -p "$AGENT_STATUS_DIR"; then
	status_file=$AGENT_STATUS_DIR/$$.json
	pane=$(tmux display-message -p -t "$TMUX_PANE" '#{session_name}:#{window_id}.#{pane_id}')
fi
rule=''
for i in 1 2 3 4 5 6 7 8 9 10; do rule=$rule'──────────'; done
body1='⏺ Read 3 files (ctrl+o to expand)'
body2='⏺ The parser is fixed; next, the tests for the ledger.'
body3=''
received=0
tokens=1.2k

# screen LINES...: the whole screen, top to bottom.
screen() {
	printf '\033[H\033[2J'
	printf '%s\n' "$@"
}

# status STATUS [WAITING_FOR]: the agent's own status, as Claude Code keeps
# it, when AGENT_STATUS_DIR asks for it.
status() {
	[ -n "$status_file" ] || return 0
	local now
	now=$(date +%s)000
	[ "$1" = "$last_status" ] || changed=$now
	last_status=$1
	printf '{"pid":%d,"status":"%s","waitingFor":"%s","tmux":"%s","updatedAt":%s,"statusUpdatedAt":%s}\n' \
		$$ "$1" "${2:-}" "$pane" "$now" "$changed" >"$status_file.tmp" && mv "$status_file.tmp" "$status_file"
}

# add TEXT: a line of conversation, the oldest one scrolling away.
add() {
	body1=$body2 body2=$body3 body3=$1
}

working() {
	local s
	for ((s = 1; s <= ${1:-$work}; s++)); do
		status busy
		screen "$body1" "$body2" "$body3" '' "✻ Crunching… (${s}s · ↑ ${tokens} tokens)" '' "$rule" '❯ ' "$rule" \
			'  ⏵⏵ accept edits on (shift+tab to cycle) · esc to interrupt'
		sleep 1
	done
	add "⏺ Done: step $((received + 1)) of the plan is in place."
	stopped=1
}

# idle [PROMPT]: the stopped screen, the cursor in the input box.
idle() {
	status idle
	screen "$body1" "$body2" "$body3" '' "✻ Brewed for 12s" '' "$rule" "❯ $1" "$rule" \
		'  ⏵⏵ accept edits on (shift+tab to cycle)'
	printf '\033[8;%dH' $((3 + ${#1}))
}

question() {
	local at=1 key rest
	local labels=('Yes' "Yes, and don't ask again for rm commands" 'No')
	while :; do
		local opts=() i mark
		for ((i = 1; i <= ${#labels[@]}; i++)); do
			mark='  '
			((i == at)) && mark='❯ '
			opts+=(" $mark$i. ${labels[i - 1]}")
		done
		status waiting 'permission prompt'
		screen "$body1" "$body2" '' "$rule" ' Bash command' '' '   rm -rf build/' '   Remove the build directory' '' \
			' Do you want to proceed?' "${opts[@]}" '' ' Esc to cancel · Tab to amend'
		IFS= read -r -s -n 1 key || continue
		if [ "$dialog" = menu ]; then
			case $key in
			$'\e')
				IFS= read -r -s -n 2 -t 1 rest
				case $rest in
				'[A') ((at > 1)) && at=$((at - 1)) ;;
				'[B') ((at < ${#labels[@]})) && at=$((at + 1)) ;;
				esac
				continue
				;;
			'')
				printf 'ANSWER %d %s\n' "$at" "${labels[at - 1]}" >>"$log"
				add "⏺ Bash(rm -rf build/) answered: ${labels[at - 1]}"
				((reask > 0)) || return
				reask=$((reask - 1)) at=1
				status busy
				((reask_work == 0)) || working "$reask_work"
				continue
				;;
			esac
		fi
		printf 'KEY IN DIALOG %s\n' "$key" >>"$log"
	done
}

# readline: reads a line into $line, the input box showing it as $box says.
readline() {
	local c rc shown=''
	case $box in
	noecho)
		stty -echo
		IFS= read -r line
		rc=$?
		stty echo
		return $rc
		;;
	placeholder)
		stty -echo
		line=''
		while IFS= read -r -n 1 c; do
			[ -z "$c" ] && break
			line=$line$c
			if [ -z "$shown" ]; then
				idle '[Pasted text #1 +3 lines]'
				shown=1
			fi
		done
		rc=$?
		stty echo
		[ -n "$shown" ] || return 1
		return 0
		;;
	esac
	IFS= read -r line
}

case $mode in
question) question ;;
draft)
	idle "$draft"
	while IFS= read -r line; do
		printf '%s\n' "$line" >>"$log"
		idle "$draft$line"
	done
	exit 0
	;;
idle) ;;
limit)
	status idle
	screen "$body1" "  ⎿  ${AGENT_LIMIT:-}" '' "$rule" '❯ ' "$rule" '  ? for shortcuts'
	printf '\033[5;3H'
	readline || exit 0
	printf '%s\n' "$line" >>"$log"
	received=$((received + 1))
	add "❯ $line"
	working
	;;
*) working ;;
esac
while :; do
	idle ''
	if [ -n "$stop_hook" ] && [ -n "${stopped:-}" ]; then
		(eval "$stop_hook") </dev/null >/dev/null 2>&1
	fi
	stopped=''
	if ((ask_after > 0 && received >= ask_after)); then
		if ! IFS= read -r -t "$ask_idle" line; then
			question
		fi
	else
		readline || exit 0
	fi
	printf '%s\n' "$line" >>"$log"
	received=$((received + 1))
	add "❯ $line"
	working
done
`
