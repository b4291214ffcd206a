package poll

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/printable"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
	"github.com/omega-monitor/omega-monitor/ledger"
	"github.com/omega-monitor/omega-monitor/tick"
)

// A Request is one poll, as the loop asks for it.
type Request struct {
	Dir      string   // the watcher's state directory
	Settings Settings // the watcher's, checked (CheckSettings)
	Readings Readings // the probes' readings, the wake
	// Local is the operator's rules file, and RulesErr why it could not
	// be read (said once, then the built-in rules apply).
	Local    *classify.Local
	RulesErr error
	// CaptureError says the capture failed: the pane is not read.
	CaptureError string
	Capture      capture.Options
	Now          time.Time
	// Explain, when not nil, is told what the classifier read and what
	// the agent's own status said.
	Explain io.Writer
	// DiffOutput is the file holding what the last poll's diff command
	// printed; DiffError why it failed.
	DiffOutput, DiffError string
}

// Tick is one poll's effects around tick.Step, in the steps of the
// design's diagram, each a method of the poll under way:
//
//	open     take the state directory: its lock, an answer or a nudge
//	         the loop left unfinished, the state and the operator's
//	         re-arming read
//	look     the echo ledger and the capture read, the witness found
//	judge    classify and step (no effect: the outcome is a value)
//	answers  the chat's answers judged for the screen just judged, and
//	         whether the offers of a question gone retire
//	commit   every write, in this order: the answer left refused, the
//	         unfinished nudge said, stale actions dropped, the rules'
//	         error marked, the re-arming taken, the chat's requests taken,
//	         the offers retired; the nudge recorded in the echo ledger,
//	         then the state saved, the vitals and the diff recorded, the
//	         actions handed to the loop and the alerts to the outbox, the
//	         history, the on-change command, the log
//
// The steps before commit read and decide; what they decide to write is
// kept in the pollRun for commit. Two writes stay in open: the state
// directory made (Prepare) and its lock taken, which the rest needs, and a
// corrupt state set aside (loadState), whose failure makes the state
// unusable for the judgement itself.
//
// It returns the MONITOR line, whatever went wrong (errors are in the
// line), and an error only when the log could not be written, or the state
// not saved again once its tally was found to count a line that went
// elsewhere.
func Tick(r Request, pane io.Reader) (string, error) {
	p := &pollRun{r: r, d: stateDirectory(r.Dir), now: r.Now}
	if line, refused := p.open(); refused {
		return line, nil
	}
	defer p.close()
	p.r.Readings = p.d.wokenBy(p.r.Readings)
	if rec, ok := p.d.readAccountReading(p.now, p.r.DiffOutput, p.r.DiffError, p.r.Local); ok {
		// The measure was the account's, not a diff's.
		p.accountRead, p.r.DiffOutput, p.r.DiffError = &rec, "", ""
	}
	p.look(pane)
	p.judge()
	p.answers()
	return p.commit()
}

// A pollRun is one poll under way: what each step found, for the next.
type pollRun struct {
	r   Request
	d   stateDirectory
	now time.Time
	cfg tick.Config
	// problems are rendered at the end of the line; unusable says why
	// no nudge may go out on this poll: without a state that is read and
	// saved, the budget cannot count it.
	problems []string
	unusable string
	lock     io.Closer

	prev       tick.State
	usable     bool
	restarted  bool
	rearmed    []tick.Event
	captureErr string
	capture    capture.Capture
	echo       classify.Masker
	witness    *tick.Witness
	said       string // what the witness said, for --explain

	next     tick.State
	out      tick.Outcome
	in       tick.Input
	halfNote string // an answer stopped half typed
	answered []tick.Event
	retired  string // the note of offers retired

	// What open and answers decided to write, for commit.
	staleAnswer string // an answer's action the loop never finished
	unfinished  string // the held line of a nudge the loop never finished
	rules       rulesMark
	resetFound  bool  // a reset request was read, to remove
	resetErr    error // why it could not be read
	// dropAt and resetAt are where in problems the errors of dropping
	// stale actions and of taking the reset go: the line says them in
	// the order the steps met them.
	dropAt, resetAt int
	requests        requests
	retirement      retirement
	// accountRead is the account the last tick asked the host for, read
	// (to record); accountAsk, the reading this one asks for (Agent set).
	accountRead *accountRecord
	accountAsk  accountRecord
}

func (p *pollRun) problem(msg string) { p.problems = append(p.problems, msg) }

// open takes the state directory. refused says nothing may be read from it
// or written into it: line says why.
func (p *pollRun) open() (line string, refused bool) {
	d, now, set := p.d, p.now, p.r.Settings
	p.cfg = config(set, p.r.Readings)
	if err := d.sd().Prepare(); errors.Is(err, statedir.ErrNotPrivate) {
		// A directory another user can write may hold planted actions,
		// state or links: nothing is read from it or written into it,
		// and nothing is typed or paged on its word.
		return tick.Line(set.Target, "ERROR", printable.String(err.Error())+
			": nothing written, nothing typed, nothing paged until it is yours alone", now.Format("15:04:05")), true
	} else if err != nil {
		p.problem(err.Error())
	}
	// The state lock covers the read-modify-write of the state and the
	// hand-over: two ticks at once would each spend the same budget.
	if lock, err := fsutil.Lock(d.path(statedir.StateLock)); err != nil {
		p.unusable = "the state could not be locked"
		p.problem("state lock: " + err.Error())
	} else {
		p.lock = lock
	}
	// An answer the loop never finished is refused, so that the chat
	// hears of it; then every stale action goes (commit).
	if stale := filepath.Join(d.path(statedir.Actions), "000"+AnswerSuffix); fileExists(stale) {
		p.staleAnswer = stale
	}
	// A nudge the loop never finished (it stopped, or no loop runs: a
	// poll by hand) leaves its poll's line held: said, as not known to be
	// typed.
	if held, err := d.readPending(); err == nil && held.Line != nil && fileExists(filepath.Join(d.path(statedir.Actions), held.Action)) {
		p.unfinished = held.Line.Say("nudge not finished: the loop never said what came of it")
	}
	p.dropAt = len(p.problems)
	prev, usable, err := d.loadState(now, set.NudgeBudget, true)
	if err != nil {
		p.problem(err.Error())
	}
	if !usable {
		p.unusable = "the state file is unusable"
	}
	// What the hooks proved is this loop's to learn: a watcher started
	// again (its agent's hooks perhaps removed meanwhile) looks at a
	// running turn at the interval until a hook announces a turn's end.
	p.restarted = prev.Polls > 0 && d.startedAfter(prev.LastPoll)
	if prev.HooksHeard && p.restarted {
		prev.HooksHeard = false
	}
	msg, mark := rulesOnce(p.r.Dir, p.r.RulesErr)
	if msg != "" {
		p.problem(msg)
	}
	p.rules = mark
	// The operator's re-arming is applied before the screen is judged: a
	// stalled agent may be nudged on this very poll. Its request is
	// removed as the poll commits, and the poll's state is not saved when
	// it cannot be: applied once.
	p.rearmed, p.resetFound, p.resetErr = d.readReset(&prev, usable && p.unusable == "")
	p.resetAt = len(p.problems)
	p.prev, p.usable = prev, usable
	return "", false
}

// close lets the state lock go.
func (p *pollRun) close() {
	if p.lock != nil {
		p.lock.Close()
	}
}

// look reads the echo ledger and the capture, and finds the witness.
func (p *pollRun) look(pane io.Reader) {
	p.captureErr = p.r.CaptureError
	if p.captureErr == "" {
		m, err := LoadLedger(p.d.path(statedir.Ledger))
		if err != nil {
			p.problem(err.Error())
		}
		p.echo = m
		p.capture, err = capture.Read(pane, p.r.Capture)
		if err != nil {
			p.captureErr = err.Error()
		}
	}
}

// judge classifies the screen and steps the tick. Its only effect is
// --explain's text.
func (p *pollRun) judge() {
	c := p.capture
	first := p.usable && p.unusable == "" && (p.prev.Polls == 0 || p.restarted)
	look := looking{cfg: p.cfg, readings: p.r.Readings, local: p.r.Local, hostWake: p.d.hostWake(),
		account: localAccount(c, p.r.Local, p.cfg.Target)}
	if look.account == nil {
		look.account = p.d.remoteAccount(c, p.r.Local, p.accountRead, &p.accountAsk)
	}
	witness := func(agent string) (*tick.Witness, string) {
		if p.captureErr != "" {
			return nil, "none"
		}
		return witnessFor(c, p.r.Local, agent, p.now)
	}
	p.next, p.out, p.in, p.said = look.judge(p.prev, p.now, c.Screen, p.captureErr, p.echo, witness, c.Humans, first, c.Title)
	p.witness = p.in.Witness
	p.out.Events = append(p.rearmed, p.out.Events...)
	if e := p.r.Explain; e != nil {
		if p.captureErr != "" {
			fmt.Fprintf(e, "no screen: %s\n", p.captureErr)
		} else {
			io.WriteString(e, p.in.Screen.Explain())
		}
		fmt.Fprintf(e, "  witness:  %s\n", p.said)
	}
	if c.Pane != "" {
		p.next.Pane, p.next.PaneDir = c.Pane, c.Dir
	}
	p.halfNote = halfTypedOver(&p.next, p.in.Screen, p.captureErr, c.Foreground, classify.Programs(p.r.Local, p.in.Screen.Agent))
	if p.unusable != "" {
		p.next, p.out = tick.Withhold(p.next, p.out, p.unusable)
	}
}

// answers judges the chat's answers for the screen just judged (commit
// takes each request once, whatever becomes of it, and hands an answer
// accepted to the loop as its own action), then decides whether the offers
// of a question that left the screen retire.
func (p *pollRun) answers() {
	set := p.r.Settings
	var offers statedir.OffersRecord
	var readErr error
	if p.captureErr == "" {
		offers, readErr = p.d.sd().ReadOffers()
	}
	rs, problems := p.d.judgeRequests(p.in.Screen, p.capture.Pane, p.captureErr, offers, readErr, p.now, set.Answers && set.FreeText)
	p.problems = append(p.problems, problems...)
	p.requests = rs
	p.retirement, p.retired = judgeRetire(&p.next, &p.out, p.cfg.Interval, p.in.Screen, p.capture.Pane, p.captureErr, rs.offers, readErr, p.now, &p.problems)
}

// commit writes what the poll decided, the nudge into the echo ledger
// before anything hands it over, and returns the line it logged.
func (p *pollRun) commit() (string, error) {
	d, now, set, c := p.d, p.now, p.r.Settings, p.capture
	saved := p.writeDecided()
	p.next, p.out = d.record(p.next, p.out, &p.problems)
	p.next.Board = tick.MarkBoard(p.prev.Board, p.in, p.out, pollState(p.in, p.next), pollExplain(p.in))
	// The poll's history lines and its log line are counted in the tally
	// as they are written: the history is held from here until they are,
	// and the log line is counted as it will read when nothing else goes
	// wrong (it says what became of the save, which is written before it).
	own := p.ownHistory()
	defer own.release()
	log := p.ownLog()
	p.next.Board.Tally = own.tally(string(d), now, p.prev.Board.Tally, log)
	if !saved {
		p.withholdUnsaved(own)
	} else if err := d.saveState(p.next); err != nil {
		p.problem(err.Error())
		p.withholdUnsaved(own)
	} else {
		own.saved, log.saved = own.counted, log.counted
	}
	if err := d.updateVitals(c, p.r.Capture, p.captureErr, now); err != nil {
		p.problem(err.Error())
	}
	// A poll that records a measure asks for none: diff.json is not read
	// back right after it is written.
	diffCmd := ""
	if p.r.DiffOutput == "" && p.r.DiffError == "" {
		diffCmd = d.diffWanted(now, p.next.PaneDir)
	} else if err := d.recordDiff(now, p.r.DiffOutput, p.r.DiffError, p.next.PaneDir); err != nil {
		p.problem(err.Error())
	}
	if err := d.recordAccount(now, p.accountRead, &p.accountAsk, p.r.Local, &diffCmd); err != nil {
		p.problem(err.Error())
	}
	p.out.Events = append(p.out.Events, p.answered...)
	handed := d.handOver(p.out, p.in.Screen, handOverOptions{now: now, diffCmd: diffCmd, pane: c.Pane, answers: set.Answers, freeText: set.Answers && set.FreeText,
		fg: c.Foreground, local: p.r.Local, witness: p.witness, half: p.next.HalfTyped}, &p.problems)
	d.groupStep(now, &p.problems)
	if err := own.append(); err != nil {
		p.problem(err.Error())
	}
	if own.saved && !own.asCounted {
		// The tally saved counts lines that did not go where it says:
		// saved again, counted from the files, which leaves the log's
		// line to the next read.
		p.next.Board.Tally = board.NextTally(string(d), now, p.prev.Board.Tally)
		if err := d.saveState(p.next); err != nil {
			p.problem(err.Error())
		}
		log.saved = false
	}
	// The operator's command for a change of state: started, not waited
	// for, under its own clock.
	if set.OnChange != "" {
		if change, ok := changeOf(string(d), set.Target, p.out.Events, p.in); ok {
			if err := startOnChange(string(d), set.OnChange, set.OnChangeTimeoutS, change); err != nil {
				p.problem(err.Error())
			}
		}
	}
	line, err := p.writeLine(handed, log)
	if log.saved && !log.asCounted {
		// The tally saved counts a line that did not go where it says
		// (a problem after the save, another writer first, no line
		// written): saved again, counted from the files.
		p.next.Board.Tally = board.NextTally(string(d), now, p.prev.Board.Tally)
		if serr := d.saveState(p.next); err == nil {
			err = serr
		}
	}
	return line, err
}

// tail is what the poll's MONITOR line says after its outcome's: the notes
// and the problems so far.
func (p *pollRun) tail() string {
	tail := answerNotes(p.answered) + p.retired + p.halfNote
	if len(p.rearmed) > 0 {
		tail += fmt.Sprintf(" · budget re-armed by %s (was %v)", p.rearmed[0].Fields["by"], p.rearmed[0].Fields["from"])
	}
	for _, msg := range p.problems {
		tail += " · error: " + printable.String(msg)
	}
	return tail
}

// writeLine logs the poll's line, or holds it with the pending nudge
// handed over, and says whether it went as log counted it. It returns the
// line logged ("" for one held).
func (p *pollRun) writeLine(handed *tick.Pending, log *logWrite) (string, error) {
	d, tail := p.d, p.tail()
	// Nothing a pane showed of a secret is kept or printed raw.
	line := alert.Redact(p.out.Line + tail)
	if held, ok := p.out.Held(); ok && handed != nil {
		// The line says the nudge once the loop has typed it or refused
		// to (outcome): it is held with the pending nudge until then.
		held = tick.HeldLine{Before: alert.Redact(held.Before), Nudge: alert.Redact(held.Nudge), After: alert.Redact(held.After + tail)}
		handed.Line = &held
		if err := d.writePending(*handed); err == nil {
			log.asCounted = log.line == ""
			return "", nil
		}
		// Said now rather than lost: the pending nudge is as handed over.
		line += " · error: the line not held for its nudge"
	}
	a, err := d.sd().WriteLog(p.now, line)
	log.asCounted = err == nil && line == log.line && a.Ino == log.ino && a.Offset == log.size && a.Bytes == len(statedir.LogLine(p.now, line))
	return line, err
}

// A logWrite is the poll's log line as it will read when nothing after
// the state's save goes wrong, and where the log ended when the poll
// looked: the tally the state keeps counts it there.
type logWrite struct {
	line string // "" when the poll holds its line with its nudge
	ino  uint64
	size int64
	// counted says the tally counts the line; saved that the state saved
	// holds that tally; asCounted that the line went where it says.
	counted, saved, asCounted bool
}

// ownLog is the poll's log line as it stands, and where the log ends.
func (p *pollRun) ownLog() *logWrite {
	l := &logWrite{}
	if _, held := p.out.Held(); held {
		return l
	}
	l.line = alert.Redact(p.out.Line + p.tail())
	ino, size, err := p.d.sd().LogEnd()
	if err == nil {
		l.ino, l.size = ino, size
	}
	return l
}

// withholdUnsaved withholds the poll's nudge when its state is not saved:
// the budget could not count it. The history says so.
func (p *pollRun) withholdUnsaved(own *historyWrite) {
	p.next, p.out = tick.Withhold(p.next, p.out, "the state could not be saved")
	own.render(p.now, p.r.Settings.Target, p.out.Events, p.answered)
}

// A historyWrite is the history lines of one poll, rendered before its
// state is saved so that the tally the state keeps counts them as the poll
// writes them, never read back: the history is held (its lock taken) from
// the count until the append, so that the lines go where they were
// counted.
type historyWrite struct {
	d       statedir.Dir
	lines   []byte
	err     error // why the lines could not be rendered, or the history held
	held    *statedir.HeldHistory
	counted bool // the tally counts the lines
	// saved says the state saved holds a tally that counts them;
	// asCounted that they went where it says.
	saved, asCounted bool
}

// ownHistory renders the poll's history lines and holds the history for
// them; a poll without lines holds nothing.
func (p *pollRun) ownHistory() *historyWrite {
	h := &historyWrite{d: p.d.sd()}
	h.render(p.now, p.r.Settings.Target, p.out.Events, p.answered)
	if len(h.lines) > 0 && h.err == nil {
		held, err := h.d.HoldHistory()
		if err != nil {
			h.err = fmt.Errorf("history not written: %v", err)
		}
		h.held = held
	}
	return h
}

// render renders the lines of the poll's events and the answers it took,
// as AppendHistory would.
func (h *historyWrite) render(now time.Time, target string, events, answered []tick.Event) {
	all := redactEvents(append(slices.Clip(events), answered...))
	h.lines, h.err = nil, nil
	if len(all) > 0 {
		h.lines, h.err = statedir.HistoryLines(now, target, all)
	}
}

// tally is the tally to keep: the files as they stand, the history's
// lines as they will be written, and the log's line as log counts it.
func (h *historyWrite) tally(dir string, now time.Time, prev json.RawMessage, log *logWrite) json.RawMessage {
	var hist, lg board.Own
	if h.held != nil {
		hist = board.Own{Ino: h.held.Ino, Size: h.held.Size, Lines: h.lines}
	}
	if log.line != "" {
		lg = board.Own{Ino: log.ino, Size: log.size, Lines: statedir.LogLine(now, log.line)}
	}
	t, counted := board.NextTallyAppending(dir, now, prev, hist, lg)
	h.counted, log.counted = counted.History, counted.Log
	return t
}

// append writes the lines, and says whether they went where the tally
// counted them.
func (h *historyWrite) append() error {
	if h.err != nil || len(h.lines) == 0 {
		h.asCounted = true
		return h.err
	}
	if h.held == nil {
		h.asCounted = true
		held, err := h.d.HoldHistory()
		if err != nil {
			return fmt.Errorf("history not written: %v", err)
		}
		h.held = held
	}
	a, err := h.held.Append(h.lines)
	h.asCounted = err == nil && a.Ino == h.held.Ino && a.Offset == h.held.Size && a.Bytes == len(h.lines)
	h.release()
	return err
}

// release lets the history go.
func (h *historyWrite) release() {
	if h.held != nil {
		h.held.Release()
		h.held = nil
	}
}

// writeDecided writes what open and answers decided, in the order the
// files saw these writes when each step wrote its own: the answer the loop
// left refused (its own line in the log), the unfinished nudge's line, the
// stale actions dropped, the rules' error marked, the reset request
// removed, the chat's requests taken, the offers retired. It returns false
// when the poll's state must not be saved: a reset applied whose request
// could not be removed would be applied again.
func (p *pollRun) writeDecided() (saveState bool) {
	d, now := p.d, p.now
	if p.staleAnswer != "" {
		d.answerOutcome(now, p.r.Settings.Target, p.staleAnswer, event.AnswerRefused, "the watcher did not finish typing it")
	}
	if p.unfinished != "" {
		d.sd().AppendLog(now, p.unfinished)
	}
	var dropMsg, resetMsg []string
	if err := d.sd().DropStaleActions(); err != nil {
		dropMsg = []string{err.Error()}
	}
	p.rules.write(string(d))
	saveState = true
	if p.resetFound {
		if err := d.sd().DropReset(); err != nil {
			resetMsg = []string{err.Error()}
			if len(p.rearmed) > 0 {
				// Not applied: the re-arming leaves the events and the
				// line, and the state it went into is not saved.
				p.out.Events = p.out.Events[len(p.rearmed):]
				p.rearmed, saveState = nil, false
			}
		} else if p.resetErr != nil {
			resetMsg = []string{p.resetErr.Error()}
		}
	}
	p.problems = slices.Concat(p.problems[:p.dropAt], dropMsg, p.problems[p.dropAt:p.resetAt], resetMsg, p.problems[p.resetAt:])
	answered, problems := d.takeRequests(p.requests, now)
	p.answered = answered
	p.problems = append(p.problems, problems...)
	if ev, ok := d.applyRetire(p.retirement, now, &p.problems); ok {
		p.out.Events = append(p.out.Events, ev)
	}
	return saveState
}

// hostWake reads where the wake relay of a remote target stands: "" for
// none, for a local target, and while its listener is down (it is said
// when the relay knows more).
func (d stateDirectory) hostWake() tick.HostWake {
	var rec statedir.RemoteWakeRecord
	if d.sd().ReadRecord(statedir.RemoteWake, &rec) != nil {
		return ""
	}
	switch rec.Status {
	case statedir.WakeListening:
		return tick.HostWakeListening
	case statedir.WakeAbsent:
		return tick.HostWakeAbsent
	case statedir.WakeOld:
		return tick.HostWakeOld
	}
	return ""
}

// judge is one poll's step from a captured screen to the tick's outcome,
// for tick and replay alike: classify with the echo ledger, look at the
// input box as drawn, then tick.Step. screen is nil when the capture failed.
//
// first says this is the watcher's first look (a fresh one's, or one whose
// loop started since the last poll): it nudges and pages nothing
// (tick.Input.FirstLook). A replay, offline, takes its first poll as any.
//
// title is the pane's title, the agent's own word for some agents.
func (l looking) judge(prev tick.State, now time.Time, s *classify.Screen, captureErr string, echo classify.Masker,
	witness func(agent string) (*tick.Witness, string), h tick.Humans, first bool, title string) (tick.State, tick.Outcome, tick.Input, string) {
	var screen classify.Result
	own := false
	if captureErr == "" && s != nil {
		opt := ClassifyOptions(l.readings.Work.Output, l.readings.Work.usable(), echo)
		opt.Local = l.local
		screen = classify.Classify(s, opt)
		screen, own = boxAsDrawn(s, screen, opt, l.cfg.NudgeText)
	}
	in := input(l.readings, now, screen, l.hostWake)
	if l.account != nil && screen.Hold == classify.HoldUsageLimit && prev.UsagePaged != tick.LineKey(screen.HoldLine.Text) {
		in.Account, in.AccountPending = l.account(screen.Agent) // read only for a limit about to be paged
	}
	in.FirstLook = first
	in.Title, in.Local = title, l.local
	in.CaptureError = captureErr
	in.Ledger = echo
	w, said := witness(screen.Agent)
	in.Witness = w
	in.OwnTextInBox = own
	if captureErr == "" {
		in.Humans = h
	}
	next, out := tick.Step(prev, l.cfg, in)
	return next, out, in, said
}

// noWitness is the witness of a screen judged without the agent's files (a
// replay).
func noWitness(string) (*tick.Witness, string) { return nil, "none" }

// witnessFor is the agent's own word for a screen of agent in the capture
// c, read from the kind of file its description names
// (classify.WitnessOf): from any kind for a screen of no agent, or of an
// agent no description knows; from none for an agent whose description
// names none. Another agent's log in the same directory says nothing of
// it.
func witnessFor(c capture.Capture, local *classify.Local, agent string, now time.Time) (*tick.Witness, string) {
	kind, known := classify.WitnessOf(local, agent)
	switch {
	case agent == "" || !known:
		return c.Witness(now)
	case kind == "":
		return nil, "none (" + agent + "'s description names no file of its own)"
	}
	return c.WitnessOfKind(now, kind)
}

// looking is what a poll judges a screen with besides the screen: the
// tick's configuration, the readings, the operator's rules, and where a
// remote target's wake relay stands.
type looking struct {
	cfg      tick.Config
	readings Readings
	local    *classify.Local
	// account reads the account of an agent of the pane (accountOf,
	// remoteAccount), or says it is being read; nil where none is read
	// (a replay).
	account  func(agent string) (key string, pending bool)
	hostWake tick.HostWake
}

// boxAsDrawn reads the input box of a STALLED screen without the echo
// ledger, which masks our own words in the transcript and must not mask
// them in the box: a box holding exactly our nudge text gets only the Enter
// (own is true); a box holding anything else is a human's draft and holds.
func boxAsDrawn(s *classify.Screen, screen classify.Result, opt classify.Options, text string) (classify.Result, bool) {
	if screen.State != classify.Stalled || (screen.Hold != classify.HoldNone && screen.Hold != classify.HoldDraft) {
		return screen, false
	}
	raw := screen
	if screen.Hold == classify.HoldNone && opt.Ledger != nil {
		opt.Ledger = nil
		raw = classify.Classify(s, opt)
	}
	if raw.Hold != classify.HoldDraft {
		return screen, false
	}
	if tick.OwnText(raw.Draft, text) {
		screen.Hold, screen.Draft, screen.HoldLine = classify.HoldNone, "", classify.Line{}
		return screen, true
	}
	screen.Hold, screen.Draft, screen.HoldLine = classify.HoldDraft, raw.Draft, raw.HoldLine
	return screen, false
}

// A stateDirectory is one watcher's directory: its state, echo ledger,
// history and the actions handed to the shell.
type stateDirectory string

// wokenBy tells a wake of the multiplexer's from any other: the mark
// wake --mux leaves before it wakes the loop, taken by the poll it brought.
// Where a hook's wake came with it, within the loop's gathering of wakes,
// the poll is taken as the multiplexer's.
func (d stateDirectory) wokenBy(r Readings) Readings {
	if r.Woken && os.Remove(d.path(statedir.MuxWoke)) == nil {
		r.Woken, r.MuxWoken = false, true
	}
	return r
}

func (d stateDirectory) path(name string) string { return filepath.Join(string(d), name) }
func (d stateDirectory) sd() statedir.Dir        { return statedir.Dir(d) }

// loadState reads the state. A missing file is a fresh start. A corrupt one,
// or one with values out of range, is kept aside when setAside says so (the
// tick's load; at most keepCorrupt copies), never overwritten, and the
// watcher starts with its budget of limit spent; without setAside it is
// left where it is and unusable. A state that cannot be read or kept aside
// (a directory, a file without permission) is unusable: usable is false,
// and the caller sends no nudge, since the budget could not count it.
// startedAfter says the loop that runs the tick (loop.json) started
// after t; false when no loop record is read.
func (d stateDirectory) startedAfter(t time.Time) bool {
	var rec statedir.LoopRecord
	return d.sd().ReadRecord(statedir.Loop, &rec) == nil && rec.StartedAt.After(t)
}

func (d stateDirectory) loadState(now time.Time, limit int, setAside bool) (s tick.State, usable bool, err error) {
	path := d.path(statedir.State)
	data, err := fsutil.ReadCapped(path, statedir.MaxState)
	if errors.Is(err, fs.ErrNotExist) {
		return s, true, nil
	}
	if err != nil && !errors.Is(err, fsutil.ErrTooLarge) {
		return s, false, fmt.Errorf("state file unusable, no nudge until it is fixed: %v", err)
	}
	why := ""
	switch {
	case err != nil:
		why = fmt.Sprintf("larger than %d bytes", statedir.MaxState)
	case json.Unmarshal(data, &s) != nil:
		why = "corrupt"
	case s.Version > tick.StateVersion:
		why = fmt.Sprintf("from a newer version (%d)", s.Version)
	default:
		if err := checkStateJSON(data, s); err != nil {
			why = err.Error()
		}
	}
	if why == "" {
		return s, true, nil
	}
	if !setAside {
		return tick.State{}, false, fmt.Errorf("state file %s, left for the next poll to set aside", why)
	}
	aside := d.path(statedir.State + corruptMark + now.UTC().Format("20060102T150405Z"))
	if rerr := os.Rename(path, aside); rerr != nil {
		return tick.State{}, false, fmt.Errorf("state file %s, unusable, no nudge until it is fixed (could not keep it aside: %v)", why, rerr)
	}
	d.dropOldCorrupt()
	// A state that cannot be read may have been damaged to win a fresh
	// budget: it starts spent, as if already escalated, and only progress
	// gives it back.
	s = tick.State{Version: tick.StateVersion}
	s.Budget.Limit, s.Budget.Used, s.BudgetLatch = limit, limit, true
	return s, true, fmt.Errorf("state file %s, kept as %s, started with the nudge budget spent (progress resets it)", why, filepath.Base(aside))
}

// corruptMark names a state file kept aside: state.json.corrupt-<time>.
const corruptMark = ".corrupt-"

// keepCorrupt is how many corrupt state files are kept, newest first: a
// host that corrupts the state every poll must not fill the disk.
const keepCorrupt = 2

// dropOldCorrupt removes all but the newest keepCorrupt corrupt copies.
func (d stateDirectory) dropOldCorrupt() {
	old, _ := filepath.Glob(d.path(statedir.State + corruptMark + "*"))
	sort.Strings(old) // the time in the name sorts them
	for len(old) > keepCorrupt {
		os.Remove(old[0])
		old = old[1:]
	}
}

// checkStateJSON refuses a state whose counters are null (JSON reads them
// as zero, a fresh budget) or out of range.
func checkStateJSON(data []byte, s tick.State) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	var budget map[string]json.RawMessage
	if b, ok := raw["budget"]; ok && string(b) != "null" {
		json.Unmarshal(b, &budget)
	}
	for _, k := range []string{"version", "polls", "budget"} {
		if v, ok := raw[k]; !ok || string(v) == "null" {
			return fmt.Errorf("without %s", k)
		}
	}
	for _, k := range []string{"limit", "used"} {
		if v, ok := budget[k]; !ok || string(v) == "null" {
			return fmt.Errorf("without budget.%s", k)
		}
	}
	if err := s.Check(); err != nil {
		return fmt.Errorf("out of range (%v)", pkgerr.Why(err))
	}
	return nil
}

// saveState writes the state atomically: a temporary file, fsync, rename
// (the directory left unsynced: statedir.Dir.Replace).
func (d stateDirectory) saveState(s tick.State) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("state not saved: %v", err)
	}
	if err := d.sd().Replace(statedir.State, append(data, '\n')); err != nil {
		return fmt.Errorf("state not saved: %v", err)
	}
	return nil
}

func writeAtomic(path string, data []byte) error { return atomicfile.Write(path, data, 0o600) }

// record records each nudge in the echo ledger before it is handed over. A
// nudge that cannot be recorded first is not sent: its echo would be read
// back as the agent's own words; its budget is given back, and the history
// says so instead of "nudge".
func (d stateDirectory) record(next tick.State, out tick.Outcome, problems *[]string) (tick.State, tick.Outcome) {
	for _, a := range out.Actions {
		if a.Kind != tick.Nudge {
			continue
		}
		if err := ledger.Record(d.path(statedir.Ledger), a.Text); err != nil {
			*problems = append(*problems, "nudge withheld, the echo ledger could not record it: "+err.Error())
			return tick.Withhold(next, out, "the echo ledger could not record it")
		}
	}
	return next, out
}

// handOver writes every action for the shell, as files in the order to act
// on them, and a nudge's judged screen as pending.json for the checks
// before typing and before Enter (confirm). A diff command, when one is
// due, comes last: it only measures.
// handOverOptions are what handOver needs besides the outcome: the poll's
// time, the diff command to run, the pane judged and whether a question's
// options are offered as buttons.
type handOverOptions struct {
	now      time.Time
	diffCmd  string
	pane     string
	answers  bool
	freeText bool
	// fg, witness and half are what a question's buttons are offered on:
	// the pane's foreground process group, the agent's own status, and an
	// answer stopped half typed (offerGate); local describes the agents
	// the operator added, whose programs the group must hold.
	fg      tick.Foreground
	local   *classify.Local
	witness *tick.Witness
	half    *tick.HalfTyped
}

func (d stateDirectory) handOver(out tick.Outcome, judged classify.Result, o handOverOptions, problems *[]string) (handed *tick.Pending) {
	now, diffCmd := o.now, o.diffCmd
	seq := 0
	os.Remove(d.path(statedir.Pending))
	var alerts, urgent, onTyped []string
	var joins []tick.Join
	for _, a := range out.Actions {
		switch {
		case a.Kind == tick.Alert && a.OnTyped && a.Group != nil:
			joins = append(joins, tick.Join{Group: *a.Group, Alone: a.Alert.HTML()})
		case a.Kind == tick.Alert && a.OnTyped:
			onTyped = append(onTyped, a.Alert.HTML()...)
		}
	}
	// An alert whose cause stopped other panes too joins the page of
	// that cause, and goes alone only when it cannot.
	out.Actions = d.joinGroups(out.Actions, now, problems)
	sd := d.sd()
	for _, a := range out.Actions {
		switch a.Kind {
		case tick.Nudge, tick.Enter:
			seq++
			name := fmt.Sprintf("%03d.nudge", seq)
			if a.Kind == tick.Enter {
				name = fmt.Sprintf("%03d.enter", seq)
			}
			p := tick.NewPending(name, a, judged, now)
			p.Notices, p.Joins = onTyped, joins
			if err := d.writePending(p); err != nil {
				*problems = append(*problems, "nudge not handed over: "+err.Error())
				continue
			}
			steps, pastes := nudgeSteps(name, a.Text, a.Kind == tick.Enter)
			if err := sd.WriteSteps(name, steps, pastes); err != nil {
				*problems = append(*problems, "nudge not handed over: "+err.Error())
				continue
			}
			handed = &p
		case tick.Alert:
			if a.OnTyped {
				// In the pending nudge, for the outbox once it is typed.
				continue
			}
			if k := a.Alert.Kind; k == alert.Question && o.answers {
				d.queueQuestion(a.Alert, judged, o, problems)
			} else if k == alert.Question || k == alert.Blocked {
				urgent = append(urgent, a.Alert.HTML()...)
			} else {
				alerts = append(alerts, a.Alert.HTML()...)
			}
		case tick.Wait:
			seq++
			if err := sd.WriteSteps(fmt.Sprintf("%03d.wait", seq), waitSteps(a.Wait), nil); err != nil {
				*problems = append(*problems, "wait not handed over: "+err.Error())
			}
		}
	}
	if diffCmd != "" {
		seq++
		name := fmt.Sprintf("%03d.diff", seq)
		if err := sd.WriteSteps(name, measureSteps(name+".sh"), map[string][]byte{name + ".sh": []byte(diffCmd)}); err != nil {
			*problems = append(*problems, "diff not handed over: "+err.Error())
		}
	}
	// Into the outbox, which no later poll clears: an alert waits there
	// until it is delivered or kept as failed. One call for the poll's
	// alerts, so that two escalations of one poll get names of their own.
	// A question or a block goes before everything waiting.
	if err := d.sd().QueueUrgent(now, urgent); err != nil {
		*problems = append(*problems, "alert not queued: "+err.Error())
	}
	if err := d.sd().QueueAlerts(now, alerts); err != nil {
		*problems = append(*problems, "alert not queued: "+err.Error())
	}
	return handed
}

// pollState is the poll's state name for the board, as the line says it
// (NO AGENT for a stopped screen no agent drew; WORKING for a stop the
// looks found moving): "?" without a screen.
func pollState(in tick.Input, next tick.State) string {
	if in.CaptureError != "" {
		return "?"
	}
	if next.Last != "" {
		return next.Last
	}
	return in.Screen.State.String()
}

// pollExplain is the explanation of the poll's verdict for the board.
func pollExplain(in tick.Input) string {
	if in.CaptureError != "" {
		return "no screen: " + in.CaptureError
	}
	return in.Screen.Explain()
}

// rulesOnce says a bad rules file's error once per watcher: it is said
// when it differs from the last one said, recorded in the state directory.
// It returns the error to render, or "" when already said, and the mark to
// write as the poll commits.
func rulesOnce(stateDir string, err error) (string, rulesMark) {
	if err == nil {
		return "", rulesMark{change: true}
	}
	msg := "rules: " + err.Error() + "; the built-in rules apply"
	if old, rerr := os.ReadFile(filepath.Join(stateDir, statedir.RulesReported)); rerr == nil && string(old) == msg {
		return "", rulesMark{}
	}
	return msg, rulesMark{change: true, said: msg}
}

// A rulesMark is the change to the record of the rules' error said last:
// none, removed (said is empty) or said.
type rulesMark struct {
	change bool
	said   string
}

func (m rulesMark) write(stateDir string) {
	mark := filepath.Join(stateDir, statedir.RulesReported)
	switch {
	case !m.change:
	case m.said == "":
		os.Remove(mark)
	default:
		os.WriteFile(mark, []byte(m.said), 0o600)
	}
}

// redactEvents scrubs the events' text before the history keeps them (a
// failure line, an evidence line, a nudge's text): no escape, bidi or
// zero-width character, and no secret.
func redactEvents(events []tick.Event) []tick.Event {
	out := make([]tick.Event, len(events))
	for i, e := range events {
		out[i] = e
		if len(e.Fields) == 0 {
			continue
		}
		fields := make(map[string]any, len(e.Fields))
		for k, v := range e.Fields {
			if s, ok := v.(string); ok {
				v = alert.Scrub(s)
			}
			fields[k] = v
		}
		out[i].Fields = fields
	}
	return out
}

// readReset applies the operator's reset request, if one waits, to the
// state prev: the event to record, or none; found says a request is there
// for commit to remove (readErr: one that could not be read, removed and
// said). A state that cannot be locked or read leaves the request waiting
// for a poll that can save it.
func (d stateDirectory) readReset(prev *tick.State, usable bool) (rearmed []tick.Event, found bool, readErr error) {
	if !usable {
		return nil, false, nil
	}
	r, ok, err := d.sd().ReadReset()
	if err != nil {
		return nil, true, err
	}
	if !ok {
		return nil, false, nil
	}
	by := printable.String(r.By)
	if by == "" {
		by = "the operator"
	}
	var ev tick.Event
	*prev, ev = tick.ResetBudget(*prev, by)
	return []tick.Event{ev}, true, nil
}
