package remotewake

import (
	"bufio"
	"io"
	"strings"
	"time"
)

// What a listener prints, one line each: Hello once it listens, then a
// wake line per pane woken. The relay takes nothing else.
const (
	Hello      = "omega-monitor wake: listening"
	wakePrefix = "wake "
)

// WakeLine is the line a listener prints for a wake of pane.
func WakeLine(pane string) string { return wakePrefix + pane }

// ParseWake reads a line the listener printed: the pane of a wake line, and
// false for anything else, which is dropped. Exact: no space, case or
// carriage return is forgiven, since our own listener never prints one.
func ParseWake(line string) (pane string, ok bool) {
	pane, ok = strings.CutPrefix(line, wakePrefix)
	if !ok || !IsPaneID(pane) {
		return "", false
	}
	return pane, true
}

// MaxLine is the longest line read from a listener, or from a hook's post;
// a longer one is dropped whole. Ours are under 20 bytes.
const MaxLine = 64

// A LineReader reads lines of at most MaxLine bytes, without their newline,
// dropping longer ones whole and counting them.
type LineReader struct {
	r       *bufio.Reader
	Dropped int // the lines dropped for their length
}

func NewLineReader(r io.Reader) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, 2*MaxLine)}
}

// Line returns the next line of at most MaxLine bytes. A last line without
// its newline is a line too. It returns the reader's error (io.EOF at the
// end) once no whole line is left.
func (l *LineReader) Line() (string, error) {
	long := false
	for {
		b, err := l.r.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			long = true
			continue
		case err != nil && len(b) == 0:
			return "", err
		}
		line := strings.TrimSuffix(string(b), "\n")
		if long || len(line) > MaxLine {
			l.Dropped++
			if err != nil {
				return "", err
			}
			long = false
			continue
		}
		return line, nil
	}
}

// Panes reads the panes posted in a chunk of a listener's FIFO, in order,
// each once: "PANE\n" per post; anything else is dropped. At most max are
// returned: a FIFO holds at most a few posts of a few panes.
func Panes(chunk []byte, max int) []string {
	var panes []string
	for line := range strings.SplitSeq(string(chunk), "\n") {
		if !IsPaneID(line) || len(panes) >= max {
			continue
		}
		seen := false
		for _, p := range panes {
			seen = seen || p == line
		}
		if !seen {
			panes = append(panes, line)
		}
	}
	return panes
}

// A Gate spaces the wakes passed on to the loop: the first is passed on at
// once, then at most one every Gap; those that come in between make one
// pending wake, passed on when the gap is over. However often a host's
// hooks fire, the loop is woken no more often than that, and nothing is
// kept but a flag.
type Gate struct {
	Gap     time.Duration
	last    time.Time
	pending bool
}

// Offer takes a wake at now and says whether to pass it on now; when not,
// one is pending until Due.
func (g *Gate) Offer(now time.Time) bool {
	if g.last.IsZero() || now.Sub(g.last) >= g.Gap || now.Before(g.last) {
		g.last, g.pending = now, false
		return true
	}
	g.pending = true
	return false
}

// Due is when the pending wake is to be passed on, and false when none is
// pending.
func (g *Gate) Due() (time.Time, bool) {
	return g.last.Add(g.Gap), g.pending
}

// Fire says whether a pending wake is to be passed on at now, and takes it.
func (g *Gate) Fire(now time.Time) bool {
	if !g.pending || now.Before(g.last.Add(g.Gap)) && !now.Before(g.last) {
		return false
	}
	g.last, g.pending = now, false
	return true
}

// Drop forgets a pending wake: the connection that brought it is gone, and
// the poll stays as the net.
func (g *Gate) Drop() { g.pending = false }

// Backoff is how long the relay waits before it starts a listener again,
// after fails listeners in a row ended early: 1 s, doubling, at most a
// minute.
func Backoff(fails int) time.Duration {
	if fails < 0 {
		fails = 0
	}
	if fails >= 6 {
		return time.Minute
	}
	return time.Second << fails
}
