package expect

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/omega-monitor/omega-monitor/alert"
)

// MaxPane caps a pane added to the corpus: a capture is a screenful and
// its scrollback, never megabytes.
const MaxPane = 4 << 20

// ReadPane reads a capture to add to the corpus from r, ending in a
// newline, masked: the corpus is committed and shared, so a capture keeps
// no secret. Lines are masked one by one, so that the screen keeps its
// rows, and masked says on how many; where the whole pane reads otherwise
// (a key wrapped over lines, boxed, or a PEM body) a line's mask would
// leave the rest of it, so that is refused, to be masked by hand.
func ReadPane(r io.Reader) (pane []byte, masked int, err error) {
	pane, err = io.ReadAll(io.LimitReader(r, MaxPane+1))
	if err == nil && len(pane) > MaxPane {
		err = fmt.Errorf("larger than %d bytes", MaxPane)
	}
	if err != nil {
		return nil, 0, errorf("reading the pane: %w", err)
	}
	if len(bytes.TrimSpace(pane)) == 0 {
		return nil, 0, errorf("the pane on standard input is empty")
	}
	if pane[len(pane)-1] != '\n' {
		pane = append(pane, '\n')
	}
	whole := alert.Redact(string(pane))
	pane, masked = alert.RedactLines(pane)
	if whole != string(pane) {
		return nil, 0, errorf("the pane holds what looks like a secret across lines (wrapped, or drawn in a box): mask it by hand, then add the case")
	}
	return pane, masked, nil
}

// AddCase writes a new case of the corpus: base.pane, base.want holding w,
// and base.rules.json when rules is not nil. It never overwrites: a name
// already taken is an error, and a case is written whole or not at all.
func AddCase(base string, pane []byte, w Want, rules []byte) error {
	files := []struct {
		path string
		data []byte
	}{{base + ".pane", pane}, {base + ".want", []byte(w.Format())}}
	if rules != nil {
		files = append(files, struct {
			path string
			data []byte
		}{base + ".rules.json", rules})
	}
	for i, f := range files {
		if err := createNew(f.path, f.data); err != nil {
			for _, done := range files[:i] {
				os.Remove(done.path)
			}
			return err
		}
	}
	return nil
}

// createNew writes a file that must not exist yet.
func createNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return errorf("%s exists already; choose another name", path)
	}
	if err != nil {
		return errorf("%w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return errorf("%w", err)
	}
	return f.Close()
}

// Added says that the case base was added with want, and whether the
// classifier agrees with it today (got, with explain, what it said): the
// reason it gives, or what it reads instead and how to go on.
func Added(base string, want, got Want, explain string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "added %s.pane and %s.want: want %s", base, base, want.State)
	if want.Hold != "" {
		fmt.Fprintf(&b, " (hold %s)", want.Hold)
	}
	if got.State == want.State && got.Hold == want.Hold {
		fmt.Fprintf(&b, "; the classifier agrees (agent %s, rule: %s); check that reason in the .want\n", want.Agent, want.Rule)
		return b.String()
	}
	fmt.Fprintf(&b, "; the classifier reads %s", got.State)
	if got.Hold != "" {
		fmt.Fprintf(&b, " (hold %s)", got.Hold)
	}
	fmt.Fprintf(&b, ", so go test ./classify fails until it is fixed (then go test ./classify -run TestGolden -update writes the agent and rule; read them):\n%s", explain)
	return b.String()
}
