package board

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// remotes are two other hosts as the board reads them: box, whose census
// is the fixtures' (its advances an hour later than this machine's
// clock), and gpu, which could not be read.
func remotes(t *testing.T) []Remote {
	box := fleet(t)
	at := now.Add(time.Second)
	return []Remote{
		{Host: Host{Name: "box", Reachable: true, FreshAt: &at, RTTMs: 41}, Fleet: &box},
		{Host: Host{Name: "gpu", RTTMs: 5000, Degraded: true, Reason: "unreachable: no answer within 5s"}},
	}
}

func TestMerge(t *testing.T) {
	local := fleet(t)
	rs := remotes(t)
	f := Merge(local, rs)

	type row struct{ Host, Name, Worktree string }
	var got []row
	for _, w := range f.Watchers {
		got = append(got, row{w.Host, w.Name, w.Worktree})
	}
	var want []row
	for _, host := range []string{"", "box"} {
		for _, w := range local.Watchers {
			wt := w.Worktree
			if host != "" && wt != "" && wt[0] == '/' {
				wt = host + ":" + wt // box's /src/api is not this machine's
			}
			want = append(want, row{host, w.Name, wt})
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("watchers (-want +got):\n%s", diff)
	}

	// The totals are counted anew: box's watchers are the local ones
	// again, so every count doubles, and so does each worktree's diff;
	// but build-box:/srv/web is one worktree whichever board watches it
	// (this machine's watchers and box's alike reach it over ssh).
	l := local.Fleet
	wantSum := Summary{
		Watchers: 2 * l.Watchers, Live: 2 * l.Live, Quiet: 2 * l.Quiet, Stale: 2 * l.Stale, Gone: 2 * l.Gone,
		Running: 2 * l.Running, Questions: 2 * l.Questions, Blocked: 2 * l.Blocked,
		BudgetsExhausted: 2 * l.BudgetsExhausted, NeedsHuman: 2 * l.NeedsHuman, Undelivered: 2 * l.Undelivered,
		Added: 2 * l.Added, Removed: 2 * l.Removed, Worktrees: 2*l.Worktrees - 1,
	}
	gotSum := f.Fleet
	gotSum.Sparkline = Sparkline{}
	if diff := cmp.Diff(wantSum, gotSum); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if f.Fleet.Sparkline.Total != 2*l.Sparkline.Total {
		t.Errorf("sparkline total %d, want %d", f.Fleet.Sparkline.Total, 2*l.Sparkline.Total)
	}

	wantHosts := []Host{rs[0].Host, rs[1].Host}
	wantHosts[0].Watchers = len(local.Watchers)
	wantHosts[0].Degraded = true // the fixtures' census is degraded
	wantHosts[0].Reason = "its census is degraded: 1 thing(s) could not be read"
	if diff := cmp.Diff(wantHosts, f.Hosts); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}
	wantErrs := append([]Error{}, local.Errors...)
	for _, e := range local.Errors {
		e.Host = "box"
		wantErrs = append(wantErrs, e)
	}
	wantErrs = append(wantErrs, Error{Host: "gpu", Error: "unreachable: no answer within 5s"})
	if diff := cmp.Diff(wantErrs, f.Errors); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if !f.Degraded {
		t.Error("a board with a host that could not be read is not degraded")
	}
}

// A host's sparkline says what it likes: no more than Window hours of it
// are read, none negative, and no hour's count overflows the sum.
func TestMergeBoundsAHostsSparkline(t *testing.T) {
	local := Fleet{GeneratedAt: now, Fleet: Summary{Sparkline: sparkline(now, nil)}}
	from := sparkline(now, nil).From
	counts := make([]int, 10*Window)
	for i := range counts {
		counts[i] = -5
	}
	counts[Window-1] = int(^uint(0) >> 1) // the current hour: max int
	liar := Fleet{Fleet: Summary{Sparkline: Sparkline{From: from, Counts: counts}}}
	f := Merge(local, []Remote{{Host: Host{Name: "liar", Reachable: true}, Fleet: &liar}, {Host: Host{Name: "liar2", Reachable: true}, Fleet: &liar}})
	if got, want := f.Fleet.Sparkline.Total, 2*maxAdvances; got != want {
		t.Errorf("total %d, want %d", got, want)
	}
}

// TestMergeGroups: another host's groups follow this machine's, each
// marked with its host.
func TestMergeGroups(t *testing.T) {
	local := Fleet{Groups: []Group{{Name: "here", Kind: "host"}}}
	box := Fleet{Groups: []Group{{Name: "there", Kind: "usage-limit"}}}
	f := Merge(local, []Remote{{Host: Host{Name: "box"}, Fleet: &box}})
	want := []Group{{Name: "here", Kind: "host"}, {Host: "box", Name: "there", Kind: "usage-limit"}}
	if diff := cmp.Diff(want, f.Groups); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if local.Groups[0].Host != "" {
		t.Error("Merge changed the local census")
	}
}
