package poll

// ReplayUsage is the usage of omega-monitor replay.
const ReplayUsage = `usage: omega-monitor replay FILE

Runs the tick logic over a recorded session, offline, with a simulated clock,
and prints each poll's MONITOR line followed by the actions it took:

  MONITOR · agent · STALLED · work=7 · progress=41 · nudged (1/5)
    → nudge: continue with the next step
    → alert: QUESTION · agent · Which format should the history use?

A recorded session is a txtar archive: free comment lines, then sections
that each start with a line "-- NAME --":

  flags          tick flags for the whole run, split as a shell splits words
                 (--target T, --nudge-budget N, --nudge-text TEXT, and
                 --start TIME in RFC 3339 for the first poll's time)
  NNN.pane       poll NNN's capture
  NNN.work       the work probe's raw output (absent: no probe)
  NNN.progress   the progress probe's raw output (absent: no probe)
  NNN.capture-error, NNN.work-error, NNN.progress-error
                 what failed on that poll

Polls run in NNN order, 60 s apart. Nudges are recorded in an echo ledger
kept in memory, as the watcher records them before they are typed.
`
