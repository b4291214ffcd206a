package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/fs"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/tick"
)

func readPane(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "golden", "panes", name+".pane"))
	assert.NilError(t, err)
	return string(b)
}

// tickOnce runs the tick command and returns its stdout, stderr and code.
// A poll that held its line for the nudge it handed over printed none: its
// line is then the held one, as the nudge's last step says it once typed.
func tickOnce(t *testing.T, pane string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := newTestEnv("OMEGA_MONITOR_HOME=" + t.TempDir())
	code := env.run(append([]string{"tick", "--now", "2026-01-05T09:00:00Z"}, args...), strings.NewReader(pane), &out, &errb)
	if i := slices.Index(args, "--state"); out.Len() == 0 && code == 0 && i >= 0 && i+1 < len(args) {
		if l, ok := heldLine(t, args[i+1]); ok {
			return l + "\n", errb.String(), code
		}
	}
	return out.String(), errb.String(), code
}

// heldLine is the line a poll held in the state directory dir for the
// nudge it handed over, as it reads once the nudge is typed.
func heldLine(t *testing.T, dir string) (string, bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, statedir.Pending))
	if err != nil {
		return "", false
	}
	var p tick.Pending
	assert.NilError(t, json.Unmarshal(data, &p))
	if p.Line == nil {
		return "", false
	}
	return p.Line.Say(p.Line.Nudge), true
}

// firstLook runs a watcher's first look at pane on the state args name,
// three seconds before tickOnce's now: it types and pages nothing, and
// asks for the next look (issue 35), which the loop would carry out; so
// that the tick after it acts as a watcher's next poll.
func firstLook(t *testing.T, pane string, args ...string) {
	t.Helper()
	out, errs, code := tickOnce(t, pane, append(args, "--now", "2026-01-05T08:59:57Z")...)
	if code != 0 || !strings.Contains(out, "not nudged yet: the watcher's first look; the next look, at 09:00:00, decides") {
		t.Fatalf("the first look: %d %s %s", code, out, errs)
	}
	for i, a := range args {
		if a == "--state" && i+1 < len(args) {
			os.RemoveAll(filepath.Join(args[i+1], "actions"))
			os.MkdirAll(filepath.Join(args[i+1], "actions"), 0o700)
		}
	}
}

func TestTickNudgesAndHandsOver(t *testing.T) {
	t.Parallel()
	dir := fs.NewDir(t, "tick")
	state := filepath.Join(dir.Path(), "w")
	firstLook(t, readPane(t, "GOLDEN-stalled-real"), "--state", state, "--target", "agent", "--work", "7", "--nudge-text", "keep going")
	out, errs, code := tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", state, "--target", "agent", "--work", "7", "--nudge-text", "keep going")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, out, "MONITOR · agent · STALLED · work=7 · progress=? · nudged (1/5)\n")
	nudge, err := os.ReadFile(filepath.Join(state, "actions", "001.nudge"))
	assert.NilError(t, err)
	assert.Equal(t, string(nudge), "capture fresh\nconfirm before fresh 0\npaste 001.nudge.text\nrest 1000000\n"+
		"capture typed\nconfirm typed typed 0\nkeys Enter\nack nudge_typed\n")
	text, err := os.ReadFile(filepath.Join(state, "pastes", "001.nudge.text"))
	assert.NilError(t, err)
	assert.Equal(t, string(text), "keep going")
	ledgerText, err := os.ReadFile(filepath.Join(state, "ledger"))
	assert.NilError(t, err)
	assert.Assert(t, strings.HasSuffix(string(ledgerText), "\nkeep going\n"), "the nudge is in the ledger before it is handed over")
	for path, want := range map[string]os.FileMode{
		state: 0o700, filepath.Join(state, "state.json"): 0o600, filepath.Join(state, "history.jsonl"): 0o600,
		filepath.Join(state, "ledger"): 0o600, filepath.Join(state, "actions", "001.nudge"): 0o600,
	} {
		assert.Equal(t, mode(t, path), want, path)
	}
	// The next poll drops the action the shell never carried out. It sees
	// a question, which it asks to see again in 2s; the poll then pages.
	out, _, _ = tickOnce(t, readPane(t, "GOLDEN-question-real"), "--state", state, "--target", "agent")
	assert.Assert(t, strings.Contains(out, "QUESTION · NOT answered, escalated if still up at 09:00:02"), out)
	assert.Assert(t, strings.Contains(out, "dropped 1 stale action(s)"), out)
	wait, err := os.ReadFile(filepath.Join(state, "actions", "001.wait"))
	assert.NilError(t, err)
	assert.Equal(t, string(wait), "pace 2\n")
	out, _, _ = tickOnce(t, readPane(t, "GOLDEN-question-real"), "--state", state, "--target", "agent", "--now", "2026-01-05T09:00:02Z")
	assert.Assert(t, strings.Contains(out, "QUESTION · escalated to the operator, NOT answered"), out)
	entries, err := os.ReadDir(filepath.Join(state, "actions"))
	assert.NilError(t, err)
	for _, e := range entries {
		assert.Assert(t, strings.HasSuffix(e.Name(), ".alert"), "a question hands over only alerts: %s", e.Name())
	}
}

func TestTickCorruptStateIsKeptAside(t *testing.T) {
	t.Parallel()
	dir := fs.NewDir(t, "tick", fs.WithDir("w", fs.WithFile("state.json", "{not json"),
		fs.WithFile("history.jsonl", `{"event":"nudge"}`+"\n")))
	state := dir.Join("w")
	out, _, code := tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", state, "--target", "agent", "--work", "7")
	assert.Equal(t, code, 0)
	// A state damaged (by a hostile host, say) does not win a fresh
	// budget: it starts spent, and nothing is typed.
	assert.Assert(t, strings.Contains(out, "not nudged") && !strings.Contains(out, "nudged (1/5)"), out)
	assert.Assert(t, strings.Contains(out, "error: state file corrupt, kept as state.json.corrupt-20260105T090000Z, started with the nudge budget spent (progress resets it)"), out)
	actions, _ := os.ReadDir(filepath.Join(state, "actions"))
	assert.Equal(t, len(actions), 0, "%v", actions)
	kept, err := os.ReadFile(filepath.Join(state, "state.json.corrupt-20260105T090000Z"))
	assert.NilError(t, err)
	assert.Equal(t, string(kept), "{not json")
	history, err := os.ReadFile(filepath.Join(state, "history.jsonl"))
	assert.NilError(t, err)
	assert.Assert(t, strings.HasPrefix(string(history), `{"event":"nudge"}`+"\n"), "an earlier history line was lost")
	var s map[string]any
	data, err := os.ReadFile(filepath.Join(state, "state.json"))
	assert.NilError(t, err)
	assert.NilError(t, json.Unmarshal(data, &s))
}

func TestTickUnusableStateDirectory(t *testing.T) {
	t.Parallel()
	// A state "directory" that is a file: nothing can be saved, and above
	// all no nudge goes out, since it could not be recorded first.
	dir := fs.NewDir(t, "tick", fs.WithFile("w", "a file"))
	out, _, code := tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", dir.Join("w"), "--target", "agent", "--work", "7")
	assert.Equal(t, code, 0)
	assert.Assert(t, strings.Contains(out, "not nudged (the state file is unusable)"), out)
	assert.Assert(t, strings.Contains(out, "error: state directory:"), out)
	assert.Assert(t, strings.Contains(out, "error: state not saved:"), out)
}

// TestTickRefusesAStateHomeOthersCanWrite: a state home, or a watcher's
// directory, that has become writable by another user (or is another
// user's, or a link) is refused: the line says so, and nothing is written
// in it, no action, no state, no history, no log, so nothing is typed or
// paged on the word of a file someone else could have planted.
func TestTickRefusesAStateHomeOthersCanWrite(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		setup func(home, state string)
	}{
		{"the home writable by others", func(home, state string) { os.Chmod(home, 0o777) }},
		{"the watcher's directory writable by its group", func(home, state string) {
			os.Mkdir(state, 0o700)
			os.Chmod(state, 0o770)
		}},
		{"the actions directory writable by others", func(home, state string) {
			os.MkdirAll(filepath.Join(state, "actions"), 0o700)
			os.Chmod(filepath.Join(state, "actions"), 0o777)
		}},
		{"the watcher's directory a link", func(home, state string) {
			other := filepath.Join(home, "elsewhere")
			os.Mkdir(other, 0o700)
			os.Symlink(other, state)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			home := filepath.Join(t.TempDir(), "home")
			assert.NilError(t, os.Mkdir(home, 0o700))
			state := filepath.Join(home, "w")
			c.setup(home, state)
			before := listTree(t, home)
			out, _, code := tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", state, "--target", "agent", "--work", "7")
			assert.Equal(t, code, 0)
			assert.Assert(t, strings.Contains(out, "MONITOR · agent · ERROR · state directory: statedir: "), out)
			assert.Assert(t, strings.Contains(out, "nothing written, nothing typed, nothing paged until it is yours alone"), out)
			assert.DeepEqual(t, listTree(t, home), before)
		})
	}
}

// listTree lists every path under root, for a test that nothing was
// written.
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var paths []string
	filepath.WalkDir(root, func(p string, d iofs.DirEntry, err error) error {
		paths = append(paths, p)
		return nil
	})
	return paths
}

func TestTickFullDisk(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		if testenv.InCI() {
			t.Fatal("CI runs as root, and a full disk is made as root")
		}
		t.Skip("making a full-disk device needs root")
	}
	dir := fs.NewDir(t, "tick", fs.WithDir("w", fs.WithFile("history.jsonl", `{"event":"state"}`+"\n")))
	state := dir.Join("w")
	// The history of the first poll lands; then every write to it fails
	// as on a full disk: the history is a device like /dev/full (char 1,7),
	// not a link to it, which no writer follows.
	history := filepath.Join(state, "history.jsonl")
	assert.NilError(t, os.Remove(history))
	assert.NilError(t, syscall.Mknod(history, syscall.S_IFCHR|0o600, 1<<8|7))
	out, _, code := tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", state, "--target", "agent", "--work", "7")
	assert.Equal(t, code, 0)
	assert.Assert(t, strings.Contains(out, "error: history not written:"), out)
	assert.Assert(t, strings.Contains(out, "no space left on device"), out)
	// The next poll is defined: it reads the state saved by this one
	// (whose first look typed nothing).
	out, _, _ = tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", state, "--target", "agent", "--work", "7")
	assert.Assert(t, strings.Contains(out, "nudged (1/5)"), out)
}

func TestTickUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{},
		{"--state", "x"},
		{"--state", "x", "--target", "a:b:c"},
		{"--state", "x", "--target", "a", "--nudge-budget", "-1"},
		{"--state", "x", "--target", "a", "--nudge-text", "two\nlines"},
		{"--state", "x", "--target", "a", "--nudge-text", "stop\x03"},
		{"--state", "x", "--target", "a", "--nudge-text", "go\x1b[201~"},
		{"--state", "x", "--target", "a", "--nudge-budget", "99999999999"},
		{"--state", "x", "--target", "a", "extra"},
		{"--state", "x", "--target", "a", "--now", "yesterday"},
	} {
		_, errs, code := tickOnce(t, "", args...)
		if code != 2 || errs == "" {
			t.Errorf("tick %q: code %d, stderr %q; want 2 and a message", args, code, errs)
		}
	}
	var out bytes.Buffer
	assert.Equal(t, run([]string{"tick", "--help"}, nil, &out, &out), 0)
	assert.Assert(t, strings.Contains(out.String(), "usage: omega-monitor tick"))
}

func TestTickAgentStatusVetoesANudge(t *testing.T) {
	t.Parallel()
	dir := fs.NewDir(t, "tick", fs.WithFile("1337.json",
		`{"pid":1337,"tmux":"agent:@0.%0","status":"busy","version":"2.1.332","updatedAt":1767603570000}`))
	state := dir.Join("w")
	args := []string{"--state", state, "--target", "agent", "--work", "7", "--agent-status", dir.Join("1337.json"), "--pane", "agent:@0.%0", "--explain"}
	out, errs, code := tickOnce(t, readPane(t, "GOLDEN-stalled-real"), args...)
	assert.Equal(t, code, 0)
	assert.Assert(t, strings.Contains(out, "not nudged: the agent's own status says busy, though the screen reads STALLED"), out)
	assert.Assert(t, strings.Contains(errs, "witness:  says busy"), errs)
	entries, err := os.ReadDir(filepath.Join(state, "actions"))
	assert.NilError(t, err)
	assert.Equal(t, len(entries), 0, "a vetoed nudge was handed over")
	history, err := os.ReadFile(filepath.Join(state, "history.jsonl"))
	assert.NilError(t, err)
	assert.Assert(t, strings.Contains(string(history), `"event":"disagreement"`), string(history))
	// The same file for another pane changes nothing: the screen decides.
	args[len(args)-2] = "agent:@1.%4"
	out, errs, _ = tickOnce(t, readPane(t, "GOLDEN-stalled-real"), args...)
	assert.Assert(t, strings.Contains(out, "nudged (1/5)"), out)
	assert.Assert(t, strings.Contains(errs, "no status file names pane"), errs)
}

// TestTickStateFileIsADirectory: a state.json that cannot be read (here a
// directory) withholds every nudge and says so; it used to start fresh on
// every poll, with a fresh budget, for ever.
func TestTickStateFileIsADirectory(t *testing.T) {
	t.Parallel()
	dir := fs.NewDir(t, "tick", fs.WithDir("w", fs.WithDir("state.json")))
	state := dir.Join("w")
	for range 3 {
		out, _, code := tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", state, "--target", "agent", "--work", "7")
		assert.Equal(t, code, 0)
		assert.Assert(t, strings.Contains(out, "STALLED · work=7 · progress=? · not nudged (the state file is unusable)"), out)
		assert.Assert(t, strings.Contains(out, "error: state file unusable, no nudge until it is fixed"), out)
		entries, err := os.ReadDir(filepath.Join(state, "actions"))
		assert.NilError(t, err)
		assert.Equal(t, len(entries), 0, "a nudge was handed over")
	}
	history, err := os.ReadFile(filepath.Join(state, "history.jsonl"))
	assert.NilError(t, err)
	assert.Assert(t, !strings.Contains(string(history), `"event":"nudge"`), string(history))
	assert.Assert(t, strings.Contains(string(history), `"event":"nudge_not_typed"`), string(history))
}

// TestTickParallelTicksKeepTheBudget: twenty ticks at once on one state
// directory, budget 5: exactly five nudges, and no poll lost.
func TestTickParallelTicksKeepTheBudget(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "w")
	pane := readPane(t, "GOLDEN-stalled-real")
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			var out, errb bytes.Buffer
			run([]string{"tick", "--state", state, "--target", "agent", "--work", "7", "--nudge-budget", "5"},
				strings.NewReader(pane), &out, &errb)
		})
	}
	wg.Wait()
	history, err := os.ReadFile(filepath.Join(state, "history.jsonl"))
	assert.NilError(t, err)
	assert.Equal(t, strings.Count(string(history), `"event":"nudge"`), 5, string(history))
	var s struct {
		Polls  int `json:"polls"`
		Budget struct {
			Used int `json:"used"`
		} `json:"budget"`
	}
	data, err := os.ReadFile(filepath.Join(state, "state.json"))
	assert.NilError(t, err)
	assert.NilError(t, json.Unmarshal(data, &s))
	assert.Equal(t, s.Polls, 20, "polls lost")
	assert.Equal(t, s.Budget.Used, 5)
	log, err := os.ReadFile(filepath.Join(state, "monitor.log"))
	assert.NilError(t, err)
	// The poll that handed the last nudge over holds its line; no loop
	// carries the nudges out, and each next poll says so.
	held := 0
	if _, ok := heldLine(t, state); ok {
		held = 1
	}
	assert.Equal(t, strings.Count(string(log), "MONITOR · agent · STALLED")+held, 20, "monitor.log holds every line")
	assert.Equal(t, strings.Count(string(log), "nudge not finished: the loop never said what came of it")+held, 5, string(log))
	assert.Equal(t, strings.Count(string(log), "nudged ("), 0, string(log))
}

// TestTickStateValuesRangeChecked: a state whose counters no tick writes
// (wrapping, negative, null) is kept aside and the watcher starts fresh.
func TestTickStateValuesRangeChecked(t *testing.T) {
	t.Parallel()
	for name, state := range map[string]string{
		"polls at the end": `{"version":1,"polls":9223372036854775807,"budget":{"limit":5,"used":0}}`,
		"negative used":    `{"version":1,"polls":3,"budget":{"limit":5,"used":-4}}`,
		"null used":        `{"version":1,"polls":3,"budget":{"limit":5,"used":null}}`,
		"null polls":       `{"version":1,"polls":null,"budget":{"limit":5,"used":5}}`,
		"huge limit":       `{"version":1,"polls":3,"budget":{"limit":99999999999999,"used":5}}`,
		"no budget":        `{"version":1,"polls":3}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := fs.NewDir(t, "tick", fs.WithDir("w", fs.WithFile("state.json", state)))
			out, _, _ := tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", dir.Join("w"), "--target", "agent", "--work", "7")
			assert.Assert(t, strings.Contains(out, "kept as state.json.corrupt-20260105T090000Z, started with the nudge budget spent"), out)
			assert.Assert(t, !strings.Contains(out, "nudged (1/5)"), out)
		})
	}
}

// TestTickAgentStatusIsCapped: a status file that never ends, or is not a
// file, is refused without being read whole.
func TestTickAgentStatusIsCapped(t *testing.T) {
	t.Parallel()
	big := filepath.Join(t.TempDir(), "big.json")
	assert.NilError(t, os.WriteFile(big, bytes.Repeat([]byte(" "), 70<<10), 0o600))
	for _, file := range []string{"/dev/zero", big, t.TempDir()} {
		state := filepath.Join(t.TempDir(), "w")
		_, errs, code := tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", state, "--target", "agent", "--work", "7",
			"--agent-status", file, "--pane", "agent:@1.%1", "--explain")
		assert.Equal(t, code, 0)
		assert.Assert(t, strings.Contains(errs, "witness:  unreadable ("), errs)
	}
}

// TestTickWritesMonitorLog: every line the tick prints is in monitor.log.
func TestTickWritesMonitorLog(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "w")
	var lines []string
	for i, pane := range []string{"GOLDEN-stalled-real", "GOLDEN-question-real"} {
		out, _, _ := tickOnce(t, readPane(t, pane), "--state", state, "--target", "agent", "--work", fmt.Sprint(7-i))
		lines = append(lines, out)
	}
	log, err := os.ReadFile(filepath.Join(state, "monitor.log"))
	assert.NilError(t, err)
	// The log holds each line the tick printed, after its date and time.
	when := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC).Local().Format(statedir.LogTime) + " "
	assert.Equal(t, string(log), when+strings.Join(lines, when))
	assert.Equal(t, mode(t, filepath.Join(state, "monitor.log")), os.FileMode(0o600))
}

// TestTickSaysWhyAProbeGaveNothing: a probe that exits 0 with no count
// (grep -c on a missing file, with || true) is unknown, and the line says
// what it printed and what it said on standard error.
func TestTickSaysWhyAProbeGaveNothing(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "w")
	out, _, code := tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", state, "--target", "agent",
		"--work", "", "--work-stderr", "grep: TODO.md: No such file or directory",
		"--progress", "ten", "--progress-stderr", "")
	assert.Equal(t, code, 0)
	assert.Assert(t, strings.Contains(out, "work=? · progress=?"), out)
	assert.Assert(t, strings.Contains(out, "work probe: printed nothing; it said: grep: TODO.md: No such file or directory"), out)
	assert.Assert(t, strings.Contains(out, `progress probe: printed "ten", not one whole number`), out)
}

// TestTickKeepsTwoCorruptStates: a state corrupted on every poll leaves at
// most the two newest copies aside, not one a poll.
func TestTickKeepsTwoCorruptStates(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	for i := range 4 {
		assert.NilError(t, os.WriteFile(filepath.Join(state, "state.json"), []byte("{corrupt"), 0o600))
		at := time.Date(2026, 1, 5, 9, i, 0, 0, time.UTC).Format(time.RFC3339)
		out, _, _ := tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", state, "--target", "agent", "--work", "7", "--now", at)
		assert.Assert(t, strings.Contains(out, "started with the nudge budget spent"), out)
	}
	kept, _ := filepath.Glob(filepath.Join(state, "state.json.corrupt-*"))
	assert.DeepEqual(t, kept, []string{
		filepath.Join(state, "state.json.corrupt-20260105T090200Z"),
		filepath.Join(state, "state.json.corrupt-20260105T090300Z"),
	})
}

// TestNoEscapeReachesTheOperator: what a host or a probe printed (a window
// title, a screen clear, a hidden link, a clipboard write, a bidi
// override) never reaches a MONITOR line, the log, or logs' output; logs
// --raw prints the log as written.
func TestNoEscapeReachesTheOperator(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	hostile := "ssh: \x1b]0;pwned\x07\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07host \u202edlrow\u202c said \x1b]8;;https://evil.example\x1b\\this\x1b]8;;\x1b\\"
	out, _, code := tickOnce(t, "", "--state", state, "--target", "agent", "--capture-error", hostile,
		"--work", "7", "--work-stderr", "\x1b[31mred\x1b[0m")
	assert.Equal(t, code, 0)
	for _, s := range []string{"\x1b", "\u202e", "\a"} {
		assert.Assert(t, !strings.Contains(out, s), "the line carries %q: %q", s, out)
	}
	assert.Assert(t, strings.Contains(out, "ssh: host dlrow said this"), out)
	logged, err := os.ReadFile(filepath.Join(state, "monitor.log"))
	assert.NilError(t, err)
	assert.Assert(t, !strings.Contains(string(logged), "\x1b"), "%q", logged)

	// A log line planted raw is filtered when printed.
	home := t.TempDir()
	env := newTestEnv("OMEGA_MONITOR_HOME=" + home)
	w := filepath.Join(home, "monitor-agent")
	assert.NilError(t, os.MkdirAll(w, 0o700))
	assert.NilError(t, os.WriteFile(filepath.Join(w, "monitor.log"), []byte("MONITOR · agent · ? · \x1b]0;pwned\x07title\n"), 0o600))
	var printed, errb bytes.Buffer
	assert.Equal(t, env.run([]string{"logs", "agent"}, nil, &printed, &errb), 0, errb.String())
	assert.Equal(t, printed.String(), "MONITOR · agent · ? · title\n")
	printed.Reset()
	assert.Equal(t, env.run([]string{"logs", "agent", "--raw"}, nil, &printed, &errb), 0, errb.String())
	assert.Equal(t, printed.String(), "MONITOR · agent · ? · \x1b]0;pwned\x07title\n")
}

// TestSecretsAreRedactedBeforeTheyAreKept: a failure line that shows a key
// is alerted, and the MONITOR line, monitor.log, the history and the state
// (which the board and the MCP server read) keep it masked, never raw. The
// line also carries a bidi override, and a zero-width joiner inside the key
// that would cut the key's shape short were the mask applied before it is
// taken out: neither is kept either.
func TestSecretsAreRedactedBeforeTheyAreKept(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	key := "sk-ant-api03-Zx9_fQ2mXk7LpZ0aB3cD4eF5gH6iJ7kL8mN9"
	joined := key[:16] + "\u200d" + key[16:]
	calm := readPane(t, "GOLDEN-stalled-real")
	tickOnce(t, calm, "--state", state, "--target", "agent", "--work", "7", "--nudge-budget", "0")
	failing := "⏺ Bash(./deploy)\n  ⎿  Error: \u202eANTHROPIC_API_KEY=" + joined + " rejected\u202c, exit code 1\n\n" + calm
	out, _, code := run2(t, failing, "--state", state, "--target", "agent", "--work", "7", "--nudge-budget", "0", "--now", "2026-01-05T09:01:00Z")
	assert.Equal(t, code, 0)
	assert.Assert(t, strings.Contains(out, "failure alerted"), out)
	for _, f := range []string{"monitor.log", "history.jsonl", "state.json"} {
		b, err := os.ReadFile(filepath.Join(state, f))
		assert.NilError(t, err)
		for _, bad := range []string{key[14:], key[16:], "\u202e", "\u202c", "\u200d"} {
			assert.Assert(t, !strings.Contains(string(b), bad), "%s keeps %q:\n%s", f, bad, b)
		}
		assert.Assert(t, strings.Contains(string(b), "rejected, exit code 1"), "%s lost the failure line:\n%s", f, b)
	}
	assert.Assert(t, !strings.Contains(out, key[14:]), out)
}

func run2(t *testing.T, pane string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"tick"}, args...), strings.NewReader(pane), &out, &errb)
	return out.String(), errb.String(), code
}

// TestResetRearmsASpentBudget: a spent budget is escalated and stays spent
// across polls; omega-monitor reset (the watcher not running) leaves the
// request, and the next tick re-arms it, says so, records who asked, and
// nudges again. The request is taken once.
func TestResetRearmsASpentBudget(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := newTestEnv("OMEGA_MONITOR_HOME=" + home)
	state := filepath.Join(home, "monitor-agent")
	stalled := readPane(t, "GOLDEN-stalled-real")
	tick := func(now string) string {
		var out, errb bytes.Buffer
		code := env.run([]string{"tick", "--now", now, "--state", state, "--target", "agent", "--work", "7", "--nudge-budget", "1"},
			strings.NewReader(stalled), &out, &errb)
		assert.Equal(t, code, 0, errb.String())
		os.RemoveAll(filepath.Join(state, "actions"))
		if l, ok := heldLine(t, state); ok && out.Len() == 0 {
			return l
		}
		return out.String()
	}
	first := tick("2026-01-05T08:59:57Z") // the watcher's first look types nothing
	assert.Assert(t, strings.Contains(first, "not nudged yet: the watcher's first look"), first)
	assert.Assert(t, strings.Contains(tick("2026-01-05T09:00:00Z"), "nudged (1/1)"))
	assert.Assert(t, strings.Contains(tick("2026-01-05T09:01:00Z"), "escalated"))
	third := tick("2026-01-05T09:02:00Z")
	assert.Assert(t, !strings.Contains(third, "nudged ("), third)

	var out, errb bytes.Buffer
	assert.Equal(t, env.run([]string{"reset", "monitor-agent"}, nil, &out, &errb), 0, errb.String())
	assert.Assert(t, strings.Contains(out.String(), "will be re-armed when its watcher starts again"), out.String())
	line := tick("2026-01-05T09:03:00Z")
	assert.Assert(t, strings.Contains(line, "nudged (1/1)") && strings.Contains(line, "budget re-armed by omega-monitor reset (was 1/1)"), line)
	history, err := os.ReadFile(filepath.Join(state, "history.jsonl"))
	assert.NilError(t, err)
	assert.Equal(t, strings.Count(string(history), `"budget_rearmed"`), 1)
	assert.Assert(t, !strings.Contains(tick("2026-01-05T09:04:00Z"), "re-armed"), "the request was taken twice")

	out.Reset()
	errb.Reset()
	assert.Equal(t, env.run([]string{"reset", "nobody"}, nil, &out, &errb), 1)
	assert.Assert(t, strings.Contains(errb.String(), "nobody was never watched here"), errb.String())
	assert.Equal(t, env.run([]string{"reset"}, nil, &out, &errb), 2)
}

// TestOnChangeUsage: the on-change command refuses what the tick would
// never give it, with exit 2 and one line, and runs nothing.
func TestOnChangeUsage(t *testing.T) {
	env := newTestEnv("OMEGA_MONITOR_ON_CHANGE_RUN=")
	for _, args := range [][]string{{}, {"--state", "x", "--timeout", "0"}, {"--state", "x", "extra"}, {"--state", t.TempDir()}} {
		var out, errb bytes.Buffer
		code := env.run(append([]string{"on-change"}, args...), nil, &out, &errb)
		if code != 2 || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("on-change %q: exit %d, said %q", args, code, errb.String())
		}
	}
}

// TestTickReadsTheLoopsSettings: the loop's tick passes the state directory
// and the readings only; the settings are the ones loop-env stored in
// loop.json, which flags given by hand override. A poll by hand with no
// record needs --target, and a record whose settings break the rules is
// refused as any file read.
func TestTickReadsTheLoopsSettings(t *testing.T) {
	t.Parallel()
	pane := readPane(t, "GOLDEN-stalled-real")
	withRecord := func(t *testing.T, set statedir.PollSettings) string {
		state := filepath.Join(t.TempDir(), "monitor-agent")
		assert.NilError(t, os.MkdirAll(state, 0o700))
		assert.NilError(t, statedir.Dir(state).WriteRecord(statedir.Loop, statedir.LoopRecord{Target: set.Target, Poll: &set}))
		return state
	}
	t.Run("the record's", func(t *testing.T) {
		state := withRecord(t, statedir.PollSettings{Target: "agent", NudgeBudget: 2, NudgeText: "go on, said the record", HumanIdleS: 0})
		firstLook(t, pane, "--state", state, "--work", "7")
		out, errs, code := tickOnce(t, pane, "--state", state, "--work", "7")
		assert.Equal(t, code, 0, errs)
		assert.Assert(t, strings.HasPrefix(out, "MONITOR · agent · ") && strings.Contains(out, "nudged (1/2)"), out)
		text, err := os.ReadFile(filepath.Join(state, "pastes", "001.nudge.text"))
		assert.NilError(t, err)
		assert.Equal(t, string(text), "go on, said the record")
	})
	t.Run("a flag over the record's", func(t *testing.T) {
		state := withRecord(t, statedir.PollSettings{Target: "agent", NudgeBudget: 2, NudgeText: "go on, said the record"})
		firstLook(t, pane, "--state", state, "--work", "7")
		out, errs, code := tickOnce(t, pane, "--state", state, "--work", "7", "--nudge-budget", "4")
		assert.Equal(t, code, 0, errs)
		assert.Assert(t, strings.Contains(out, "nudged (1/4)"), out)
	})
	t.Run("no record, no target", func(t *testing.T) {
		_, errs, code := tickOnce(t, pane, "--state", filepath.Join(t.TempDir(), "monitor-agent"), "--work", "7")
		assert.Equal(t, code, 2)
		assert.Assert(t, strings.Contains(errs, "a poll by hand needs --target") && strings.Count(errs, "\n") == 1, errs)
	})
	t.Run("a record that breaks the rules", func(t *testing.T) {
		state := withRecord(t, statedir.PollSettings{Target: "agent", NudgeBudget: 5, NudgeText: "two\nlines"})
		out, errs, code := tickOnce(t, pane, "--state", state, "--work", "7")
		assert.Equal(t, code, 2)
		assert.Equal(t, out, "")
		assert.Assert(t, strings.Contains(errs, "the loop's settings: --nudge-text: the text of a nudge must be one line"), errs)
		entries, _ := os.ReadDir(filepath.Join(state, "actions"))
		assert.Equal(t, len(entries), 0)
	})
}
