// Package capture is step 1 of a poll: the capture frame, both ways. It
// writes the command lines that print a frame (the local multiplexer's
// arguments, and the sh script run over ssh, which adds the agent's own
// status files and the session logs of Codex, Qwen Code and the agents
// whose descriptions give an events log, for the pane) and reads a frame
// back, with the agent's status files read here for a local pane. The rule
// that picks the status files of a pane lives here once, for Go and for the
// remote shell.
//
// A frame is the multiplexer's line on who is at the pane (MuxFormat; a
// frame without it says nothing of them); one header line (the pane's
// coordinate and working directory, separated by a tab: PaneFormat); from a
// remote host, the end of the agent's own record (a VitalsMark line for
// Claude Code's transcript, remoteTranscript, or a VitalsCodexMark line for
// Codex's session log, remoteCodexVitals; base64 lines; a VitalsEnd line),
// and the ends of the pane's recent Codex session logs (each a CodexLogMark
// line, base64 lines, a CodexLogEnd line), Qwen Code's records
// (QwenChatMark ... QwenChatEnd) and each agent's events logs (eventsMarks:
// [omega-monitor:events KEY] ... [omega-monitor:events-end KEY]); then
// each status file of the
// agent that names the pane, one line each, each followed by a StatusEnd
// line; then a PaneMark line; then the pane as capture-pane -p -J -e prints
// it. The agent's status comes before the pane, so nothing the pane shows
// can pose as one, and every record of the host's comes before the status
// files, in base64, so no text of a file can pose as a frame line.
//
// What the remote host sends is hostile: the header, each status and each
// record are read with caps, never whole, and a record that does not read
// is believed on none of it. It is not a judgement: what the screen means
// is classify's, what the status says is tick's.
package capture

import (
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/probe"
)

// The frame's format and marks.
const (
	MuxFormat  = MuxMark + " %s #{window_id} #{pane_pid} #{cursor_x}.#{cursor_y}.#{pane_width}.#{pane_height}.#{pane_in_mode}#{S: #{session_attached}:#{session_activity}#{window_id}}"
	MuxMark    = "[omega-monitor:mux]"
	PaneFormat = "#{session_name}:#{window_id}.#{pane_id}\t#{pane_current_path}"
	// TitleMark opens the line of the pane's title, as the program in the
	// pane set it (tmux's #{pane_title}): the agent's own word on its
	// state, for some agents (tick.TitleSays, which the poll reads).
	TitleMark   = "[omega-monitor:title]"
	TitleFormat = TitleMark + " #{pane_title}"
	StatusEnd   = "[omega-monitor:status-end]"
	PaneMark    = "[omega-monitor:pane]"
	VitalsMark  = "[omega-monitor:vitals]"
	VitalsEnd   = "[omega-monitor:vitals-end]"
	// VitalsCodexMark opens the block of a Codex session log's end, as
	// VitalsMark opens Claude Code's transcript's.
	VitalsCodexMark = "[omega-monitor:vitals-codex]"
	// ForegroundMark opens a remote frame's block on the pane's
	// foreground process group (remoteForeground): one ProcMark line a
	// process, then a ForegroundEnd line.
	ForegroundMark = "[omega-monitor:fg]"
	ProcMark       = "[omega-monitor:proc]"
	ForegroundEnd  = "[omega-monitor:fg-end]"
	// CodexLogMark opens the block of one of the pane's recent Codex
	// session logs (remoteCodexLogs): its last MaxStatusFile bytes in
	// base64, then a CodexLogEnd line.
	CodexLogMark = "[omega-monitor:codex-log]"
	CodexLogEnd  = "[omega-monitor:codex-log-end]"
	// QwenChatMark opens the block of one of the pane's recent Qwen Code
	// records (remoteQwenChats), as CodexLogMark a Codex log's; QwenChatEnd
	// ends it.
	QwenChatMark = "[omega-monitor:qwen-chat]"
	QwenChatEnd  = "[omega-monitor:qwen-chat-end]"
)

// MaxCodexLogs is how many of the pane's recent Codex session logs a frame
// carries, the newest: the pane's own Codex and a few others working in
// the same directory. More cannot be told apart from it (a log names no
// pane), and the bound keeps what they add, MaxCodexLogs × MaxStatusFile,
// at VitalsTail: no more than the agent's record itself. The remote script
// keeps as many (remoteCodexNewest).
const MaxCodexLogs = 4

// The caps the reader keeps (read.go), as the remote script writes them:
// the host sends no more than would be read.
const (
	maxStatusFileText = "65536"   // MaxStatusFile
	maxStatusText     = "1048576" // MaxStatus
)

// VitalsTail is how many of the last bytes of the agent's transcript a
// remote frame carries: the host is told no cursor, so every poll sends
// them, and more written between two polls is a gap (package vitals).
const (
	VitalsTail     = 256 << 10
	vitalsTailText = "262144"
)

// statusKey is the field by which an agent's status file names its pane:
// Claude Code keeps ~/.claude/sessions/<pid>.json with "tmux":"<pane>".
// A status file counts for a pane when it holds "statusKey":"<pane>".
const statusKey = "tmux"

// statusMark is the text a status file of pane holds.
func statusMark(pane string) string { return `"` + statusKey + `":"` + pane + `"` }

// Args are the multiplexer's arguments for a local capture frame of the
// pane t names (a pane id, %N, or coord.Exact of a session: its active
// pane): one call, five commands, so a poll costs one process. The
// multiplexer stops at the first command that fails, so a missing pane
// prints nothing.
func Args(t string) []string {
	return []string{
		"display-message", "-p", "-t", t, MuxFormat, ";",
		"display-message", "-p", "-t", t, PaneFormat, ";",
		"display-message", "-p", "-t", t, TitleFormat, ";",
		"display-message", "-p", "-t", t, PaneMark, ";",
		"capture-pane", "-p", "-J", "-e", "-t", t,
	}
}

// remoteFrame prints a capture frame for the session "$1" on the remote
// host, with the agent's status files for the pane (statusMark, in sh). It
// reads the files with shell builtins: one round trip, and no process per
// file. The header is asked for under a locale that says UTF-8: to any
// other, tmux prints the tab as "_", and the pane's id is then not found
// (tmux looks only at the variable's text: the locale need not be
// installed).
var remoteFrame = coord.RemoteFindMux +
	`h=$(LC_ALL=C.UTF-8 "$m" display-message -p -t "$1" '` + MuxFormat + `' ';' display-message -p -t "$1" '` + PaneFormat + `' ';' display-message -p -t "$1" '` + TitleFormat + `') || exit; ` +
	remoteMuxLine + remoteTitle + remoteOneLine +
	`printf '%s\n' "$h"; [ -z "$tl" ] || printf '%s\n' "$tl"; id=${h%%	*}; o=; k=0; b=; bu=; ` +
	remoteForeground +
	`for f in "$HOME"/.claude/sessions/*.json; do [ -f "$f" ] || continue; c=; n=0; ` +
	`while IFS= read -r l || [ -n "$l" ]; do c="$c$l"; n=$((n + ${#l})); [ "$n" -le ` + maxStatusFileText + ` ] || break; done <"$f"; ` +
	`case $c in *'"` + statusKey + `":"'"$id"'"'*) ` + remoteStatusCap + `o="$o$c` + "\n" + StatusEnd + "\n" + `"; ` + remoteFreshest + `;; esac; done; ` +
	remoteTranscript + remoteCodexFind + remoteCodexVitals + remoteCodexLogs + remoteQwenChats

// remoteFrameEnd sends what remoteFrame gathered, then the pane.
const remoteFrameEnd = `printf '%s' "$o"; printf '%s\n' '` + PaneMark + `'; exec "$m" capture-pane -p -J -e -t "$1"`

// remoteFreshest keeps in $b the session id of the freshest status file
// naming the pane (the largest updatedAt, the first of equals: the pick
// the witness makes, probe.FreshestWitness), and its time in $bu. An id
// that is not letters, digits and dashes is passed over, as a time that is
// not at most 18 digits counts as 0: no word of the file reaches a path or
// an arithmetic the shell could fail on. The Go side checks the id the
// host chose against its own pick before it counts anything.
const remoteFreshest = `i=${c#*'"sessionId":"'}; [ "$i" = "$c" ] && i=; i=${i%%'"'*}; ` +
	`u=${c#*'"updatedAt":'}; [ "$u" = "$c" ] && u=; u=${u%%[!0-9]*}; ` +
	`case $u in ''|???????????????????*) u=0 ;; esac; ` +
	`case $i in ''|*[!A-Za-z0-9-]*) ;; *) if [ -z "$b" ] || [ "$u" -gt "$bu" ]; then b=$i bu=$u; fi ;; esac; `

// remoteStatusCap passes over a status file naming the pane that is longer
// than the reader keeps (MaxStatusFile; its text as read, $c, is $n long),
// and every one past MaxStatus in all ($k): a file, or a host's thousands
// of them, costs no more to send than the reader would keep. The shell
// measures in characters, which in a UTF-8 locale may be up to four bytes
// each: the reader measures again in bytes. A file passed over counts for
// nothing here either (remoteFreshest), as it does not on the Go side.
const remoteStatusCap = `[ "$n" -le ` + maxStatusFileText + ` ] && [ $((k + n)) -le ` + maxStatusText + ` ] || continue; k=$((k + n + 1)); `

// remoteTranscript sends the end of Claude Code's transcript of session
// $b, ~/.claude/projects/<dir>/$b.jsonl (package vitals counts it): a
// VitalsMark line with the file's size, the session id and the folder's
// name ("-" when it is not Claude Code's [A-Za-z0-9-] form), then its last
// VitalsTail bytes as measured, in base64 (nothing in the transcript can
// pose as a frame line), then a VitalsEnd line. It comes before the status
// files: once a status line is read, no later line opens a record. The
// host keeps no cursor (the script is the same every poll); the Go side
// takes the bytes past what it read before, and says a gap where more was
// written between two polls than the tail holds.
const remoteTranscript = `[ -n "$b" ] && for f in "$HOME"/.claude/projects/*/"$b".jsonl; do ` +
	`[ -f "$f" ] && [ ! -h "$f" ] || continue; z=$(wc -c <"$f" 2>/dev/null); z=${z##*[!0-9]}; ` +
	`case $z in ''|???????????????????*) break ;; esac; n=` + vitalsTailText + `; [ "$z" -ge "$n" ] || n=$z; ` +
	`d=${f%/*}; d=${d##*/}; case $d in *[!A-Za-z0-9-]*) d=- ;; esac; ` +
	`printf '%s %s %s %s\n' '` + VitalsMark + `' "$z" "$b" "$d"; ` +
	`tail -c +$((z - n + 1)) "$f" 2>/dev/null | head -c "$n" | base64 2>/dev/null; ` +
	`printf '%s\n' '` + VitalsEnd + `'; break; done; `

// remoteMuxLine prints the first line of the two display-message printed,
// the multiplexer's on who is at the pane, and leaves the header in $h; a
// multiplexer that printed one line gave the header alone.
const remoteMuxLine = `mx=; case $h in '` + MuxMark + ` '*'` + "\n" + `'*) mx=${h%%` + "\n" + `*}; printf '%s\n' "$mx"; h=${h#*` + "\n" + `} ;; esac; `

// remoteForeground sends the pane's foreground process group, read from
// /proc with builtins (a host without it sends the block empty): the pane's
// own process (the mux line's fourth word, $mx) and its descendants, at most
// eight, breadth first, through the kernel's children lists; each that is
// in the group of the terminal's foreground (tpgid) is a ProcMark line of
// its id, its start time and group (words 20 and 3 of its stat after the
// name), then, after a unit separator, its name and its command line with
// its NULs and line breaks made unit separators (one tr a process). What a
// process's name or arguments say is read as hostile: a name or an argument
// cannot end the line, and the Go side caps and checks each word.
const remoteForeground = `printf '%s\n' '` + ForegroundMark + `'; pp=; us='` + "\x1f" + `'; ` +
	`if [ -n "$mx" ]; then set -f; set -- $mx; pp=$4; set +f; fi; case $pp in ''|*[!0-9]*) pp= ;; esac; ` +
	`if [ -n "$pp" ] && IFS= read -r l <"/proc/$pp/stat" 2>/dev/null; then ` +
	`r=${l##*) }; set -f; set -- $r; set +f; tp=$6; q=$pp; n=0; ` +
	`while [ "$n" -lt 8 ]; do set -f; set -- $q; set +f; [ $# -gt 0 ] || break; c=$1; shift; q=$*; n=$((n + 1)); ` +
	`case $c in ''|*[!0-9]*) continue ;; esac; IFS= read -r l <"/proc/$c/stat" 2>/dev/null || continue; ` +
	`cm=${l#*(}; cm=${cm%)*}; case $cm in *"$us"*) cm='?' ;; esac; r=${l##*) }; set -f; set -- $r; set +f; ` +
	`if [ "$3" = "$tp" ]; then a=$(tr '\037\n\000' '??\037' <"/proc/$c/cmdline" 2>/dev/null); ` +
	`printf '%s %s %s %s\037%s\037%s\n' '` + ProcMark + `' "$c" "${20}" "$3" "$cm" "$a"; fi; ` +
	`k=; IFS= read -r k <"/proc/$c/task/$c/children" 2>/dev/null; q="$q $k"; done; fi; ` +
	`printf '%s\n' '` + ForegroundEnd + `'; `

// remoteTitle takes the title line off the end of $h into $tl, cut at its
// first line break: a title is whatever a program in the pane set (a file
// cat'ed there can set it), and no line of it may pose as a frame line.
const remoteTitle = `tl=; case $h in *'` + "\n" + TitleMark + ` '*) tl=${h##*` + "\n" + `'` + TitleMark + ` '}; h=${h%` + "\n" + `'` + TitleMark + ` '*}; ` +
	`tl=${tl%%` + "\n" + `*}; tl="` + TitleMark + ` $tl" ;; esac; `

// remoteOneLine keeps the header one line: a working directory whose name
// holds a line break (a repository can ship one) would go on as frame
// lines, a status among them; its name is dropped instead, and the pane's
// directory is then unknown.
const remoteOneLine = `case $h in *'` + "\n" + `'*) h="${h%%	*}	" ;; esac; `

// remoteCodexFind finds, in one find, Codex CLI's session logs under
// $CODEX_HOME/sessions (default ~/.codex) whose first line names the pane's
// working directory: the one written last within the hour in $g (its
// activity is counted, remoteCodexVitals), and in $w1 to $w4, newest
// first, the newest MaxCodexLogs of those written in the last 5 minutes
// (their tails are the second witness, remoteCodexLogs). find prints a log
// a second time when it was written in the last 5 minutes: no second find,
// and no process per log. Only regular files are taken (-type f): a FIFO
// planted under that name would hold the shell's read until the script's
// time runs out, and a link could lead anywhere. Newer is told by the
// shell's -nt, no process either; no name is globbed (set -f).
const remoteCodexFind = `d=${h#*	}; x=${CODEX_HOME:-$HOME/.codex}/sessions; g=; w1=; w2=; w3=; w4=; p=; q=; ` +
	`if [ -d "$x" ]; then set -f; IFS='
'; for f in $(find "$x" -name 'rollout-*.jsonl' -type f -mmin -60 -print -mmin -5 -print 2>/dev/null); do ` +
	`if [ "$f" = "$p" ]; then [ -z "$q" ] || { ` + remoteCodexNewest + `}; continue; fi; p=$f q=; ` +
	`IFS= read -r l <"$f" || continue; case $l in *'"cwd":"'"$d"'"'*) q=1; ` +
	`if [ -z "$g" ] || [ "$f" -nt "$g" ]; then g=$f; fi ;; esac; done; unset IFS; set +f; fi; `

// remoteCodexNewest puts the log $f among the newest MaxCodexLogs kept,
// $w1 newest: however many logs a host holds, four names are kept, and a
// fifth older than them all is passed over.
const remoteCodexNewest = `if [ -z "$w1" ] || [ "$f" -nt "$w1" ]; then w4=$w3; w3=$w2; w2=$w1; w1=$f; ` +
	`elif [ -z "$w2" ] || [ "$f" -nt "$w2" ]; then w4=$w3; w3=$w2; w2=$f; ` +
	`elif [ -z "$w3" ] || [ "$f" -nt "$w3" ]; then w4=$w3; w3=$f; ` +
	`elif [ -z "$w4" ] || [ "$f" -nt "$w4" ]; then w4=$f; fi; `

// remoteCodexVitals sends, for a pane no Claude Code status file names,
// the end of the Codex log remoteCodexFind picked ($g), as remoteTranscript
// sends Claude Code's transcript: a VitalsCodexMark line with the log's
// size and its path under the sessions folder (YYYY/MM/DD/rollout-*.jsonl,
// "-" when it is not of that form), its last VitalsTail bytes in base64,
// then a VitalsEnd line.
const remoteCodexVitals = `[ -z "$b" ] && [ -n "$g" ] && { z=$(wc -c <"$g" 2>/dev/null); z=${z##*[!0-9]}; ` +
	`case $z in ''|???????????????????*) ;; *) n=` + vitalsTailText + `; [ "$z" -ge "$n" ] || n=$z; ` +
	`r=${g#"$x"/}; case $r in [0-9][0-9][0-9][0-9]/[0-9][0-9]/[0-9][0-9]/rollout-*.jsonl) ;; *) r=- ;; esac; ` +
	`printf '%s %s %s\n' '` + VitalsCodexMark + `' "$z" "$r"; ` +
	`tail -c +$((z - n + 1)) "$g" 2>/dev/null | head -c "$n" | base64 2>/dev/null; ` +
	`printf '%s\n' '` + VitalsEnd + `' ;; esac; }; `

// remoteCodexLogs adds Codex CLI's own word to the remote frame: the last
// MaxStatusFile bytes of each log remoteCodexFind kept (codexLogs reads
// them for a local pane), each a CodexLogMark line, the bytes in base64
// (a log's text may hold any line, a frame's mark among them), an empty
// line (base64 that does not end its last line cannot carry the end mark
// off), and a CodexLogEnd line. A tail may start mid-line; the tick skips
// what it cannot read. A host without base64 sends none: its logs are
// absent, and the screen decides alone.
const remoteCodexLogs = `if command -v base64 >/dev/null 2>&1; then for f in "$w1" "$w2" "$w3" "$w4"; do [ -n "$f" ] || continue; ` +
	`printf '%s\n' '` + CodexLogMark + `'; tail -c ` + maxStatusFileText + ` "$f" 2>/dev/null | base64 2>/dev/null; ` +
	`printf '\n%s\n' '` + CodexLogEnd + `'; done; fi; `

// remoteQwenChats adds Qwen Code's own word to the remote frame, as
// remoteCodexFind and remoteCodexLogs add Codex's: the records under
// $QWEN_HOME/projects (default ~/.qwen) of the pane's directory
// (remoteRecent); qwenChats reads them for a local pane.
var remoteQwenChats = remoteRecent(`${QWEN_HOME:-$HOME/.qwen}/projects`, `-path '*/chats/*.jsonl'`, `'"cwd":"'`, QwenChatMark, QwenChatEnd)

// remoteRecent sends an agent's recent logs of the pane's directory: in
// one find under root (a shell word, its variables expanded there) of the
// files the find test names, those written in the last 5 minutes, regular
// files only, whose first line names the pane's working directory ($d,
// after key, a shell word such as '"cwd":"'); the newest four of them,
// told by -nt, no name globbed (remoteCodexNewest); and the last
// MaxStatusFile bytes of each, a mark line, the bytes in base64, an empty
// line, an end line. A host without base64 sends none. Every argument is a
// constant of this package or a checked description's, quoted
// (remoteEvents): no host names a path here.
func remoteRecent(root, test, key, mark, end string) string {
	return `y=` + root + `; w1=; w2=; w3=; w4=; ` +
		`if [ -d "$y" ] && command -v base64 >/dev/null 2>&1; then set -f; IFS='
'; for f in $(find "$y" ` + test + ` -type f -mmin -5 -print 2>/dev/null); do ` +
		`IFS= read -r l <"$f" || continue; case $l in *` + key + `"$d"'"'*) ` + remoteCodexNewest + `;; esac; done; unset IFS; set +f; ` +
		`for f in "$w1" "$w2" "$w3" "$w4"; do [ -n "$f" ] || continue; ` +
		`printf '%s\n' '` + mark + `'; tail -c ` + maxStatusFileText + ` "$f" 2>/dev/null | base64 2>/dev/null; ` +
		`printf '\n%s\n' '` + end + `'; done; fi; `
}

// Remote is the command line for ssh that prints a capture frame of the
// pane t names (as Args), bounded on the remote side by secs, with the
// recent events logs of the agents logs describes.
func Remote(secs int, t string, logs []probe.EventsLog) string {
	script := remoteFrame
	for _, l := range logs {
		script += remoteEvents(l)
	}
	return coord.RemoteScript(secs, script+remoteFrameEnd, t)
}
