package poll

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// RulesUsage is the help of omega-monitor rules.
const RulesUsage = `usage: omega-monitor rules check FILE
       omega-monitor rules list [FILE]

An operator's own rules, read with the built-in ones by every watcher:
$OMEGA_MONITOR_HOME/rules.json (default ~/.omega/monitor/rules.json), a JSON
object {"rules": [...], "agents": [...]}, each rule
  {"agent": "codex", "name": "...", "region": "above", "pattern": "^...",
   "verdict": "working", "priority": "before"}
agent: claude, codex, gemini, opencode, pi, copilot, qwen, or an agent the file
describes (omega-monitor agents --help). region: above, below, dialog, box,
turn or frame. pattern: a Go regular expression, anchored with ^ unless
"free" says why not; "lines": N reads only the region's last N lines;
"needs": [...] literals a matching line holds; "match": {"kind": ...} reads
a menu, a picker or the order of lines (any_line, end_line, edge_line,
latest, open_turn, option_menu, continue_menu, picker,
picker_over_composer, frameless_menu, onboarding: docs/rules.md).
verdict: working (region above or below only, or turn with kind latest:
live evidence; above reads the live block's first and last lines),
question, look-again, or hold:NAME (draft, interrupt, keyboard,
usage-limit, no-input-box, turn-open; "first": true reads no-input-box
before any dialog). A rule named as a built-in one replaces it;
"disable": true turns the built-in rule of that name off; "startup": true
marks a question rule's screen as one of the agent's start (a folder to
trust, a sign-in): answered at the terminal, never from the chat. A bad
file never stops a watcher: it says so once and the built-in rules apply.

check validates FILE and names the line of each error (exit 1).
list prints the effective rules and where each came from (FILE, or the
watchers' rules file when none is given).
`

// AgentsUsage is the help of omega-monitor agents.
const AgentsUsage = `usage: omega-monitor agents check FILE
       omega-monitor agents list [FILE]

The agents whose screens the watchers read: Claude Code, Codex CLI, Gemini
CLI, Copilot CLI, OpenCode, Pi and Qwen Code, built in (each described in
this format: classify/agents/*.json), and any agent the operator's rules
file describes
($OMEGA_MONITOR_HOME/rules.json, default ~/.omega/monitor/rules.json), read
by every watcher without a new build:
  {"agents": [{"name": "Tern",
     "box": {"top": "^┌─+┐$", "prompt": "^│ » ?(.*?) *│$", "bottom": "^└─+┘$"},
     "marks": ["tern · model "], "placeholders": ["^type a task$"],
     "transparent": ["^  tip: "], "user_turn": "^» \\S", "status_lines": 2}],
   "rules": [{"agent": "tern", "name": "Tern's spinner", "region": "above",
     "pattern": "^  ⠋ .* · ctrl\\+c to stop$", "verdict": "working"}]}
box: the input box at the bottom of its screen; prompt's one group is what a
human typed there (a draft is never typed over); top and bottom are
optional; "blank": true says an empty box's prompt line is blank (no prompt
mark; then both edges are needed); "sides": true says the box has a side
border and no top (OpenCode's ┃): every line inside matches prompt, and the
box reaches up through them from its bottom, which it needs. "boxes": [...]
lists the shapes of a box across releases, each with prompt_prefixes,
not_prompt, inner, lead, gap, last too; faint_placeholders, frame_top and
heads are the agent's (docs/rules.md). marks: text only it draws in or under
its box; "marks_required": true counts its box only with a mark under it
(a box as plain as two rules is drawn by others too); Pi is built in this
way. Its rules are the file's rules that name it (omega-monitor rules
--help); it needs a working rule. Without a box on screen its dialog rules
name it. No answer buttons are offered for its questions: keys go only to
an agent whose program the watcher knows.

check validates FILE and names the line of each error (exit 1); try a
capture with omega-monitor classify --explain.
list prints the agents and where each is described (FILE, or the watchers'
rules file when none is given).
`

// maxRulesFile caps a rules file: a few hundred rules fit in far less.
const maxRulesFile = 1 << 20

// ReadRules reads and parses an operator's rules file; nil and no error
// when there is none.
func ReadRules(path string) (*classify.Local, error) {
	l, _, err := ReadRulesData(path)
	return l, err
}

// ReadRulesData is ReadRules, with the file's bytes (for a golden case
// that keeps the rules it needs beside it).
func ReadRulesData(path string) (*classify.Local, []byte, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	// The rules decide which screens may be typed into: only a file of
	// the user's own, that nobody else can write, counts.
	if err := statedir.CheckOwnFile(path); err != nil {
		return nil, nil, errors.New(pkgerr.Why(err))
	}
	data, err := fsutil.ReadCapped(path, maxRulesFile)
	if err != nil {
		return nil, nil, err
	}
	l, err := classify.ParseLocal(data, path)
	if err != nil {
		return nil, nil, errors.New(pkgerr.Why(err))
	}
	return l, data, nil
}

// RulesPath is the watchers' rules file in the state home of the
// environment getenv reads.
func RulesPath(getenv func(string) string) (string, error) {
	home, err := statedir.Home(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, statedir.Rules), nil
}

// WatcherRules returns the watchers' rules file, parsed, for a poll or a
// classifying command. A bad file is an error to report; the built-in
// rules apply.
func WatcherRules(getenv func(string) string) (*classify.Local, error) {
	path, err := RulesPath(getenv)
	if err != nil {
		return nil, nil
	}
	return ReadRules(path)
}
