package main

import (
	"fmt"
	"time"

	"github.com/omega-monitor/omega-monitor/poll"
)

const tickUsage = `usage: omega-monitor tick --state DIR --target T [--work RAW | --work-error TEXT]
                         [--progress RAW | --progress-error TEXT] [--nudge-budget N]
                         [--nudge-text TEXT] [--capture-error TEXT] < pane

One poll's judgement over a captured pane (capture-pane -p -J, with -e for
the faint attribute). Prints one MONITOR line. What the shell must do is
written to DIR/actions/ as files, in the order to act on them:

  NNN.nudge   the exact text to type, then Enter as a separate call; it is
              already recorded in the echo ledger DIR/ledger
  NNN.enter   our text is in the input box already: Enter only
  NNN.wait    the seconds to wait before the next poll, instead of the
              interval: shorter after a wake (0.5, 0.5, 1, 2, 4 until
              the screen settles) and for a question not yet seen twice
              2s apart; longer for a running turn while the agent's hooks
              are heard (five intervals) and once the watched session is
              gone
  NNN.diff    a command (for sh -c, or for ssh to the target's host) that
              measures the diff of the pane's working directory, at most
              every 5 minutes; the next tick records its output

Leftover action files from an earlier poll are deleted first: a stale nudge
is unsafe. An escalation goes to DIR/outbox/ instead, one Telegram HTML
message a file, which no poll clears: omega-monitor deliver sends it. DIR
also holds state.json (written atomically, under DIR/state.lock),
history.jsonl (append-only, one JSON object a line) and monitor.log (every
line tick prints).

  --state DIR            the watcher's state directory (created 0700)
  --target T             session or host:session, as the MONITOR line names it
  --work RAW             the work probe's output (it exited 0 in time)
  --work-error TEXT      the work probe failed: the reading is unknown (fails open)
  --progress RAW         the progress probe's output
  --progress-error TEXT  the progress probe failed
  --work-e.Stderr TEXT     what the work probe said on standard error: the
                         reason given in the line when its output is no count
  --progress-e.Stderr TEXT the same for the progress probe
  --nudge-budget N       nudges allowed without progress (default 5)
  --nudge-text TEXT      what a nudge types
  --capture-error TEXT   the capture failed; standard input is not read
  --agent-status FILE    the agent's own status file (Claude Code's
                         ~/.claude/sessions/<pid>.json): a second witness that
                         can only stop a nudge; missing, stale or for another
                         pane, it changes nothing
  --pane ID              the watched pane as session:@window.%pane, which the
                         status file must name
  --frame                standard input is a capture frame (the pane's
                         coordinate and directory, the agent's status files,
                         then the pane), as the loop's capture prints it
  --agent-status-dir DIR the agent's status files on this machine (Claude
                         Code's ~/.claude/sessions): those naming the framed
                         pane are its own word
  --diff-output FILE     what the last poll's NNN.diff command printed: the
                         figure, into DIR/diff.json for the board
  --diff-error TEXT      that command failed: why (recorded as not measured)
  --interval N           the watcher's interval in seconds: no shorter wait
                         it asks for is as long
  --human-idle N         seconds a human's input holds pages, nudges (0: off)
  --woken                a wake (an agent's hook, an answer) brought this
                         poll: the screen is looked at again at a short,
                         growing pace until it settles
  --answers              the operator's chat answers questions (answers=on in
                         the Telegram config): a question relayed whose
                         dialog can be answered carries its options as
                         buttons, and the answers the relay took are typed
                         (a 000.answer action) when the screen still shows
                         that dialog; with --free-text (free_text=on), a
                         reply as the words of its free-text option too
  --explain              say on standard error what the classifier read, and
                         what the agent's own status said
  --now TIME             the poll's time, RFC 3339 (for tests; default: now)

It exits 0 after any judged poll, errors included (they are in the line),
and 2 for a usage error.
`

func runTick(e *Env, args []string) int {
	fs := newFlagSet("tick")
	stateDir := fs.String("state", "", "state directory")
	f := poll.AddFlags(fs)
	captureErr := fs.String("capture-error", "", "the capture failed")
	nowFlag := fs.String("now", "", "the poll's time, RFC 3339")
	framed := fs.Bool("frame", false, "standard input is a capture frame")
	statusDir := fs.String("agent-status-dir", "", "the agent's status files, on this machine")
	statusFile := fs.String("agent-status", "", "the agent's own status file")
	pane := fs.String("pane", "", "the watched pane")
	explain := fs.Bool("explain", false, "explain on standard error")
	diffOutput := fs.String("diff-output", "", "what the last poll's diff command printed")
	diffFailed := fs.String("diff-error", "", "the last poll's diff command failed")
	answers := fs.Bool("answers", false, "offer a relayed question's options as buttons")
	freeText := fs.Bool("free-text", false, "take a reply as the words of a free-text option")
	positional, code, ok := e.parse(fs, args, tickUsage)
	if !ok {
		return code
	}
	if len(positional) > 0 {
		fmt.Fprintf(e.Stderr, "omega-monitor tick: unexpected argument %q (the pane comes on standard input)\n", positional[0])
		return 2
	}
	if *stateDir == "" {
		fmt.Fprintln(e.Stderr, "omega-monitor tick: --state is required")
		return 2
	}
	if err := f.Check(); err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor tick: %v\n", err)
		return 2
	}
	now, ok := parseNow(e, *nowFlag)
	if !ok {
		return 2
	}
	return withDeadline(e, callDeadline, func(e *Env) int {
		local, rulesErr := poll.WatcherRules(e.Getenv)
		r := poll.Request{
			Dir: *stateDir, Flags: f, Local: local, RulesErr: rulesErr,
			CaptureError: *captureErr,
			Capture:      captureOptions(e, *framed, *statusDir),
			Now:          now,
			DiffOutput:   *diffOutput, DiffError: *diffFailed,
			Answers: *answers, FreeText: *freeText,
		}
		r.Capture.Pane, r.Capture.StatusFile = *pane, *statusFile
		if *explain {
			r.Explain = e.Stderr
		}
		line, err := poll.Tick(r, e.Stdin)
		fmt.Fprintln(e.Stdout, line)
		if err != nil {
			fmt.Fprintf(e.Stderr, "omega-monitor tick: %v\n", err)
		}
		return 0
	})
}

// parseNow reads --now, or takes the time now.
func parseNow(e *Env, flagValue string) (time.Time, bool) {
	if flagValue == "" {
		return e.Now(), true
	}
	t, err := time.Parse(time.RFC3339, flagValue)
	if err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor: --now %q is not an RFC 3339 time\n", flagValue)
		return time.Time{}, false
	}
	return t, true
}

func runOnChange(e *Env, args []string) int { return poll.RunOnChange(args, e.Getenv, e.Stderr) }
