// Package probe reads what a poll reads besides the screen: what a watched
// session's work and progress probes print, and the nudge budget that
// progress resets; the agent's own account of its state (a [Witness], from
// Claude Code's status file or Codex CLI's session log); who is at the
// pane ([Humans]); and the pane's foreground process group ([Foreground]),
// the only place keys of ours may go. The capture reads them, the tick
// weighs them: they are here so that neither reaches into the other.
//
// A probe is a shell command supplied per target that prints one integer;
// the poll loop runs it, under the loop's own wall clock. [ParseCount] reads
// the output strictly and [Read] turns it into a [Reading], which is either a
// known figure or unknown (printed as "?").
//
// The work probe fails open: a figure above zero means work remains
// (STALLED), exactly zero means none (BLOCKED), and anything else, including
// a probe that is missing, timed out or exited non-zero, is unknown and is
// treated as work remaining. A wrong nudge costs one turn and the budget
// bounds it; a wrong BLOCKED stops the build and nothing bounds it.
//
// A probe that exits non-zero has failed, whatever it printed. Note that
// grep -c exits 1 when it counts zero lines: write "grep -c PATTERN FILE ||
// true", which still prints nothing, and so reads as unknown, when FILE is
// missing.
//
// [Budget] bounds the absence of progress, not the work: every time the
// progress figure rises above its high-water mark the count of nudges resets
// to zero, and only Limit nudges in a row that produced nothing exhaust it.
// The budget is a plain value with no clock, safe to store as JSON.
//
// The package does not run probes, read panes or files, decide a session's state,
// send nudges or deliver alerts; those belong to the shell loop, classify
// and the tick. It touches no process, file or clock.
package probe
