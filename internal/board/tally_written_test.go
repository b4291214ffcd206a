package board

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
)

// TestTallyCountedAsWritten: the tally a tick keeps when it counts its own
// history lines and its own log line as it writes them
// (NextTallyAppending: the history held, the log's end found before the
// state is saved and the line written after) is the tally it would keep
// reading them back after the writes (NextTally), over random runs of the
// tick's appends, other writers' appends (whole lines, lines that cannot
// be read, lines torn and completed later; a log line between the tick's
// count and its line), a line that says more than was counted, sweeps that
// replace the history, a log moved aside, and a clock that crosses hours
// and leaves the 48-hour window behind. The tick's log line is counted
// whenever nothing wrote to the log between its look and its line.
func TestTallyCountedAsWritten(t *testing.T) {
	t.Parallel()
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 37))
			d := statedir.Dir(filepath.Join(t.TempDir(), "monitor-agent"))
			if err := os.MkdirAll(string(d), 0o700); err != nil {
				t.Fatal(err)
			}
			names := []string{event.Nudge, event.Escalate, event.BudgetReset, event.Failure, event.Disagreement,
				event.AlertNotDelivered, event.State, event.NudgeTyped}
			events := func(n int) []event.Event {
				es := make([]event.Event, n)
				for i := range es {
					es[i] = event.Event{Name: names[rng.IntN(len(names))], State: "STALLED", Fields: map[string]any{"n": rng.IntN(100)}}
				}
				return es
			}
			raw := func(data string) {
				f, err := os.OpenFile(d.Path(statedir.History), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if _, err := f.WriteString(data); err != nil {
					t.Fatal(err)
				}
			}
			at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
			var written, reread json.RawMessage
			for step := range 120 {
				at = at.Add(time.Duration(rng.IntN(150)) * time.Minute / 2)
				switch k := rng.IntN(10); {
				case k < 5: // a poll: its history lines and its log line counted as written
					prev := written
					lines, err := statedir.HistoryLines(at, "agent", events(rng.IntN(3)))
					if err != nil {
						t.Fatal(err)
					}
					var hist Own
					var held *statedir.HeldHistory
					if len(lines) > 0 {
						if held, err = d.HoldHistory(); err != nil {
							t.Fatal(err)
						}
						hist = Own{Ino: held.Ino, Size: held.Size, Lines: lines}
					}
					line := "MONITOR · agent · STALLED"
					ino, size, err := d.LogEnd()
					if err != nil {
						t.Fatal(err)
					}
					var counted Counted
					written, counted = NextTallyAppending(string(d), at, written, hist, Own{Ino: ino, Size: size, Lines: statedir.LogLine(at, line)})
					if len(lines) > 0 && counted.History == tornEnd(t, d) {
						t.Fatalf("step %d: history counted %v, with a torn line at the end %v", step, counted.History, !counted.History)
					}
					if !counted.Log {
						t.Fatalf("step %d: the poll's log line is not counted as written, though nothing wrote to the log since it looked", step)
					}
					histAsCounted := true
					if held != nil {
						a, err := held.Append(lines)
						if err != nil {
							t.Fatal(err)
						}
						held.Release()
						histAsCounted = a.Ino == held.Ino && a.Offset == held.Size && a.Bytes == len(lines)
					}
					if counted.History && !histAsCounted {
						t.Fatalf("step %d: the history held went elsewhere", step)
					}
					if len(lines) > 0 && !counted.History {
						// Left for the next read: the board, and the
						// next poll, go on from the tally. The poll's
						// log line is then left too.
						written = NextTally(string(d), at, prev)
						counted.Log = false
					}
					// Between the count and the line: another writer
					// first, a problem the line then says, the log moved
					// aside; each leaves the line to the next read.
					switch rng.IntN(8) {
					case 0:
						d.AppendLog(at, "MONITOR · agent · alert delivered")
					case 1:
						line += " · error: vitals not written"
					case 2:
						os.Rename(d.Path(statedir.Log), d.Path(statedir.Log)+".1")
					}
					a, err := d.WriteLog(at, line)
					if err != nil {
						t.Fatal(err)
					}
					asCounted := a.Ino == ino && a.Offset == size && a.Bytes == len(statedir.LogLine(at, line)) && line == "MONITOR · agent · STALLED"
					if counted.Log && !asCounted {
						written = NextTally(string(d), at, prev)
					} else if !counted.Log {
						written = NextTally(string(d), at, written)
					}
					reread = NextTally(string(d), at, reread)
					if diff := cmp.Diff(decodeTally(reread), decodeTally(written)); diff != "" {
						t.Fatalf("step %d: the tally counted as written is not the tally read back (-read +written):\n%s", step, diff)
					}
				case k < 7: // another writer: ack, deliver
					if err := d.AppendHistory(at.Add(-time.Duration(rng.IntN(90))*time.Second), "agent", events(1+rng.IntN(2))); err != nil {
						t.Fatal(err)
					}
					if rng.IntN(2) == 0 {
						d.AppendLog(at, "MONITOR · agent · nudge typed")
					}
				case k < 8: // a line that cannot be read, or one torn (completed later)
					if rng.IntN(2) == 0 {
						raw("not json\n")
					} else {
						raw(`{"ts":"` + at.UTC().Format(time.RFC3339) + `","event":"nud`)
						if rng.IntN(2) == 0 {
							raw("ge\"}\n")
						}
					}
				case k < 9: // the sweep
					if _, err := d.SweepHistory(1 + rng.IntN(6)); err != nil {
						t.Fatal(err)
					}
				default: // the log moved aside, as past its cap
					os.Rename(d.Path(statedir.Log), d.Path(statedir.Log)+".1")
				}
			}
		})
	}
}

// tornEnd says the history ends in a line without its newline.
func tornEnd(t *testing.T, d statedir.Dir) bool {
	t.Helper()
	data, err := os.ReadFile(d.Path(statedir.History))
	if err != nil {
		t.Fatal(err)
	}
	return len(data) > 0 && data[len(data)-1] != '\n'
}
