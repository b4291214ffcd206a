package poll

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/pollset"
	"github.com/omega-monitor/omega-monitor/internal/proc"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
)

// A fleet is many watchers in one state home, polled, acked and delivered
// as their loops do it, with one funnel that keeps every message it sends.
type fleet struct {
	home, funnel, got string
	targets           []string
}

func newGroupFleet(t *testing.T, targets ...string) *fleet {
	t.Helper()
	root := t.TempDir()
	f := &fleet{home: filepath.Join(root, "home"), funnel: filepath.Join(root, "funnel"), got: filepath.Join(root, "funnel.got"), targets: targets}
	assert.NilError(t, os.MkdirAll(f.home, 0o700))
	script := "#!/bin/sh\n{ cat; echo; echo ---; } >>" + f.got + "\n"
	assert.NilError(t, os.WriteFile(f.funnel, []byte(script), 0o700))
	return f
}

// dir is the state directory of the watcher of target i.
func (f *fleet) dir(i int) string {
	return filepath.Join(f.home, "monitor-"+strings.NewReplacer(":", "-").Replace(f.targets[i]))
}

// poll is one poll of watcher i on pane, or with the capture failing.
func (f *fleet) poll(t *testing.T, i int, pane, captureErr string, at time.Time) string {
	t.Helper()
	s := pollset.Default(f.targets[i])
	s.IntervalS = 60
	r := Request{Dir: f.dir(i), Settings: s, Readings: workOf7, Now: at, CaptureError: captureErr}
	if captureErr == "" {
		r.Capture = asAgent(t, pane, at)
	}
	line, err := Tick(r, strings.NewReader(pane))
	assert.NilError(t, err)
	return line
}

// typed acks watcher i's nudge as typed, as the loop does once its box
// read back.
func (f *fleet) typed(t *testing.T, i int, at time.Time) {
	t.Helper()
	action := statedir.Dir(f.dir(i)).Path(filepath.Join(statedir.Actions, "001.nudge"))
	_, err := os.Stat(action)
	assert.NilError(t, err, "watcher %d handed no nudge", i)
	Ack(f.dir(i), f.targets[i], action, event.NudgeTyped, "", at)
}

// deliver runs watcher i's deliverer.
func (f *fleet) deliver(t *testing.T, i int) {
	t.Helper()
	if _, ok := Deliver(context.Background(), f.dir(i), f.targets[i], f.funnel, f.home, os.Environ(), DeliverOptions{Retry: time.Millisecond}); !ok {
		t.Errorf("watcher %d: not every alert delivered", i)
	}
}

// sent is every message the funnel sent.
func (f *fleet) sent(t *testing.T) []string {
	b, err := os.ReadFile(f.got)
	if os.IsNotExist(err) {
		return nil
	}
	assert.NilError(t, err)
	msgs := strings.Split(string(b), "\n---\n")
	return msgs[:len(msgs)-1]
}

// alone is what waits in the watchers' own outboxes: a page of its own.
func (f *fleet) alone(t *testing.T) string {
	var all string
	for i := range f.targets {
		text, _ := queued(t, statedir.Dir(f.dir(i)))
		all += text
	}
	return all
}

func targets(n int, format string) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf(format, i+1))
	}
	return out
}

// limitPaneAt is Claude Code stopped by its 5-hour limit, resetting at the
// time given.
func limitPaneAt(reset string) string {
	return strings.Replace(limitPane, "9:02am", reset, 1)
}

// TestTwentyPanesOneLimitOnePage: twenty watchers whose panes one usage
// limit stopped within a poll interval page once, naming all twenty and
// the reset; when the reset comes and each is nudged once, one notice
// names them all. No watcher pages alone, and every member's deliverer
// running again sends nothing more.
func TestTwentyPanesOneLimitOnePage(t *testing.T) {
	t.Parallel()
	f := newGroupFleet(t, targets(20, "agent-%02d")...)
	for i := range f.targets {
		f.poll(t, i, limitPane, "", t0.Add(-3*time.Second))
	}
	for i := range f.targets {
		// Each sees the limit at its own poll, within the interval.
		at := t0.Add(time.Duration(i) * 2 * time.Second)
		if line := f.poll(t, i, limitPane, "", at); !strings.Contains(line, "operator told") {
			t.Fatalf("watcher %d: %s", i, line)
		}
	}
	assert.Equal(t, f.alone(t), "", "a watcher paged alone")
	// Before the window is over, no page.
	f.poll(t, 0, limitPane, "", t0.Add(30*time.Second))
	f.deliver(t, 0)
	assert.Equal(t, len(f.sent(t)), 0)
	// The first watcher's next poll makes the page; any deliverer sends it.
	f.poll(t, 0, limitPane, "", t0.Add(61*time.Second))
	for i := range f.targets {
		f.poll(t, i, limitPane, "", t0.Add(70*time.Second))
		f.deliver(t, i)
	}
	sent := f.sent(t)
	assert.Equal(t, len(sent), 1, "pages: %q", sent)
	page := sent[0]
	for _, target := range f.targets {
		assert.Assert(t, strings.Contains(page, "<code>"+target+"</code>"), "%s not named:\n%s", target, page)
	}
	assert.Assert(t, strings.Contains(page, "USAGE LIMIT</b> · 20 panes"), page)
	assert.Assert(t, strings.Contains(page, "resets 9:02am (UTC)"), page)

	// The reset: each watcher nudges once, and once typed, joins the
	// notice.
	for i := range f.targets {
		at := t0.Add(4*time.Minute + time.Duration(i)*2*time.Second)
		if line := f.poll(t, i, limitPane, "", at); line != "" {
			t.Fatalf("watcher %d past the reset: %q", i, line)
		}
		f.typed(t, i, at)
	}
	assert.Equal(t, f.alone(t), "", "a resume told alone")
	for i := range f.targets {
		f.poll(t, i, limitPane, "", t0.Add(6*time.Minute))
		f.deliver(t, i)
	}
	sent = f.sent(t)
	assert.Equal(t, len(sent), 2, "pages: %q", sent)
	notice := sent[1]
	assert.Assert(t, strings.Contains(notice, "LIMIT RESET</b> · 20 panes"), notice)
	for _, target := range f.targets {
		assert.Assert(t, strings.Contains(notice, "<code>"+target+"</code>"), "%s not named:\n%s", target, notice)
	}
	// Nothing more, however often they poll and deliver.
	for i := range f.targets {
		f.poll(t, i, limitPane, "", t0.Add(9*time.Minute))
		f.deliver(t, i)
	}
	assert.Equal(t, len(f.sent(t)), 2)
}

// TestTwoAccountsTwoPages: two limits with different resets are two
// accounts: two pages, each naming its own panes and no other; a pane that
// one of them stops after its page is named on a short follow-up, not a
// page of its own.
func TestTwoAccountsTwoPages(t *testing.T) {
	t.Parallel()
	f := newGroupFleet(t, targets(7, "agent-%d")...)
	pane := func(i int) string {
		if i%2 == 0 {
			return limitPaneAt("9:02am")
		}
		return limitPaneAt("9:40am")
	}
	for i := range 6 {
		f.poll(t, i, pane(i), "", t0.Add(-3*time.Second))
		f.poll(t, i, pane(i), "", t0)
	}
	for i := range 6 {
		f.poll(t, i, pane(i), "", t0.Add(61*time.Second))
		f.deliver(t, i)
	}
	sent := f.sent(t)
	assert.Equal(t, len(sent), 2, "pages: %q", sent)
	for _, page := range sent {
		even := strings.Contains(page, "9:02am")
		assert.Assert(t, even != strings.Contains(page, "9:40am"), "one page, both resets:\n%s", page)
		for i := range 6 {
			named := strings.Contains(page, "<code>"+f.targets[i]+"</code>")
			assert.Equal(t, named, even == (i%2 == 0), "%s on the page of the other account:\n%s", f.targets[i], page)
		}
	}
	// A seventh pane of the first account, stopped later: a follow-up.
	f.poll(t, 6, pane(0), "", t0.Add(90*time.Second))
	f.poll(t, 6, pane(0), "", t0.Add(93*time.Second))
	f.poll(t, 6, pane(0), "", t0.Add(160*time.Second))
	f.deliver(t, 6)
	sent = f.sent(t)
	assert.Equal(t, len(sent), 3, "pages: %q", sent)
	assert.Assert(t, strings.Contains(sent[2], "has stopped these panes too"), sent[2])
	assert.Assert(t, strings.Contains(sent[2], "USAGE LIMIT</b> · 1 pane"), sent[2])
	assert.Equal(t, f.alone(t), "")
}

// TestClaimerStoppedStillOnePage: the watcher that made the page stops
// before its deliverer sends it (and one stopped halfway through making a
// page leaves a part-made one): another member's deliverer sends it, once,
// however many deliverers run at once; the part-made page is never sent.
func TestClaimerStoppedStillOnePage(t *testing.T) {
	t.Parallel()
	f := newGroupFleet(t, targets(5, "agent-%d")...)
	for i := range f.targets {
		f.poll(t, i, limitPane, "", t0.Add(-3*time.Second))
		f.poll(t, i, limitPane, "", t0)
	}
	// A member stopped while making a page: its part-made directory.
	groups, err := os.ReadDir(filepath.Join(f.home, statedir.Groups))
	assert.NilError(t, err)
	assert.Equal(t, len(groups), 1)
	group := filepath.Join(f.home, statedir.Groups, groups[0].Name())
	half := statedir.Dir(filepath.Join(group, "pages", ".new-0123456789ab"))
	assert.NilError(t, half.QueueAlerts(t0, []string{"half made"}))
	// The claimer makes the page, and stops: its deliverer never runs.
	f.poll(t, 0, limitPane, "", t0.Add(61*time.Second))
	// The others' polls see a page waiting, and their deliverers, all at
	// once, send it once.
	for i := 1; i < len(f.targets); i++ {
		f.poll(t, i, limitPane, "", t0.Add(65*time.Second))
		_, err := os.Stat(filepath.Join(f.dir(i), statedir.GroupsWaiting))
		assert.NilError(t, err, "watcher %d does not know of the page waiting", i)
	}
	var wg sync.WaitGroup
	for i := 1; i < len(f.targets); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.deliver(t, i)
		}()
	}
	wg.Wait()
	for i := range f.targets {
		f.deliver(t, i)
	}
	sent := f.sent(t)
	assert.Equal(t, len(sent), 1, "pages: %q", sent)
	assert.Assert(t, !strings.Contains(sent[0], "half made"))
	for _, target := range f.targets {
		assert.Assert(t, strings.Contains(sent[0], "<code>"+target+"</code>"), "%s not named", target)
	}
	// Delivered, the page waits no more: no watcher starts a deliverer
	// for it.
	for i := range f.targets {
		f.poll(t, i, limitPane, "", t0.Add(120*time.Second))
		_, err := os.Stat(filepath.Join(f.dir(i), statedir.GroupsWaiting))
		assert.Assert(t, os.IsNotExist(err), "watcher %d: a delivered page still waiting", i)
	}
}

// TestHostGoneOnePage: the watchers of one host whose captures all fail
// page once for the host, naming each watched session, and once when it is
// back; a local session gone still pages alone.
func TestHostGoneOnePage(t *testing.T) {
	t.Parallel()
	f := newGroupFleet(t, "box:a", "box:b", "box:c", "box:d", "local")
	idle := goldenPane(t, "GOLDEN-stalled-real")
	const down = "ssh: connect to host box port 22: Connection refused"
	for i := range f.targets {
		f.poll(t, i, idle, "", t0.Add(-time.Minute))
		f.poll(t, i, "", down, t0)
	}
	for i := range f.targets {
		if line := f.poll(t, i, "", down, t0.Add(11*time.Minute)); !strings.Contains(line, "gone, escalated") {
			t.Fatalf("watcher %d: %s", i, line)
		}
	}
	local, _ := queued(t, statedir.Dir(f.dir(4)))
	assert.Assert(t, strings.Contains(local, "the watched session is gone"), "the local session gone: %q", local)
	for i := range f.targets {
		f.poll(t, i, "", down, t0.Add(13*time.Minute))
		f.deliver(t, i)
	}
	var pages []string
	for _, m := range f.sent(t) {
		if strings.Contains(m, "HOST") {
			pages = append(pages, m)
		}
	}
	assert.Equal(t, len(pages), 1, "host pages: %q", pages)
	assert.Assert(t, strings.Contains(pages[0], "HOST GONE</b> · 4 panes · <code>box</code>"), pages[0])
	assert.Assert(t, strings.Contains(pages[0], "Connection refused"), pages[0])
	for i := range 4 {
		assert.Assert(t, strings.Contains(pages[0], "<code>"+f.targets[i]+"</code>"), "%s not named", f.targets[i])
	}
	// Back: one notice for the host.
	for i := range 4 {
		f.poll(t, i, idle, "", t0.Add(20*time.Minute))
	}
	for i := range 4 {
		f.poll(t, i, idle, "", t0.Add(22*time.Minute))
		f.deliver(t, i)
	}
	pages = nil
	for _, m := range f.sent(t) {
		if strings.Contains(m, "HOST BACK") {
			pages = append(pages, m)
		}
	}
	assert.Equal(t, len(pages), 1, "back pages: %q", pages)
	assert.Assert(t, strings.Contains(pages[0], "HOST BACK</b> · 4 panes"), pages[0])
}

// TestGroupFilesHostile: what a group directory holds is read as hostile:
// a member file past its bound, one whose name and content disagree, a
// link, a groups.wait naming paths out of the groups, a group without its
// cause: each is skipped or said in the line, never followed, never a
// panic, and the page names only the panes that joined.
func TestGroupFilesHostile(t *testing.T) {
	t.Parallel()
	f := newGroupFleet(t, "agent-1", "agent-2")
	for i := range f.targets {
		f.poll(t, i, limitPane, "", t0.Add(-3*time.Second))
		f.poll(t, i, limitPane, "", t0)
	}
	groups, err := filepath.Glob(filepath.Join(f.home, statedir.Groups, "usage-limit-*"))
	assert.NilError(t, err)
	assert.Equal(t, len(groups), 1)
	members := filepath.Join(groups[0], "members")
	write := func(name, text string) {
		assert.NilError(t, os.WriteFile(filepath.Join(members, name), []byte(text), 0o600))
	}
	write("big.stopped.json", `{"watcher":"big","target":"big","event":"stopped","at":"2026-12-01T09:00:00Z"}`+strings.Repeat(" ", 70<<10))
	write("liar.stopped.json", `{"watcher":"agent-9","target":"planted","event":"stopped","at":"2026-12-01T09:00:00Z"}`)
	write("bad.stopped.json", `{"watcher":`)
	outside := filepath.Join(t.TempDir(), "x.json")
	assert.NilError(t, os.WriteFile(outside, []byte(`{"watcher":"link","target":"linked","event":"stopped","at":"2026-12-01T09:00:00Z"}`), 0o600))
	assert.NilError(t, os.Symlink(outside, filepath.Join(members, "link.stopped.json")))
	f.poll(t, 0, limitPane, "", t0.Add(61*time.Second))
	// A groups.wait that names a path out of the groups is not followed.
	assert.NilError(t, os.WriteFile(filepath.Join(f.dir(1), statedir.GroupsWaiting), []byte("../../etc\n..\n"+filepath.Base(groups[0])+"\n"), 0o600))
	f.deliver(t, 1)
	sent := f.sent(t)
	assert.Equal(t, len(sent), 1, "pages: %q", sent)
	for _, bad := range []string{"planted", "big", "linked", "agent-9"} {
		assert.Assert(t, !strings.Contains(sent[0], bad), "%q on the page:\n%s", bad, sent[0])
	}
	assert.Assert(t, strings.Contains(sent[0], "2 panes"), sent[0])
	// A group whose cause is gone: said in the line, nothing else.
	assert.NilError(t, os.Remove(filepath.Join(groups[0], "group.json")))
	line := f.poll(t, 0, limitPane, "", t0.Add(2*time.Minute))
	assert.Assert(t, strings.Contains(line, "error: poll: group usage-limit-"), line)
}

// TestOneResetTwoLimitsNamed: two limits of one agent that reset in the
// same minute are one page, and the page shows each pane's own limit
// words where they are not the first pane's: neither is hidden.
func TestOneResetTwoLimitsNamed(t *testing.T) {
	t.Parallel()
	f := newGroupFleet(t, "agent-1", "agent-2")
	weekly := strings.Replace(limitPane, "5-hour limit", "weekly limit", 1)
	for i, pane := range []string{limitPane, weekly} {
		f.poll(t, i, pane, "", t0.Add(-3*time.Second))
		f.poll(t, i, pane, "", t0.Add(time.Duration(i)*time.Second))
	}
	f.poll(t, 0, limitPane, "", t0.Add(61*time.Second))
	f.deliver(t, 0)
	sent := f.sent(t)
	assert.Equal(t, len(sent), 1, "pages: %q", sent)
	assert.Assert(t, strings.Contains(sent[0], "<code>agent-2</code> · You've hit your weekly limit"), sent[0])
	assert.Assert(t, strings.Contains(sent[0], "<pre>You've hit your 5-hour limit"), sent[0])
}

// TestBoardShowsGroups: the board reads the groups as poll writes them
// (board.Group): while the panes one limit stopped gather, the group is
// on the board with its panes and when its page is due; once the page is
// made, pending; once delivered, off the board.
func TestBoardShowsGroups(t *testing.T) {
	t.Parallel()
	f := newGroupFleet(t, targets(3, "agent-%d")...)
	for i := range f.targets {
		f.poll(t, i, limitPane, "", t0.Add(-3*time.Second))
		f.poll(t, i, limitPane, "", t0.Add(time.Duration(i)*time.Second))
	}
	groups := func(at time.Time) []board.Group {
		t.Helper()
		fl, err := board.Census(f.home, at, board.Options{Brief: true})
		assert.NilError(t, err)
		return fl.Groups
	}
	gs := groups(t0.Add(10 * time.Second))
	assert.Equal(t, len(gs), 1, "%+v", gs)
	g := gs[0]
	assert.Equal(t, g.Kind, "usage-limit")
	assert.Equal(t, g.Agent, "Claude Code")
	assert.Equal(t, g.Panes, 3)
	assert.Equal(t, g.Gathering, 3)
	assert.Equal(t, g.PagesPending, 0)
	assert.Assert(t, g.DueAt != nil && g.DueAt.Equal(t0.Add(time.Minute)), "due %v", g.DueAt)

	f.poll(t, 0, limitPane, "", t0.Add(61*time.Second))
	gs = groups(t0.Add(62 * time.Second))
	assert.Equal(t, len(gs), 1, "%+v", gs)
	assert.Equal(t, gs[0].Gathering, 0)
	assert.Equal(t, gs[0].PagesPending, 1)
	assert.Equal(t, gs[0].PagesMade, 1)

	f.deliver(t, 0)
	assert.Equal(t, len(f.sent(t)), 1)
	assert.Equal(t, len(groups(t0.Add(70*time.Second))), 0)
}

// running records, in watcher i's directory, a loop that runs (this test
// process, with its start token) started at start.
func (f *fleet) running(t *testing.T, i int, start time.Time) {
	t.Helper()
	token, ok := proc.StartToken(os.Getpid())
	assert.Assert(t, ok)
	assert.NilError(t, os.MkdirAll(f.dir(i), 0o700))
	assert.NilError(t, statedir.Dir(f.dir(i)).WriteRecord(statedir.Loop,
		statedir.LoopRecord{Pid: os.Getpid(), StartToken: token, StartedAt: start, Target: f.targets[i]}))
}

// TestLoneMemberStoppedMidWindowPages: the one watcher of a group stopped
// while the group gathers makes its page as its loop ends, and a
// deliverer sends it: exactly one page, never none, and no second one.
func TestLoneMemberStoppedMidWindowPages(t *testing.T) {
	t.Parallel()
	f := newGroupFleet(t, "agent-1", "agent-2")
	f.poll(t, 0, limitPane, "", t0.Add(-3*time.Second))
	f.poll(t, 0, limitPane, "", t0)
	f.running(t, 1, t0.Add(-time.Hour)) // runs, but is in no group
	assert.NilError(t, Stopped(f.dir(0), f.targets[0], "SIGTERM", t0.Add(10*time.Second)))
	_, err := os.Stat(filepath.Join(f.dir(0), statedir.GroupsWaiting))
	assert.NilError(t, err, "the stop left no page waiting")
	f.deliver(t, 0)
	sent := f.sent(t)
	assert.Equal(t, len(sent), 1, "pages: %q", sent)
	assert.Assert(t, strings.Contains(sent[0], "agent-1"), sent[0])
	// Its next start, and any deliverer, send nothing more.
	f.poll(t, 0, limitPane, "", t0.Add(2*time.Minute))
	f.deliver(t, 0)
	f.deliver(t, 1)
	assert.Equal(t, len(f.sent(t)), 1)
}

// TestMemberStoppedWhileAnotherRuns: a member stopped while another
// member of its group runs leaves the page to that member's next poll,
// which names both on one page; one stopped while the other is being
// stopped too (marked ended since its start) makes it itself.
func TestMemberStoppedWhileAnotherRuns(t *testing.T) {
	t.Parallel()
	f := newGroupFleet(t, "agent-1", "agent-2")
	for i := range f.targets {
		f.poll(t, i, limitPane, "", t0.Add(-3*time.Second))
		f.poll(t, i, limitPane, "", t0.Add(time.Duration(i)*time.Second))
	}
	f.running(t, 1, t0.Add(-time.Hour))
	assert.NilError(t, Stopped(f.dir(0), f.targets[0], "SIGTERM", t0.Add(10*time.Second)))
	f.deliver(t, 0)
	assert.Equal(t, len(f.sent(t)), 0, "a page before the window, with another member gathering")
	f.poll(t, 1, limitPane, "", t0.Add(61*time.Second))
	f.deliver(t, 1)
	sent := f.sent(t)
	assert.Equal(t, len(sent), 1, "pages: %q", sent)
	assert.Assert(t, strings.Contains(sent[0], "agent-1") && strings.Contains(sent[0], "agent-2"), sent[0])

	g := newGroupFleet(t, "agent-1", "agent-2")
	for i := range g.targets {
		g.poll(t, i, limitPane, "", t0.Add(-3*time.Second))
		g.poll(t, i, limitPane, "", t0)
	}
	g.running(t, 1, t0.Add(-time.Hour))
	assert.NilError(t, statedir.Dir(g.dir(1)).WriteRecord(statedir.Ended, statedir.EndedRecord{At: t0.Add(5 * time.Second), By: "stop"}))
	assert.NilError(t, Stopped(g.dir(0), g.targets[0], "SIGTERM", t0.Add(10*time.Second)))
	g.deliver(t, 0)
	sent = g.sent(t)
	assert.Equal(t, len(sent), 1, "pages: %q", sent)
	assert.Assert(t, strings.Contains(sent[0], "agent-1") && strings.Contains(sent[0], "agent-2"), sent[0])
}
