// Package classify decides what a captured agent screen means: WORKING (a
// turn is rendering now), QUESTION (a dialog waits for a human), STALLED
// (stopped, and work remains) or BLOCKED (stopped, and none remains).
//
// It reads the screen by its structure, the way the agent draws it: it finds
// the input box from the bottom, throws its content away, and reads only the
// live region around it (the block directly above the box, the status lines
// below it, or the dialog that replaced it). Nothing in the scrollback can
// make a screen WORKING or QUESTION. Every verdict carries the rule, region
// and line that decided it.
//
// It is pure and deterministic: no clock, no I/O beyond the reader it is
// given, no state between calls. It does not decide what to do about a
// verdict (nudge, escalate); that is the tick's job.
package classify

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// A State is what a screen means.
type State int

const (
	Working  State = iota + 1 // a turn is rendering right now: leave it alone
	Question                  // a dialog waits for a human answer: relay it, never answer it
	Stalled                   // stopped, and work remains (or the work probe could not say)
	Blocked                   // stopped, and the work probe says none remains
)

var stateNames = [...]string{Working: "WORKING", Question: "QUESTION", Stalled: "STALLED", Blocked: "BLOCKED"}

func (s State) String() string {
	if s >= Working && s <= Blocked {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// ParseState reads a state's name as String writes it.
func ParseState(name string) (State, bool) {
	for s := Working; s <= Blocked; s++ {
		if stateNames[s] == name {
			return s, true
		}
	}
	return 0, false
}

// A Region is a part of the screen that rules read.
type Region int

const (
	NoRegion Region = iota
	Above           // the live block directly above the input box
	Below           // the status lines below the input box
	Dialog          // the bottom of a screen whose input box is gone
	Box             // the input box itself
	Turn            // the last turn: above the input box, back to the human's last message
	Frame           // a dialog frame drawn directly above the input box
)

var regionNames = [...]string{
	NoRegion: "no region",
	Above:    "the block directly above the input box",
	Below:    "the status lines below the input box",
	Dialog:   "the bottom of the screen, where no input box is drawn",
	Box:      "the input box",
	Turn:     "the last turn, above the input box",
	Frame:    "the dialog frame directly above the input box",
}

func (r Region) String() string {
	if r >= NoRegion && r <= Frame {
		return regionNames[r]
	}
	return fmt.Sprintf("Region(%d)", int(r))
}

// A Hold says why nothing may be typed into a stopped screen now, whatever
// the work probe says.
type Hold string

const (
	HoldNone       Hold = ""
	HoldDraft      Hold = "draft"        // a human's text is in the input box
	HoldInterrupt  Hold = "interrupt"    // the operator interrupted the turn
	HoldKeyboard   Hold = "keyboard"     // a human is at the keyboard (Ctrl-C pressed once)
	HoldUsageLimit Hold = "usage-limit"  // a usage limit: a nudge before the reset is wasted
	HoldNoInputBox Hold = "no-input-box" // no input box on screen: nothing safe to type into
	HoldTurnOpen   Hold = "turn-open"    // the last turn shows no end: the agent may still be answering
)

var holdReasons = map[Hold]string{
	HoldDraft:      "a human's draft is in the input box; a nudge would type over it",
	HoldInterrupt:  "the operator interrupted the turn; the human owns this stop",
	HoldKeyboard:   "a human is at the keyboard (Ctrl-C pressed once)",
	HoldUsageLimit: "a usage limit stopped the agent; a nudge before the reset is wasted",
	HoldNoInputBox: "no input box is on the screen; there is nothing safe to type into",
	HoldTurnOpen:   "the last answer has no turn-end line after it; the agent may still be streaming it",
}

// Reason says in words why a hold holds.
func (h Hold) Reason() string { return holdReasons[h] }

// A Masker hides text the watcher itself typed into the session, so that
// an echo of our own words is never read as a signal. ledger.Matcher is one.
type Masker interface {
	Mask(line string) string
}

// A WorkReading is the work probe's output as the caller read it: Raw as
// printed, and N when Raw is a count (Known). It has the fields of
// probe.Reading, so classify.WorkReading(probe.Read(raw, ran)) is one; the
// classifier itself runs and parses nothing.
type WorkReading struct {
	Raw   string
	N     int64
	Known bool
}

// WorkRemains reports whether the reading leaves work to do: an unknown
// reading does (fail open), a count of zero does not.
func (w WorkReading) WorkRemains() bool { return !w.Known || w.N != 0 }

// Options are the inputs of a classification besides the screen.
type Options struct {
	// Work is the work probe's reading; WorkPresent says a probe ran.
	Work        WorkReading
	WorkPresent bool
	// Ledger masks our own text before anything is read. Nil masks nothing.
	Ledger Masker
	// Local holds an operator's rules file, read with the built-in
	// rules; nil for none.
	Local *Local
}

// A Result is a verdict and the reasons for it.
type Result struct {
	State State
	// Agent names the agent whose screen was recognised, if any.
	Agent string
	// Seen, when no agent was recognised, names an agent whose transcript
	// or marks show somewhere on the screen all the same (a frame caught
	// mid-redraw); empty when no agent's drawing is there at all: a shell,
	// an editor, the wrong window.
	Seen string
	// Rule names the rule that decided; Region is where it read.
	Rule   string
	Region Region
	// Evidence is the line that decided; its N is 0 when no single line
	// did (an idle screen is the absence of evidence).
	Evidence Line
	// From and To are the first and last line numbers of the region read;
	// Total is the number of lines in the capture.
	From, To, Total int
	// Work is the work probe's reading, for STALLED and BLOCKED.
	Work WorkReading
	// WorkPresent says a work probe ran.
	WorkPresent bool
	// Hold says why a nudge must wait, with the line that says so.
	Hold     Hold
	HoldLine Line
	// HoldText is the hold line with the lines it runs on to (an agent
	// that wraps its own text indents them), joined by single spaces: a
	// usage limit's reset may sit on the next line.
	HoldText string
	// Unsettled, on a stopped screen, names the rule that says the stop
	// may not be one (an answer with no end line under it may still be
	// streaming): never a verdict, only a reason to look again soon; the
	// tick decides from the looks. UnsettledLine is the line it read.
	Unsettled     string
	UnsettledLine Line
	// HoldRule names the rule that holds.
	HoldRule string
	// Live is the live region as read, after the ledger: the dialog for a
	// QUESTION, the block above the input box otherwise.
	Live []Line
	// Draft is the text in the input box, when a human's draft holds.
	Draft string
	// Source is FILE:LINE when the rule that decided, or held, came from
	// an operator's rules file; empty for a built-in rule.
	Source string
	// Startup says the rule that found the QUESTION reads a screen the
	// agent draws before or outside its composer (its onboarding, a
	// start-up menu): a human answers it at the terminal.
	Startup bool
	// Dialog is the live dialog, read for relaying: non-nil exactly when a
	// dialog is live anywhere on the screen (the State is then Question),
	// so a caller checking that no dialog holds the keyboard tests it.
	Dialog *DialogText
	// HasBox says a live input box is drawn; Input is what it holds, as
	// drawn (neither the ledger nor the draft rules have touched it,
	// faint placeholder text dropped when the capture carries attributes),
	// so a caller can check that the box holds exactly what it typed.
	HasBox bool
	Input  string
	// Body is the kept screen above the input box (the whole kept screen
	// when no box is drawn), as drawn: the ledger has NOT masked it, since
	// a caller diffing polls needs to mask only the lines that are new.
	Body []Line
}

// Classify reads a screen and decides what it means.
func Classify(s *Screen, opt Options) Result {
	// The structure (where the box is, where paragraphs end) is found on
	// the screen as drawn; the ledger masks only the lines a rule reads,
	// so that its cost does not grow with the scrollback.
	v := look(s.Lines, s.Attrs, opt.Local)
	v.masker = opt.Ledger
	r := decide(&v)
	r.Body = v.body
	if v.box != nil {
		r.HasBox = true
		r.Input = v.input(false)
	}
	r.Total = s.Total
	if r.State == 0 {
		r.Work, r.WorkPresent = opt.Work, opt.WorkPresent
		if !opt.WorkPresent {
			r.Work = WorkReading{} // no probe: unknown, whatever was passed
		}
		r.State = Stalled
		if !r.Work.WorkRemains() {
			r.State = Blocked
		}
	}
	return r
}

// ClassifyText is Classify over a capture held in memory.
func ClassifyText(capture string, opt Options) Result {
	return Classify(newScreen(capture, strings.Count(capture, "\n"), false), opt)
}

func maskLines(lines []Line, m Masker) []Line {
	out := make([]Line, len(lines))
	for i, l := range lines {
		out[i] = l
		if t := m.Mask(l.Text); t != l.Text {
			out[i].Text = strings.TrimRight(t, " ")
			out[i].Loud = strings.TrimRight(m.Mask(l.Loud), " ")
		}
	}
	return out
}

// A view is a screen cut into its regions.
type view struct {
	agent *agent
	shape *boxShape
	box   []Line // the input box, edges included; nil when none is drawn
	// prompt is the index in box of the prompt line.
	prompt int
	above  []Line // the live block directly above the box
	turn   []Line // the last turn, above the box
	below  []Line // the status lines below the box
	frame  []Line // a dialog frame directly above the box, if one is drawn
	// ambiguous says two agents draw the box found and no mark tells them
	// apart: the agent is unknown.
	ambiguous bool
	// dialog is the bottom of the screen when no live box is drawn, with
	// box side borders stripped.
	dialog []Line
	body   []Line // everything above the box, or the whole screen
	attrs  bool

	masker Masker
	local  *Local
	masked map[Region][]Line // regions read so far, after the ledger
}

// maxBelow is how many lines may follow an input box before the box is read
// as stale: the agent's status lines are few, and a box with a screenful
// under it is a frame left in the scrollback.
const maxBelow = 12

// dialogHeight is how many lines at the bottom are read as the dialog
// region when no input box is drawn.
const dialogHeight = 40

// maxBoxSearch is how far from the bottom an input box's prompt line is
// looked for.
const maxBoxSearch = 200

// maxAbove bounds the live block: a spinner with a long task list under it.
const maxAbove = 60

// look cuts the lines into regions around the lowest input box, the
// agents local describes read with the built-in ones.
func look(lines []Line, attrs bool, local *Local) view {
	end := len(lines)
	for end > 0 && isBlank(lines[end-1].Text) {
		end--
	}
	lines = lines[:end]
	v := view{attrs: attrs, body: lines, local: local}
	bestTop, bestPrompt, bestEnd := -1, -1, -1
	ambiguous := false
	for _, a := range local.agents() {
		for i := range a.boxes {
			top, prompt, bottom, ok := findBox(lines, &a.boxes[i])
			if !ok || a.marksRequired && !marked(lines[top:], a) {
				continue
			}
			if bottom == bestEnd && a != v.agent {
				// Two agents draw the same box: the one whose marks
				// show is the agent; neither or both, and the screen
				// does not say whose it is.
				was, is := marked(lines[bestTop:], v.agent), marked(lines[top:], a)
				switch {
				case is && !was:
					v.agent, v.shape = a, &a.boxes[i]
					bestTop, bestPrompt = top, prompt
					ambiguous = false
				case is == was:
					ambiguous = true
				}
				continue
			}
			if bottom > bestEnd {
				v.agent, v.shape = a, &a.boxes[i]
				bestTop, bestPrompt, bestEnd = top, prompt, bottom
				ambiguous = false
			}
		}
	}
	if v.shape != nil && !hugs(lines[bestEnd+1:], v.agent.statusLines) {
		v.agent, v.shape = nil, nil // a stale frame, not a live box
	}
	if v.shape == nil {
		start := max(0, end-dialogHeight)
		if bestEnd >= start {
			start = bestEnd + 1 // never read a stale box as part of a dialog
		}
		v.dialog = stripBorders(lines[start:])
		v.agent = dialogAgent(v.dialog, local)
		return v
	}
	v.ambiguous = ambiguous
	v.box = lines[bestTop : bestEnd+1]
	v.body = lines[:bestTop]
	v.prompt = bestPrompt - bestTop
	v.below = lines[bestEnd+1:]
	v.above = liveBlock(lines[:bestTop], v.agent)
	v.turn = lastTurn(lines[:bestTop], v.agent)
	v.frame = frameAbove(lines[:bestTop], v.agent)
	if v.ambiguous {
		v.agent = nil
	}
	return v
}

// dialogAgent names the agent whose dialog frame (its footer, its hint, its
// option cursor) is drawn at the bottom of a screen with no input box: the
// frame is what says who drew the screen. It returns nil when no agent's
// frame is there.
func dialogAgent(dialog []Line, local *Local) *agent {
	// An agent's own marks (a footer, a hint) name it before a numbered
	// menu with a cursor does, which more than one agent draws alike
	// (Claude Code's older > and Codex's sign-in menu).
	for _, generic := range []bool{false, true} {
		for _, a := range local.agents() {
			rules := a.rules
			if a.source != "" {
				rules = local.rulesOf(a) // a described agent has only the file's
			}
			for _, ru := range rules {
				if _, menu := ru.match.(optionMenuMatcher); ru.region != Dialog || menu != generic {
					continue
				}
				if _, ok := ru.match.match(dialog); ok {
					return a
				}
			}
		}
	}
	return nil
}

// frameAbove returns the dialog frame directly above the input box: the
// lines between the box and the edge the agent draws above a dialog, when
// none of them starts a block of the transcript. A dialog quoted in an
// answer sits under that answer's head, and one left in the scrollback has
// its answer or the turn's end under it; neither is a frame.
func frameAbove(lines []Line, a *agent) []Line {
	if a.frameTop == nil {
		return nil
	}
	// A dialog draws edges inside itself too: its top is the topmost edge
	// below the nearest head.
	floor := max(0, len(lines)-maxAbove)
	top := -1
	for i := len(lines) - 1; i >= floor; i-- {
		t := lines[i].Text
		if a.heads.MatchString(t) {
			break
		}
		if a.frameTop.MatchString(t) && !closedBox(lines[i:]) {
			top = i
		}
	}
	if top < 0 || top == len(lines)-1 {
		return nil
	}
	return lines[top+1:]
}

// closedBox reports whether lines start with a rounded box's top edge whose
// bottom edge closes it before other lines follow: a box of the transcript
// (another agent's banner, a tool's output) with text under it, not a
// dialog's frame drawn down to the input box.
func closedBox(lines []Line) bool {
	if !strings.HasPrefix(lines[0].Text, "╭") {
		return false
	}
	for i := 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i].Text, "╰") {
			for _, l := range lines[i+1:] {
				if !isBlank(l.Text) {
					return true
				}
			}
			return false
		}
	}
	return false
}

// marked reports whether lines show one of the agent's marks.
// seenAgent names an agent whose transcript heads, turns or marks show in
// any of the line sets, or "".
func seenAgent(local *Local, sets ...[]Line) string {
	for _, a := range local.agents() {
		for _, lines := range sets {
			for _, l := range lines {
				if a.heads != nil && a.heads.MatchString(l.Text) || a.userTurn != nil && a.userTurn.MatchString(l.Text) || matchesAny(a.marks, l.Text) {
					return a.name
				}
			}
		}
	}
	return ""
}

func marked(lines []Line, a *agent) bool {
	for _, l := range lines {
		if matchesAny(a.marks, l.Text) {
			return true
		}
	}
	return false
}

// hugs reports whether the lines under a box are its status lines: few,
// and close under it. An agent that exits leaves its last frame behind,
// with the shell's lines under it after a gap. statusLines is how many lines
// the agent draws after a gap under its box; 2 when zero.
func hugs(below []Line, statusLines int) bool {
	if len(below) > maxBelow {
		return false
	}
	gap, afterGap := false, 0
	for _, l := range below {
		if isBlank(l.Text) {
			if gap && afterGap > 0 {
				return false
			}
			gap = true
			continue
		}
		if gap {
			afterGap++
		}
	}
	return afterGap <= max(statusLines, 2)
}

// lastTurn returns the lines above the box back to the human's last message,
// or to the agent's banner when the session has had no message yet, bounded:
// the last event of a stop (an interrupt, a usage limit) is there.
// With no message of the human's within the bound, the turn's start is not
// on the screen and what is above the live block may be an earlier
// session's scrollback: the turn is then the live block alone.
func lastTurn(lines []Line, a *agent) []Line {
	floor := max(0, len(lines)-maxAbove)
	for i := len(lines) - 1; i >= floor; i-- {
		t := lines[i].Text
		if (a.userTurn != nil && a.userTurn.MatchString(t)) || (a.sessionStart != nil && a.sessionStart.MatchString(t)) {
			return lines[i:]
		}
	}
	return liveBlock(lines, a)
}

// findBox finds the lowest input box of one shape, returning the indexes of
// its first and last lines.
func findBox(lines []Line, shape *boxShape) (top, prompt, bottom int, ok bool) {
	// No screen holds a taller box, draft and all, under its status lines.
	floor := max(0, len(lines)-maxBoxSearch)
	if shape.last {
		floor = max(0, len(lines)-2)
	}
	for p := len(lines) - 1; p >= floor; p-- {
		t := lines[p].Text
		if !shape.mayPrompt(t) || !shape.prompt.MatchString(t) || (shape.notPrompt != nil && shape.notPrompt.MatchString(t)) {
			continue
		}
		top = p
		if shape.top != nil {
			switch {
			case p >= 1 && shape.top.MatchString(lines[p-1].Text):
				top = p - 1
			case shape.lead != nil:
				q := p - 1
				for q > p-1-shape.gap && q >= 0 && isBlank(lines[q].Text) {
					q-- // the blank rows of a padded input area
				}
				if q < 1 || !shape.lead.MatchString(lines[q].Text) || !shape.top.MatchString(lines[q-1].Text) {
					continue
				}
				top = q - 1
			default:
				continue
			}
		}
		if shape.last {
			if p == len(lines)-1 {
				return top, p, p, true
			}
			if shape.bottom.MatchString(lines[p+1].Text) {
				return top, p, p + 1, true
			}
			continue
		}
		if shape.bottom == nil {
			b := p
			for b+1 < len(lines) && !isBlank(lines[b+1].Text) && strings.HasPrefix(lines[b+1].Text, "  ") {
				b++ // a wrapped draft continues indented
			}
			return top, p, b, true
		}
		for b := p + 1; b < len(lines); b++ {
			if !shape.bottom.MatchString(lines[b].Text) {
				continue
			}
			if shape.sides {
				// The lowest bordered line over the bottom was found;
				// the box starts at the first of its run.
				for top > floor && shape.prompt.MatchString(lines[top-1].Text) {
					top--
				}
				return top, top, b, true
			}
			return top, p, b, true
		}
	}
	return 0, 0, 0, false
}

// mayPrompt is a cheap test that a line could be a prompt line of the
// shape, so that the scrollback costs a byte comparison a line, not a
// regular expression.
func (shape *boxShape) mayPrompt(t string) bool {
	if len(shape.promptPrefixes) == 0 {
		return t != "" || shape.blankPrompt
	}
	for _, p := range shape.promptPrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// liveBlock returns the block directly above the input box: the paragraph
// that ends there, read through paragraphs made only of transparent hints.
func liveBlock(lines []Line, a *agent) []Line {
	end := len(lines)
	floor := max(0, end-maxAbove)
	for {
		for end > floor && isBlank(lines[end-1].Text) {
			end--
		}
		start := end
		for start > floor && !isBlank(lines[start-1].Text) {
			start--
		}
		block := lines[start:end]
		if start == floor || !allTransparent(block, a) {
			return block
		}
		end = start
	}
}

func allTransparent(block []Line, a *agent) bool {
	if len(block) == 0 {
		return false
	}
	for _, l := range block {
		if !matchesAny(a.transparent, l.Text) {
			return false
		}
	}
	return true
}

// borders matches a line drawn inside a box, its content the first group.
// The right border may be missing: a dialog box drawn with no right edge,
// or clipped by the pane (Gemini 0.61's IDE prompt,
// gemini-061-100-ide-prompt), is still the dialog.
var borders = re(`^ *│ ?(.*?)(?: ?│)?$`)

func stripBorders(lines []Line) []Line {
	out := make([]Line, len(lines))
	for i, l := range lines {
		out[i] = l
		if m := borders.FindStringSubmatch(l.Text); m != nil {
			out[i].Text = strings.TrimRight(m[1], " ")
			if m := borders.FindStringSubmatch(l.Loud); m != nil {
				out[i].Loud = strings.TrimRight(m[1], " ")
			}
		}
	}
	return out
}

// decide applies the rules in their precedence: a live dialog is a
// QUESTION whatever else shows; live activity is WORKING; otherwise the
// screen is stopped, and the holds say whether a nudge may be typed.
// It leaves State zero for a stopped screen; the work probe decides.
func decide(v *view) Result {
	rules := shared()
	var r Result
	if v.agent != nil {
		r.Agent = v.agent.name
		rules = v.local.rulesOf(v.agent)
	} else {
		r.Seen = seenAgent(v.local, v.body, v.dialog)
	}
	for _, ru := range rules {
		if !ru.verdict.first {
			continue
		}
		lines := v.region(ru.region)
		if ev, ok := ru.match.match(lines); ok {
			r.Rule, r.Region, r.Evidence, r.Source = ru.name, ru.region, ev, ru.source
			r.From, r.To = span(lines)
			r.Live = lines
			r.Hold, r.HoldLine, r.HoldRule = ru.verdict.hold, ev, ru.name
			r.HoldText = paragraph(lines, ev)
			return r
		}
	}
	for _, want := range []State{Question, Working} {
		for _, ru := range rules {
			if ru.verdict.state != want {
				continue
			}
			lines := v.region(ru.region)
			if len(lines) == 0 {
				continue
			}
			if ev, ok := ru.match.match(lines); ok {
				r.State, r.Rule, r.Region, r.Evidence, r.Source = want, ru.name, ru.region, ev, ru.source
				r.Startup = ru.startup
				r.From, r.To = span(lines)
				r.Live = lines
				if want == Question {
					switch pm, ok := ru.match.(pickerMatcher); {
					case ru.region == Frame: // a frame is its dialog already
					case ok && pm.bound != nil:
						// A picker over the composer starts under the
						// line that ended or started the turn.
						r.Live = pm.after(lines)
					default:
						r.Live = dialogOf(lines, ev, v.agent)
					}
					r.From, r.To = span(r.Live)
					r.Dialog = readDialog(r.Live)
					r.Dialog.Above = nestedBoxAbove(lines, r.Live, v.agent)
				}
				return r
			}
		}
	}
	// Stopped. Say what was read, then whether anything may be typed.
	r.Rule = "no live activity and no dialog: the agent is stopped"
	for _, ru := range rules {
		if !ru.verdict.unsettled {
			continue
		}
		if lines := v.region(ru.region); len(lines) > 0 {
			if ev, ok := ru.match.match(lines); ok {
				r.Unsettled, r.UnsettledLine = ru.name, ev
				break
			}
		}
	}
	if v.box != nil {
		r.Region = Above
		r.Live = v.region(Above)
		r.From, r.To = span(r.Live)
		for _, l := range r.Live {
			if !isBlank(l.Text) {
				r.Evidence = l
				break
			}
		}
	} else {
		r.Region = Dialog
		r.Live = v.region(Dialog)
		r.From, r.To = span(r.Live)
		r.Hold, r.HoldRule = HoldNoInputBox, "no input box on the screen"
	}
	// A draft comes first: a human typing now says more than how the last
	// turn ended.
	if v.box != nil {
		if d := v.draft(); d != "" {
			r.Hold, r.Draft, r.HoldRule = HoldDraft, d, "a human's draft in the input box"
			r.HoldLine = v.region(Box)[v.prompt]
			return r
		}
	}
	for _, ru := range rules {
		if ru.verdict.hold == HoldNone || ru.verdict.first {
			continue
		}
		lines := v.region(ru.region)
		if ev, ok := ru.match.match(lines); ok && len(lines) > 0 {
			r.Hold, r.HoldLine, r.HoldRule, r.Source = ru.verdict.hold, ev, ru.name, ru.source
			r.HoldText = paragraph(lines, ev)
			return r
		}
	}
	return r
}

// region returns a region's lines after the ledger, masking each region
// once, when a rule first reads it.
// paragraph is the line ev of lines with the lines it runs on to: those
// right under it that are not blank and start no item of their own (a
// bullet, a tree branch, a box edge, a prompt), as an agent that wraps its
// own text draws them (Codex CLI 0.171 at the left edge, Claude Code
// indented); joined by single spaces, at most 4 lines.
func paragraph(lines []Line, ev Line) string {
	text := strings.TrimSpace(ev.Text)
	for i, l := range lines {
		if l.N != ev.N {
			continue
		}
		// Gemini CLI wraps an API error over seven lines in a narrow
		// pane, its retry delay on the fifth.
		for _, next := range lines[i+1 : min(i+8, len(lines))] {
			t := strings.TrimSpace(next.Text)
			r, _ := utf8.DecodeRuneInString(t)
			if t == "" || strings.ContainsRune("•◦■⎿⏺●✦│╭╰─›❯>-*▔✕ℹ", r) {
				break
			}
			text += " " + t
		}
		break
	}
	return text
}

func (v *view) region(r Region) []Line {
	var lines []Line
	switch r {
	case Above:
		lines = v.above
	case Below:
		lines = v.below
	case Dialog:
		lines = v.dialog
	case Box:
		lines = v.box
	case Turn:
		lines = v.turn
	case Frame:
		lines = v.frame
	}
	if v.masker == nil || len(lines) == 0 {
		return lines
	}
	if m, ok := v.masked[r]; ok {
		return m
	}
	if v.masked == nil {
		v.masked = make(map[Region][]Line)
	}
	m := maskLines(lines, v.masker)
	v.masked[r] = m
	return m
}

// draft returns what a human typed in the input box: its content without
// the prompt marker, faint placeholder text or edges.
func (v *view) draft() string { return v.input(true) }

// input returns the input box's content; masked says read it after the
// ledger, as the draft rule does.
func (v *view) input(masked bool) string {
	p := v.prompt
	box := v.box
	if masked {
		box = v.region(Box)
	}
	last := len(box)
	if v.shape.bottom != nil {
		last--
	}
	var parts []string
	for i := p; i < last; i++ {
		text := box[i].Loud
		var content string
		if i == p {
			m := v.shape.prompt.FindStringSubmatch(text)
			if m == nil {
				// The prompt marker itself was drawn faint.
				m = v.shape.prompt.FindStringSubmatch(box[i].Text)
				if m == nil {
					continue
				}
				content = strings.TrimSpace(stripMarker(text))
			} else if len(m) > 1 {
				content = m[1]
			}
		} else {
			content = text
			if v.shape.inner != nil {
				if m := v.shape.inner.FindStringSubmatch(text); m != nil {
					content = m[1]
				}
			}
		}
		// Qwen Code draws its cursor as a zero-width space: no text.
		content = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(strings.ReplaceAll(content, "\u200b", "")), "↵ send"))
		if content != "" {
			parts = append(parts, content)
		}
	}
	d := strings.Join(parts, " ")
	if v.agent != nil && matchesAny(v.agent.shownPlaceholders, d) {
		return ""
	}
	if !v.attrs {
		for _, a := range v.local.agents() {
			if matchesAny(a.placeholders, d) {
				return ""
			}
		}
	}
	return d
}

// stripMarker drops a leading prompt marker from a line whose marker was
// drawn faint along with its placeholder.
func stripMarker(s string) string {
	s = strings.TrimLeft(s, " │")
	for _, m := range []string{"❯", ">", "›", "!"} {
		s = strings.TrimPrefix(s, m)
	}
	return strings.TrimRight(s, " │")
}

// dialogOf returns the dialog around its evidence line: from the edge the
// agent draws above it (a rule or a box top), or the region's start, to the
// region's end. Dialogs draw edges inside themselves too (AskUserQuestion
// rules off its last options), so for an agent whose transcript blocks have
// heads the dialog starts after the topmost edge below the nearest head.
func dialogOf(lines []Line, ev Line, a *agent) []Line {
	at := 0
	for i, l := range lines {
		if l.N == ev.N {
			at = i
			break
		}
	}
	start := 0
	if a != nil && len(a.boxes) > 0 && a.boxes[0].sides {
		// An agent that draws its box with sides draws its dialogs so
		// too, in place of the box: the dialog is the bordered run
		// around its evidence.
		shape := &a.boxes[0]
		for start = at; start > 0 && shape.prompt.MatchString(lines[start-1].Text); start-- {
		}
		return lines[start:]
	}
	if a != nil && a.heads != nil {
		for i := at - 1; i >= 0; i-- {
			t := lines[i].Text
			if a.heads.MatchString(t) && !optionLine.MatchString(t) {
				break
			}
			if edge.MatchString(t) {
				start = i + 1
			}
		}
	} else {
		for i := at - 1; i >= 0; i-- {
			t := lines[i].Text
			if edge.MatchString(t) {
				// A rule inside an option list is not the dialog's
				// top: keep going while options continue above it.
				if i > 0 && (optionLine.MatchString(lines[i-1].Text) || strings.HasPrefix(lines[i-1].Text, "   ")) {
					continue
				}
				start = i + 1
				break
			}
		}
	}
	for start < len(lines) && isBlank(lines[start].Text) {
		start++
	}
	return lines[start:]
}

// A DialogText is a live dialog as the agent draws it, read for a human to
// answer: the question, then the options, each line verbatim.
type DialogText struct {
	// Question is the dialog's lines above its first option (its title,
	// the command or edit it asks about, the question sentence), joined
	// by newlines; edges and blank lines at either end are dropped.
	Question string
	// Options are the lines from the first option to the key hints, as
	// drawn: numbered or not, with their descriptions, the free-text
	// and "Chat about this" rows and the cursor where it is.
	Options []string
	// Hint is the dialog's footer of key hints, if it draws one.
	Hint string
	// Above is what the dialog draws over Question inside its own frame
	// when the cut for Question starts under a box nested in the dialog:
	// Gemini CLI draws the tool call an approval asks about in such a box,
	// and without Above the command is in none of these fields, so two
	// approvals for different commands would read alike. It holds the lines
	// from the nearest blank line (or head of the transcript) down to that
	// box's bottom edge, edges dropped; empty for every other dialog.
	Above string
	// Rows are the lines the other fields were cut from, as read, with
	// their colours: a dialog that shows its choice by colour alone (a
	// row of buttons, the lit one selected) is read from their Backs.
	Rows []Line
}

// nestedBoxAbove reads DialogText.Above: the lines of the region above the
// dialog, when the dialog's cut starts directly under a box's bottom edge,
// back to the nearest blank line or transcript head. It reads, and changes,
// nothing else: the verdict and the other fields stay as they were.
func nestedBoxAbove(region, dialog []Line, a *agent) string {
	if len(dialog) == 0 {
		return ""
	}
	start := -1
	for i, l := range region {
		if l.N == dialog[0].N {
			start = i
			break
		}
	}
	j := start - 1
	for j >= 0 && isBlank(region[j].Text) {
		j--
	}
	if j < 0 || !strings.HasPrefix(region[j].Text, "╰") || !edge.MatchString(region[j].Text) {
		return ""
	}
	top := j
	for top > 0 && j-top < dialogHeight {
		t := region[top-1].Text
		if isBlank(t) || (a != nil && a.heads != nil && a.heads.MatchString(t)) {
			break
		}
		top--
	}
	var out []string
	for _, l := range region[top:j] {
		if t := strings.TrimRight(l.Text, " "); !edge.MatchString(t) {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n")
}

// menuStart returns the index of a dialog's first option: the run of option
// lines around the cursor (numbered, or unnumbered siblings drawn at the
// cursor's indent, with their indented descriptions), so that a numbered
// list in the question (a plan's steps) stays in the question. Without a
// cursor it is the first numbered line; without one, len(lines).
func menuStart(lines []Line) int {
	cur := -1
	for i, l := range lines {
		if cursorLine.MatchString(l.Text) {
			cur = i
			break
		}
	}
	if cur < 0 {
		for i, l := range lines {
			if optionLine.MatchString(l.Text) {
				return i
			}
		}
		return len(lines)
	}
	t := lines[cur].Text
	rest := strings.TrimLeft(strings.TrimLeft(strings.TrimLeft(t, " "), "❯›●"), " ")
	indent := utf8.RuneCountInString(t[:len(t)-len(rest)])
	i := cur
	for i > 0 {
		up := lines[i-1].Text
		if (isBlank(up) || edge.MatchString(up)) && i > 1 && follows(lines[i-2].Text, lines[i].Text) {
			// AskUserQuestion draws a rule (or a blank line) between
			// its last options ("3. Type something", "4. Chat about
			// this"): with the cursor below it, the options above it
			// are still the menu's.
			i--
			continue
		}
		if isBlank(up) {
			break
		}
		if !optionLine.MatchString(up) && len(up)-len(strings.TrimLeft(up, " ")) < indent {
			break
		}
		i--
	}
	return i
}

// follows reports whether line below is a numbered option whose number is
// one more than that of the numbered option line above.
func follows(above, below string) bool {
	a, ok := optionNumber(above)
	if !ok {
		return false
	}
	b, ok := optionNumber(below)
	return ok && b == a+1
}

// optionNumber returns the number of a numbered option line.
func optionNumber(line string) (int, bool) {
	if !optionLine.MatchString(line) {
		return 0, false
	}
	rest := strings.TrimLeft(strings.TrimLeft(strings.TrimLeft(line, " "), "❯›●>"), " ")
	n := 0
	for _, c := range rest {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// readDialog cuts a live dialog into its question, options and hint line.
func readDialog(lines []Line) *DialogText {
	end := len(lines)
	d := &DialogText{Rows: lines}
	for end > 0 && isBlank(lines[end-1].Text) {
		end--
	}
	if end > 0 && (footerLine.MatchString(lines[end-1].Text) || pickerFooter.MatchString(lines[end-1].Text)) {
		d.Hint = strings.TrimSpace(lines[end-1].Text)
		end--
	}
	lines = lines[:end]
	// A dialog drawn under a top edge of upper blocks (Claude Code
	// 2.1.332's usage-limit choice, where the input box was) starts under
	// it: what is above is the transcript, the prompt's ❯ among it.
	for i := len(lines) - 1; i >= 0; i-- {
		if upperEdge.MatchString(lines[i].Text) {
			lines = lines[i+1:]
			break
		}
	}
	split := menuStart(lines)
	var q []string
	for _, l := range lines[:split] {
		t := strings.TrimRight(l.Text, " ")
		if edge.MatchString(t) || (len(q) == 0 && isBlank(t)) {
			continue
		}
		q = append(q, t)
	}
	for len(q) > 0 && isBlank(q[len(q)-1]) {
		q = q[:len(q)-1]
	}
	d.Question = strings.Join(q, "\n")
	for _, l := range lines[split:] {
		t := strings.TrimRight(l.Text, " ")
		if isBlank(t) || edge.MatchString(t) {
			continue
		}
		d.Options = append(d.Options, t)
	}
	return d
}

func span(lines []Line) (from, to int) {
	if len(lines) == 0 {
		return 0, 0
	}
	return lines[0].N, lines[len(lines)-1].N
}

// codexKey is a key as Codex's hints name it.
const codexKey = `↑/↓|←/→|enter|esc|space|tab|\^[a-z]|ctrl ?\+ ?[a-z]`

func matchesAny(res []*pattern, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

var (
	// edge is a dialog's edge: a rule, or a box's top or bottom, its
	// corner indented where the box is (Gemini 0.61's IDE prompt).
	edge       = re(`^(?:─{3,}| *╭─+╮?| *╰─+╯?)`)
	upperEdge  = re(`^ *▔{3,} *$`)
	optionLine = re(`^ *(?:[❯›●>] *)?\d+\. +\S`)
	// pickerFooter is the key hints under Codex's pickers ("enter select ·
	// esc back", "Use ↑/↓ to move, space to toggle, b to go back"), as
	// its description's picker rules read them: hints joined by " · "
	// ("↑/↓ choose · enter select · esc LM Studio · ^c exit"), or in
	// words ("Press enter to confirm or esc to go back"), at any indent.
	pickerFooter = re(`(?i)^ *(?:` +
		`(?:` + codexKey + `) [^·]*[^ ·](?: · (?:` + codexKey + `) [^·]*[^ ·])+` +
		`|use ↑/↓ to move(?:, [^,]+ to [^,]+)+` +
		`|press enter to confirm or esc to go back` +
		`)$`)
	// cursorLine is an unnumbered option under the cursor.
	cursorLine = re(`^ *[❯›●] +\S`)
	// footerLine is a dialog's line of key hints.
	footerLine = re(`^ *(?:\((?:Use )?Enter to select\)|[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Waiting for user confirmation|(?i:press enter to confirm)|(?:[^·]+ · )*(?:Esc|Enter|esc|enter|ctrl-g|Tab) to \w+)`)
)
