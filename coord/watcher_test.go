package coord

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCoordWatcherName(t *testing.T) {
	tests := []struct {
		target Target
		want   string
	}{
		{Target{Session: "agent"}, "monitor-agent"},
		{Target{Session: "list"}, "monitor-list"},
		{Target{Host: "matrix", Session: "MoonBaseCapital"}, "monitor-matrix-MoonBaseCapital"},
		{Target{Host: "matrix", Session: "my-agent"}, "monitor-matrix-my-agent"},
		{Target{Host: "box_1", Session: "a"}, "monitor-box_1-a"},
		// Plain forms that could be read as another target fall back.
		{Target{Session: "matrix-agent"}, "monitor-" + fingerprint(Target{Session: "matrix-agent"})},
		{Target{Host: "box.lan", Session: "agent"}, "monitor-" + fingerprint(Target{Host: "box.lan", Session: "agent"})},
		{Target{Host: "a-b", Session: "c"}, "monitor-" + fingerprint(Target{Host: "a-b", Session: "c"})},
		{Target{Session: "0123456789abcdef"}, "monitor-" + fingerprint(Target{Session: "0123456789abcdef"})},
		{Target{Session: strings.Repeat("a", MaxNameLen)}, "monitor-" + fingerprint(Target{Session: strings.Repeat("a", MaxNameLen)})},
	}
	for _, tt := range tests {
		if got := WatcherName(tt.target); got != tt.want {
			t.Errorf("WatcherName(%v) = %q, want %q", tt.target, got, tt.want)
		}
	}
}

func TestCoordWatchedBy(t *testing.T) {
	tests := []struct {
		watcher string
		want    Target
		ok      bool
	}{
		{"monitor-agent", Target{Session: "agent"}, true},
		{"monitor-matrix-my-agent", Target{Host: "matrix", Session: "my-agent"}, true},
		{"monitor-0123456789abcdef", Target{}, false},
		{"monitor-", Target{}, false},
		{"monitor--x", Target{}, false},
		{"agent", Target{}, false},
		{"monitor-a.b", Target{}, false},
	}
	for _, tt := range tests {
		got, ok := WatchedBy(tt.watcher)
		if ok != tt.ok || got != tt.want {
			t.Errorf("WatchedBy(%q) = %v, %v; want %v, %v", tt.watcher, got, ok, tt.want, tt.ok)
		}
	}
}

// randomName draws names from a small alphabet rich in the characters that
// make plain names ambiguous ('-', hex digits), so collisions would show.
func randomName(r *rand.Rand, alphabet string) string {
	n := 1 + r.IntN(20)
	if r.IntN(50) == 0 {
		n = MaxNameLen - r.IntN(10)
	}
	var b strings.Builder
	for b.Len() < n {
		c := alphabet[r.IntN(len(alphabet))]
		if b.Len() == 0 && (c == '-' || c == '.') {
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func randomTarget(r *rand.Rand) Target {
	t := Target{Session: randomName(r, "ab0f-_-")}
	if r.IntN(2) == 0 {
		t.Host = randomName(r, "ab0f-._")
	}
	return t
}

// TestCoordWatcherNameProperties checks, over many random targets, that
// distinct targets never share a watcher name, that every name is itself a
// safe session name, and that a plain name reads back to its target.
func TestCoordWatcherNameProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	owner := map[string]Target{}
	for range 200000 {
		target := randomTarget(r)
		if CheckSession(target.Session) != nil || (!target.Local() && CheckHost(target.Host) != nil) {
			continue
		}
		name := WatcherName(target)
		if prev, ok := owner[name]; ok && prev != target {
			t.Fatalf("%v and %v share the watcher name %q", prev, target, name)
		}
		owner[name] = target
		if err := CheckSession(name); err != nil {
			t.Fatalf("WatcherName(%v) = %q, which is not safe: %v", target, name, err)
		}
		if back, ok := WatchedBy(name); ok && back != target {
			t.Fatalf("WatchedBy(WatcherName(%v)) = %v", target, back)
		}
	}
	if len(owner) < 10000 {
		t.Fatalf("only %d distinct targets drawn; the generator is too narrow", len(owner))
	}
}

func FuzzCoordWatcherName(f *testing.F) {
	f.Add("", "agent")
	f.Add("matrix", "my-agent")
	f.Add("a-b", "c")
	f.Add("", "a-b-c")
	f.Add("", "0123456789abcdef")
	f.Fuzz(func(t *testing.T, host, session string) {
		target := Target{Host: host, Session: session}
		if CheckSession(session) != nil || (host != "" && CheckHost(host) != nil) {
			return
		}
		name := WatcherName(target)
		if err := CheckSession(name); err != nil {
			t.Fatalf("WatcherName(%v) = %q, not safe: %v", target, name, err)
		}
		if back, ok := WatchedBy(name); ok {
			if diff := cmp.Diff(target, back); diff != "" {
				t.Fatalf("WatchedBy(%q) (-want +got):\n%s", name, diff)
			}
		}
	})
}
