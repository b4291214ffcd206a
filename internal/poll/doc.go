// Package poll is step 3 of the watcher: one poll's effects around the pure
// judgement of package tick, and the loop's checks around typing (Confirm,
// Ack) and its offline twin (Replay). It is what another Go program calls
// to embed the watcher; it never exits the process and parses no command
// line (Flags binds a poll's settings to a flag set the caller owns).
//
// One poll, from the loop's side (scripts/omega-monitor.sh, which holds
// every effect on the terminal) to the state directory (package statedir):
//
//	loop: wait, run the probes, capture the pane
//	  │
//	  ▼
//	capture.Read ──► ledger mask ──► classify ──► tick.Step
//	  (frame, status     (what we         (what the      (latches, budget,
//	   files, caps)       typed)           screen means)   actions, line)
//	  │
//	  ▼
//	Tick: record the nudge in the ledger first, save the state, hand the
//	      actions to DIR/actions and the alerts to DIR/outbox, append the
//	      history and monitor.log; print the MONITOR line
//	  │
//	  ▼
//	loop: capture ─► Confirm (before typing) ─► type ─► capture ─► Confirm
//	      (before Enter) ─► Enter ─► Ack (typed, not typed, Enter withheld)
//	      ─► deliver the outbox ─► wait
//
// Every rule about what a screen means lives in classify and tick; this
// package only carries readings to them and their decisions to disk.
package poll
