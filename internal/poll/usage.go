package poll

// The help of the commands the loop calls, which this package does the
// work of: what each takes, and the codes it exits with.

// TickUsage is omega-monitor tick's help.
const TickUsage = `usage: omega-monitor tick --state DIR [--work RAW | --work-error TEXT]
                         [--progress RAW | --progress-error TEXT] [--woken]
                         [--capture-error TEXT] [settings] < pane

One poll's judgement over a captured pane (capture-pane -p -J, with -e for
the faint attribute). Prints one MONITOR line.

The watcher's settings (target, budget, nudge text, interval, ...) are the
ones its loop checked once at its start and stored in DIR/loop.json: the
loop passes the state directory and the poll's readings, nothing else. The
settings flags set them for a poll by hand, in a directory no loop started
(--target is then needed), and override the record's. What the shell must do is
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
line tick prints). A poll that hands a nudge over prints no line: it is held
in DIR/pending.json and said by the nudge's last step (ack), as typed or
not; one no loop finished is said by the next poll.

  --state DIR            the watcher's state directory (created 0700)
  --target T             session or host:session, as the MONITOR line names it
  --work RAW             the work probe's output (it exited 0 in time)
  --work-error TEXT      the work probe failed: the reading is unknown (fails open)
  --progress RAW         the progress probe's output
  --progress-error TEXT  the progress probe failed
  --work-stderr TEXT     what the work probe said on standard error: the
                         reason given in the line when its output is no count
  --progress-stderr TEXT the same for the progress probe
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
  --free-text            see --answers
  --on-change CMD        the operator's shell command, run once per change of
                         state (omega-monitor on-change, in a session of its
                         own, not waited for), with the watcher, target, old
                         and new state, rule, work and progress in its
                         environment (OMEGA_MONITOR_*)
  --on-change-timeout N  its wall clock in seconds (default 20): past it its
                         process group is killed
  --explain              say on standard error what the classifier read, and
                         what the agent's own status said
  --now TIME             the poll's time, RFC 3339 (for tests; default: now)

It exits 0 after any judged poll, errors included (they are in the line),
and 2 for a usage error.
`

// ConfirmUsage is omega-monitor confirm's help.
const ConfirmUsage = `usage: omega-monitor confirm --state DIR --target T --action FILE
                            --step N [--try K] [--frame] < capture
       omega-monitor confirm --state DIR --target T --action FILE
                            --stage STAGE [--frame] < capture

The poll loop's look at a fresh capture, at the confirm step N of an
action's steps (the step names the stage), before a key of ours. Exits 0
when the loop may go on, having written the condition the next key is sent
on (the pane as this capture saw it: the multiplexer sends the key only
while it holds). Exits 3 when the screen is still being redrawn after a
key: the loop captures again and asks with --try K+1 (Go bounds the
tries). Otherwise it prints why in a MONITOR line (also in monitor.log),
records the outcome, removes the action, and exits 1.

  --state DIR             the watcher's state directory
  --target T              the watched target, as the MONITOR line names it
  --action FILE           the action file whose steps are checked
  --step N                the confirm step of the action's steps, from 1
  --stage STAGE           the stage, when no --step names it
  --try K                 the look at this step, from 1 (default 1)
  --frame                 standard input is a capture frame (default true)
  --nudge-text TEXT       what the nudge types: checked against the pending
                          nudge when given
  --agent-status-dir DIR  the agent's status files on this machine
  --now TIME              the time, RFC 3339 (for tests; default: now)

A nudge's stages: before (the same STALLED screen, an empty box) and typed
(before Enter: the box holds exactly our text). A refusal records
nudge_not_typed (nothing typed: budget given back), enter_withheld (typed,
spent; nothing more until the box reads back) or nudge_collided (a human
typed too).

An answer's (NNN.answer) stages: answer, before the first key (the dialog
the answer was accepted for, in its pane, the agent's process in the pane's
foreground, its own status waiting, its cursor where it was); at:N, after
each move (the cursor on option N); selected, before Enter (on the option
chosen); opened and filled, for the operator's words (after Tab, the field
open and empty; before Enter, holding exactly the words); answered, after
Enter. A refusal records answer_refused, with the keys that had reached the
terminal, as its result for the relay.
`

// AckUsage is omega-monitor ack's help.
const AckUsage = `usage: omega-monitor ack --state DIR --target T --action FILE EVENT [WHY] [--now TIME]
       omega-monitor ack --state DIR --target T --action FILE --failed-step N WHY
       omega-monitor ack --state DIR --target T --failed-call NAME WHY
       omega-monitor ack --state DIR --target T --stopped SIGNAL

Records what the poll loop did with an action, and removes its file. EVENT
is nudge_typed, nudge_not_typed, enter_withheld, alert_delivered,
alert_not_delivered, answer_typed or answer_refused (or unknown). Only a
nudge whose text never reached the terminal (nudge_not_typed) gives its
budget back. An answer's outcome is also its result, which the relay
reports in the chat.

--failed-step N: step N of the action's steps (a capture, a key or a
paste) failed, for the reason WHY the loop read (the multiplexer's or
ssh's last word): the outcome is Go's to say (a nudge not typed before its
text was pasted, Enter withheld after; an answer refused, with the keys
that had reached the terminal). A key the multiplexer did not send because
the pane changed since the last look is said as cancelled. Any failure is
said in a MONITOR line, which monitor.log keeps too.

--failed-call NAME: the loop's call of omega-monitor NAME (tick, confirm,
ack, deliver) failed or ran past its deadline, for the reason WHY: said in
an ERROR line, which monitor.log keeps too, so that logs and the board show
it.

--stopped SIGNAL: the loop is being stopped by SIGNAL (SIGTERM, SIGHUP,
SIGINT): said in monitor.log, and recorded as a stop (ended.json), so that
the board shows the watcher gone, not stale.
`

// DeliverUsage is omega-monitor deliver's help.
const DeliverUsage = `usage: omega-monitor deliver --state DIR --target T [--funnel PATH] [--worker]

Delivers the alerts waiting in DIR/outbox/ to each channel: the alert
funnel (--funnel, else $OMEGA_MONITOR_ALERT_SEND, else
~/.omega/bin/omega-alert-send.sh) and each line of the state home's
channels file (through omega-monitor-notify). The tick writes every
escalation there before anything tries to send it; the poll loop starts
deliver --worker when the outbox holds one, apart from the poll, and never
waits for it: a channel that hangs or is down delays no poll.

Each channel has its own queue, urgent alerts first, then the oldest. One
that fails is tried again with backoff ($OMEGA_ALERT_RETRY, 2s by default,
doubled, at most 30 s), the
alerts behind it waiting in order, until it takes the alert or the alert
is older than $OMEGA_ALERT_EXPIRY (a Go duration, 24h by default): then it
is said, and kept in alert-failed.log. An unreachable channel is no bad
line: it is tried again. An alert leaves the outbox once every channel has
it or gave up.

Each attempt is written in the alert's record (NAME.alert.sent) before it
starts, and its outcome after: an alert reaches a channel at most once
across stops, restarts and crashes. A send whose outcome was never written
(the deliverer died mid-send) may have happened: it is said, not repeated.
A stop (SIGTERM) ends the send under way and writes it as not delivered.

The funnel is run as FUNNEL --stdin, with the alert on its standard input,
never on its command line (which ps shows to every user); it must read it
to the end, and exit 0 when it delivered, 1 when it did not.

--worker: keep delivering until the outbox is empty, the loop that started
it is gone, or a signal ends it; without it, each channel is tried once for
each alert due. delivery.json in DIR says each channel's queue, last
delivery, last failure and the send under way, for the board.
`
