package poll

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gotest.tools/v3/assert"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/pollset"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
	"github.com/omega-monitor/omega-monitor/ledger"
	"github.com/omega-monitor/omega-monitor/tick"
)

// snapshot is every file under dir as its mode and a digest of its
// content, for a test to prove that nothing was written.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if e.IsDir() {
			files[rel] = fi.Mode().String()
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files[rel] = fmt.Sprintf("%v %x", fi.Mode(), sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestOnlyCommitWrites: with every kind of work an earlier poll, the loop
// and the chat left for a poll (an answer the loop never finished, a
// nudge it never finished, a stale action, a rules file that cannot be
// read, the operator's re-arming, a request from the chat, offers of a
// question that left the screen), the steps before commit write nothing;
// commit does each of them.
func TestOnlyCommitWrites(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	dir := string(w.d)
	// An answer accepted: the next poll finds it unfinished.
	first := w.request(1, false, t0.Add(time.Second))
	tickAt(t, dir, w.pane, t0.Add(10*time.Second))
	if _, a, ok := w.answerAction(); !ok || a.Nonce != first.Nonce {
		t.Fatalf("the answer was not handed over: %+v", a)
	}
	second := w.request(2, false, t0.Add(20*time.Second))
	// A nudge handed over and never finished, held with its line.
	held := tick.Pending{Action: "001.nudge", Text: "go on", Line: &tick.HeldLine{Before: "MONITOR · agent · STALLED · ", Nudge: "nudged (1/5)"}}
	assert.NilError(t, stateDirectory(dir).writePending(held))
	assert.NilError(t, w.d.WriteAction("001.nudge", []byte("capture fresh\n")))
	assert.NilError(t, w.d.WriteAction("002.wait", []byte("pace 1\n")))
	assert.NilError(t, w.d.RequestReset(statedir.ResetRequest{By: "op", At: t0}))

	working := goldenPane(t, "adv-custom-statusline-working")
	now := t0.Add(time.Minute)
	r := Request{Dir: dir, Settings: answering(false), Readings: workOf7, Now: now, Capture: asAgent(t, working, now),
		RulesErr: errors.New("rules.toml: line 3: not a rule")}
	p := &pollRun{r: r, d: stateDirectory(dir), now: now}
	before := snapshot(t, dir)
	if line, refused := p.open(); refused {
		t.Fatalf("refused: %s", line)
	}
	p.look(strings.NewReader(working))
	p.judge()
	p.answers()
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Fatalf("the steps before commit wrote (-before +after):\n%s", diff)
	}
	line, err := p.commit()
	p.close()
	assert.NilError(t, err)

	for _, want := range []string{
		"dropped 2 stale action(s) the shell never carried out: 001.nudge, 002.wait",
		"rules: rules.toml: line 3: not a rule; the built-in rules apply",
		"budget re-armed by op",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q\nwant it to say %q", line, want)
		}
	}
	if got := w.result(first.Nonce); got.Why != "the watcher did not finish typing it" {
		t.Errorf("the unfinished answer: %+v", got)
	}
	if got := w.result(second.Nonce); got.Outcome != statedir.AnswerRefused {
		t.Errorf("the request: %+v", got)
	}
	for _, gone := range []string{statedir.Reset, filepath.Join(statedir.Answers, second.Nonce+statedir.RequestSuffix),
		filepath.Join(statedir.Actions, "000"+AnswerSuffix), filepath.Join(statedir.Actions, "002.wait")} {
		if _, err := os.Stat(w.d.Path(gone)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left: %v", gone, err)
		}
	}
	if mark, _ := os.ReadFile(w.d.Path(statedir.RulesReported)); !strings.Contains(string(mark), "not a rule") {
		t.Errorf("the rules' error not marked as said: %q", mark)
	}
	offers, err := w.d.ReadOffers()
	assert.NilError(t, err)
	assert.Equal(t, offers.Gone, now, "the question left the screen: its offers marked gone")
	log, _ := os.ReadFile(w.d.Path(statedir.Log))
	for _, want := range []string{"answer NOT typed: the watcher did not finish typing it", "nudge not finished: the loop never said what came of it"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the log does not say %q:\n%s", want, log)
		}
	}
	if i, j := strings.Index(string(log), "answer NOT typed"), strings.Index(string(log), "nudge not finished"); i > j {
		t.Errorf("the log says the unfinished nudge before the unfinished answer:\n%s", log)
	}
}

// TestFirstPollBeforeCommitWritesNothing: a watcher's first poll, in a
// directory that holds nothing yet but itself and its lock (what open
// makes), writes nothing before commit either.
func TestFirstPollBeforeCommitWritesNothing(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "w")
	d := statedir.Dir(dir)
	assert.NilError(t, d.Prepare())
	lock, err := d.Lock(statedir.StateLock)
	assert.NilError(t, err)
	lock.Close()
	pane := goldenPane(t, "claude-328-permission")
	r := Request{Dir: dir, Settings: answering(false), Readings: workOf7, Now: t0, Capture: asAgent(t, pane, t0)}
	p := &pollRun{r: r, d: stateDirectory(dir), now: t0}
	before := snapshot(t, dir)
	if line, refused := p.open(); refused {
		t.Fatalf("refused: %s", line)
	}
	defer p.close()
	p.look(strings.NewReader(pane))
	p.judge()
	p.answers()
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Fatalf("the steps before commit wrote (-before +after):\n%s", diff)
	}
	_, err = p.commit()
	assert.NilError(t, err)
	for _, name := range []string{statedir.State, statedir.History, statedir.Log} {
		_, err := os.Stat(d.Path(name))
		assert.NilError(t, err, "commit wrote no %s", name)
	}
}

// TestRefusedPollWritesNothing: a state directory others can write is
// refused at open, and the poll writes nothing into it, not even the
// work left waiting there.
func TestRefusedPollWritesNothing(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	dir := string(w.d)
	w.request(1, false, t0.Add(time.Second))
	assert.NilError(t, w.d.RequestReset(statedir.ResetRequest{By: "op", At: t0}))
	assert.NilError(t, w.d.WriteAction("002.wait", []byte("pace 1\n")))
	assert.NilError(t, os.Chmod(dir, 0o770))
	before := snapshot(t, dir)
	line, err := Tick(Request{Dir: dir, Settings: answering(false), Readings: workOf7, Now: t0.Add(time.Minute), Capture: asAgent(t, w.pane, t0)},
		strings.NewReader(w.pane))
	assert.NilError(t, err)
	if !strings.Contains(line, "nothing written, nothing typed, nothing paged") {
		t.Errorf("line: %s", line)
	}
	if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
		t.Errorf("a refused poll wrote (-before +after):\n%s", diff)
	}
}

// TestCommitFailingMidway: a commit whose write fails part of the way
// leaves what the design's invariants ask. An echo ledger that cannot
// record the nudge hands no nudge over and gives its budget back; a
// history that cannot be written loses its lines and nothing else: the
// nudge was recorded, its budget counted in the state saved, and it is
// handed over, the line saying what failed.
func TestCommitFailingMidway(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		broken  string // made a directory, so that writing it fails
		handed  bool
		budget  string
		problem string
	}{
		{"the echo ledger", statedir.Ledger, false, "0/5", "not nudged (the echo ledger could not record it)"},
		{"the history", statedir.History, true, "1/5", "error: history not written"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := statedir.Dir(filepath.Join(t.TempDir(), "w"))
			pane := goldenPane(t, "GOLDEN-stalled-real")
			tickAt(t, string(d), pane, t0.Add(-tick.UnsettledLook))
			assert.NilError(t, os.RemoveAll(d.Path(c.broken)))
			assert.NilError(t, os.MkdirAll(d.Path(filepath.Join(c.broken, "x")), 0o700))
			line := tickAt(t, string(d), pane, t0)
			if !strings.Contains(line, c.problem) {
				t.Errorf("line %q\nwant it to say %q", line, c.problem)
			}
			_, err := os.Stat(d.Path(filepath.Join(statedir.Actions, "001.nudge")))
			assert.Equal(t, err == nil, c.handed, "a nudge handed over: %v", err)
			s, usable, err := stateDirectory(d).loadState(t0, 5, false)
			assert.Assert(t, usable && err == nil, "the state saved: %v", err)
			assert.Equal(t, s.Budget.String(), c.budget)
			if c.handed {
				m, err := ledger.LoadRecent(d.Path(statedir.Ledger), 10)
				assert.NilError(t, err)
				p, err := stateDirectory(d).readPending()
				assert.NilError(t, err)
				assert.Assert(t, m.Contains(p.Text), "the nudge handed over is not in the echo ledger")
			}
		})
	}
}

// TestTallyHoldsThePollsOwnLines: the tally a poll keeps in its state
// counts the history lines it wrote (budget resets here) and its own log
// line, and those other writers appended before it, as a read of the whole
// history and log counts them.
func TestTallyHoldsThePollsOwnLines(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "monitor-agent")
	d := statedir.Dir(dir)
	pane := goldenPane(t, "adv-custom-statusline-working")
	now := t0
	for i := range 4 {
		now = now.Add(time.Minute)
		r := Readings{Work: ProbeReading{Given: true, Output: "5"}, Progress: ProbeReading{Given: true, Output: strconv.Itoa(40 + i)}}
		if _, err := Tick(Request{Dir: dir, Settings: pollset.Default("agent"), Readings: r, Now: now}, strings.NewReader(pane)); err != nil {
			t.Fatal(err)
		}
		s, usable, err := stateDirectory(dir).loadState(now, 5, false)
		assert.Assert(t, usable && err == nil, "%v", err)
		var kept board.Tally
		assert.NilError(t, json.Unmarshal(s.Board.Tally, &kept))
		read, err := board.ReadTally(dir, now, nil)
		assert.NilError(t, err)
		if diff := cmp.Diff(read.History, kept.History, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("poll %d: the tally kept (-read +kept):\n%s", i, diff)
		}
		if diff := cmp.Diff(read.Log, kept.Log); diff != "" {
			t.Errorf("poll %d: the log's tally kept, which counts the poll's own line (-read +kept):\n%s", i, diff)
		}
		// Another writer, as an action's outcome.
		assert.NilError(t, d.AppendHistory(now.Add(time.Second), "agent", []event.Event{{Name: event.NudgeTyped, State: "WORKING"}}))
		assert.NilError(t, d.AppendLog(now.Add(time.Second), "MONITOR · agent · nudge typed"))
	}
	h, _ := os.ReadFile(d.Path(statedir.History))
	assert.Equal(t, strings.Count(string(h), `"event":"budget_reset"`), 3, "history:\n%s", h)
}

// TestTallyRecountedWhenTheLineSaysMore: a problem after the state's save
// (the vitals cannot be written) makes the poll's line longer than the
// line its tally counted: the state is saved again, counted from the
// files, and the tally kept is the tally a read of the whole log counts.
func TestTallyRecountedWhenTheLineSaysMore(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "monitor-agent")
	d := statedir.Dir(dir)
	pane := goldenPane(t, "adv-custom-statusline-working")
	now := t0
	for i := range 3 {
		now = now.Add(time.Minute)
		if i == 1 {
			assert.NilError(t, os.Remove(d.Path(statedir.Vitals)))
			assert.NilError(t, os.MkdirAll(filepath.Join(d.Path(statedir.Vitals), "x"), 0o700))
		}
		line, err := Tick(Request{Dir: dir, Settings: pollset.Default("agent"), Now: now}, strings.NewReader(pane))
		assert.NilError(t, err)
		assert.Equal(t, strings.Contains(line, " · error: "), i == 1, "poll %d: %s", i, line)
		s, usable, err := stateDirectory(dir).loadState(now, 5, false)
		assert.Assert(t, usable && err == nil, "%v", err)
		var kept board.Tally
		assert.NilError(t, json.Unmarshal(s.Board.Tally, &kept))
		read, err := board.ReadTally(dir, now, nil)
		assert.NilError(t, err)
		if diff := cmp.Diff(read.Log, kept.Log); diff != "" {
			t.Errorf("poll %d: the log's tally kept (-read +kept):\n%s", i, diff)
		}
		if i == 1 {
			assert.NilError(t, os.RemoveAll(d.Path(statedir.Vitals)))
		}
	}
}
