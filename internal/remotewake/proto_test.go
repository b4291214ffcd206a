package remotewake

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseWake(t *testing.T) {
	for _, tc := range []struct {
		line string
		pane string
		ok   bool
	}{
		{"wake %3", "%3", true},
		{"wake %123456789", "%123456789", true},
		{"wake %1234567890", "", false}, // ten digits: no pane id
		{"wake %3\r", "", false},
		{"wake %3 ", "", false},
		{" wake %3", "", false},
		{"WAKE %3", "", false},
		{"wake  %3", "", false},
		{"wake 3", "", false},
		{"wake %", "", false},
		{"wake %3;rm -rf /", "", false},
		{"wake %-1", "", false},
		{"wake %٣", "", false}, // an Arabic-Indic digit
		{"wake \x1b[31m%3", "", false},
		{"wake", "", false},
		{"", "", false},
		{Hello, "", false},
	} {
		pane, ok := ParseWake(tc.line)
		if pane != tc.pane || ok != tc.ok {
			t.Errorf("ParseWake(%q) = %q, %v; want %q, %v", tc.line, pane, ok, tc.pane, tc.ok)
		}
	}
}

// TestLineReader: lines past MaxLine are dropped whole, however long, and
// counted; what is between them comes through as it was.
func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", MaxLine+1)
	huge := "wake %3" + strings.Repeat("\x00", 1<<20) // starts as a wake
	in := "a\n" + long + "\nwake %3\n" + huge + "\n\x1b]0;title\x07\n" + strings.Repeat("y", MaxLine) + "\nlast"
	lr := NewLineReader(strings.NewReader(in))
	var got []string
	for {
		line, err := lr.Line()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, line)
	}
	want := []string{"a", "wake %3", "\x1b]0;title\x07", strings.Repeat("y", MaxLine), "last"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if lr.Dropped != 2 {
		t.Errorf("dropped %d lines, want 2", lr.Dropped)
	}
}

func TestPanes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chunk string
		max   int
		want  []string
	}{
		{"one post", "%3\n", 8, []string{"%3"}},
		{"a burst of one pane", strings.Repeat("%3\n", 500), 8, []string{"%3"}},
		{"two panes in order", "%3\n%4\n%3\n", 8, []string{"%3", "%4"}},
		{"garbage dropped", "%3;id\n../../etc\n\x00\n%\n%5\n", 8, []string{"%5"}},
		{"a post cut by the read", "%3\n%1", 8, []string{"%3", "%1"}},
		{"at most max", "%1\n%2\n%3\n%4\n", 2, []string{"%1", "%2"}},
		{"nothing", "", 8, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Panes([]byte(tc.chunk), tc.max)); diff != "" {
				t.Errorf("Panes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGate: the first wake goes at once; those within the gap make one
// pending wake, passed on when the gap is over; a clock that moved back
// does not hold wakes for the length of the jump.
func TestGate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	g := &Gate{Gap: time.Second}
	var got []string
	offer := func(ms int) {
		if g.Offer(at(ms)) {
			got = append(got, "wake@"+time.Duration(ms*int(time.Millisecond)).String())
		}
	}
	fire := func(ms int) {
		if g.Fire(at(ms)) {
			got = append(got, "fire@"+time.Duration(ms*int(time.Millisecond)).String())
		}
	}
	offer(0)
	for ms := 10; ms < 500; ms += 25 { // twenty more in half a second
		offer(ms)
	}
	if due, ok := g.Due(); !ok || !due.Equal(at(1000)) {
		t.Errorf("Due = %v, %v; want %v, true", due, ok, at(1000))
	}
	fire(900) // not yet
	fire(1000)
	fire(1100) // nothing pending
	offer(1500)
	offer(2600)
	offer(2700)
	g.Drop()
	fire(4000)
	offer(1000) // the clock moved back
	want := []string{"wake@0s", "fire@1s", "wake@2.6s", "wake@1s"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("wakes passed on (-want +got):\n%s", diff)
	}
}

func TestBackoff(t *testing.T) {
	var got []time.Duration
	for n := -1; n < 9; n++ {
		got = append(got, Backoff(n))
	}
	s := time.Second
	want := []time.Duration{s, s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, time.Minute, time.Minute, time.Minute}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Backoff (-want +got):\n%s", diff)
	}
}
