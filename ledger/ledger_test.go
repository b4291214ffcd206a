package ledger

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

func TestSentinelImpossible(t *testing.T) {
	if normalize(Sentinel) == Sentinel || isNormal(Sentinel) {
		t.Errorf("Sentinel %q is a normal text; a record could equal it", Sentinel)
	}
	if strings.ContainsAny(Sentinel, "\n\r") {
		t.Errorf("Sentinel %q is more than one line", Sentinel)
	}
	if readable(Sentinel) {
		t.Errorf("Sentinel %q reads as a record line", Sentinel)
	}
}

func TestRecord(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "monitor-w")
	path := filepath.Join(dir, "ledger")
	for _, text := range []string{
		"continue with the next step",
		"  keep going\tuntil the queue\u00a0is empty  ",
		"two lines:\r\nfirst, then\n\nsecond",
		"continue with the next step", // again: moves to the end
		"",                            // nothing to record
	} {
		if err := Record(path, text); err != nil {
			t.Fatalf("Record(%q): %v", text, err)
		}
	}
	want := []string{
		"keep going until the queue is empty",
		"two lines:",
		"first, then",
		"second",
		"continue with the next step",
	}
	got, err := Texts(path)
	if err != nil {
		t.Fatalf("Texts: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Texts mismatch (-want +got):\n%s", diff)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Sentinel+"\n"+strings.Join(want, "\n")+"\n", string(data)); diff != "" {
		t.Errorf("file mismatch (-want +got):\n%s", diff)
	}
	for p, mode := range map[string]fs.FileMode{dir: fs.ModeDir | 0o700, path: 0o600, path + ".lock": 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != mode {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), mode)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("directory holds %d entries, want the ledger and its lock: %v", len(entries), entries)
	}

	m, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if m.Len() != len(want) {
		t.Errorf("Load: Len() = %d, want %d", m.Len(), len(want))
	}
	if got := m.Mask("❯ keep going until the queue is empty"); got != "❯ " {
		t.Errorf("loaded Mask = %q, want %q", got, "❯ ")
	}
}

func TestRecordBlankMakesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger")
	if err := Record(path, " \n\t"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), Sentinel+"\n"; got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
}

func TestRecordRetires(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger")
	for i := range 10 {
		if err := RecordOptions(path, fmt.Sprintf("nudge number %d", i), Options{Max: 3}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Texts(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"nudge number 7", "nudge number 8", "nudge number 9"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Texts mismatch (-want +got):\n%s", diff)
	}
	// A text of more lines than Max keeps its last lines.
	if err := RecordOptions(path, "a\nb\nc\nd", Options{Max: 2}); err != nil {
		t.Fatal(err)
	}
	got, _ = Texts(path)
	if diff := cmp.Diff([]string{"c", "d"}, got); diff != "" {
		t.Errorf("Texts mismatch (-want +got):\n%s", diff)
	}
	if err := RecordOptions(path, "x", Options{Max: -1}); err == nil {
		t.Errorf("RecordOptions with Max -1: no error")
	}
}

func TestRecordDefaultBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger")
	var b strings.Builder
	for i := range DefaultMax + 500 {
		fmt.Fprintf(&b, "nudge %d\n", i)
	}
	if err := Record(path, b.String()); err != nil {
		t.Fatal(err)
	}
	got, err := Texts(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != DefaultMax || got[0] != "nudge 500" {
		t.Errorf("Texts: %d records from %q, want %d from %q", len(got), got[0], DefaultMax, "nudge 500")
	}
}

func TestLoadMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "ledger")
	m, err := Load(path)
	if err != nil || m == nil || m.Len() != 0 {
		t.Errorf("Load(missing) = %v, %v; want an empty Matcher and no error", m, err)
	}
	texts, err := Texts(path)
	if err != nil || len(texts) != 0 {
		t.Errorf("Texts(missing) = %q, %v; want none and no error", texts, err)
	}
}

func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir()
	m, err := Load(dir) // a directory is no ledger
	if err == nil || errors.Is(err, ErrCorrupt) {
		t.Errorf("Load(directory) = %v, %v; want an error that is not ErrCorrupt", m, err)
	}
	if err != nil && !strings.HasPrefix(err.Error(), "ledger: ") {
		t.Errorf("error %q lacks the ledger: prefix", err)
	}
	if err := Record(dir, "continue with the next step"); err == nil {
		t.Errorf("Record over a directory: no error")
	}
}

func TestCorrupt(t *testing.T) {
	for _, tt := range []struct {
		name string
		data string
		want []string
		err  *CorruptError
	}{
		{"well formed", Sentinel + "\none\ntwo\n", []string{"one", "two"}, nil},
		{"last newline missing", Sentinel + "\none\ntwo", []string{"one", "two"}, nil},
		{"empty file", "", nil, &CorruptError{NoSentinel: true}},
		{"sentinel without newline", Sentinel, nil, nil},
		{"no sentinel", "one\ntwo\n", []string{"one", "two"}, &CorruptError{NoSentinel: true}},
		{"binary junk", "\x00\x01\x02\xff\xfe\n\x89PNG\r\n\x1a\n", nil,
			&CorruptError{NoSentinel: true, Dropped: 3}},
		{"junk lines", Sentinel + "\none\n\xff\xfe\nnul\x00here\ntwo\n" + Sentinel + "\n", []string{"one", "two"},
			&CorruptError{Dropped: 3}},
		{"blank line", Sentinel + "\none\n\ntwo\n", []string{"one", "two"}, &CorruptError{Rewritten: 1}},
		{"not normal", Sentinel + "\n  one  \ttwo\r\n", []string{"one two"}, &CorruptError{Rewritten: 1}},
		{"crlf", Sentinel + "\r\none\r\n", []string{"one"}, &CorruptError{NoSentinel: true, Dropped: 1, Rewritten: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ledger")
			if err := os.WriteFile(path, []byte(tt.data), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := Texts(path)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Texts mismatch (-want +got):\n%s", diff)
			}
			checkCorrupt(t, "Texts", path, err, tt.err)
			m, err := Load(path)
			checkCorrupt(t, "Load", path, err, tt.err)
			if m == nil || m.Len() != len(tt.want) {
				t.Errorf("Load: Matcher %v, want %d records", m, len(tt.want))
			}

			// The next Record repairs the file.
			if err := Record(path, "continue with the next step"); err != nil {
				t.Fatalf("Record: %v", err)
			}
			got, err = Texts(path)
			if err != nil {
				t.Errorf("Texts after Record: %v", err)
			}
			want := append(tt.want, "continue with the next step")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Texts after Record mismatch (-want +got):\n%s", diff)
			}
			data, _ := os.ReadFile(path)
			if !strings.HasPrefix(string(data), Sentinel+"\n") {
				t.Errorf("file after Record starts %q, want the sentinel", data[:min(len(data), 40)])
			}
		})
	}
}

func checkCorrupt(t *testing.T, op, path string, err error, want *CorruptError) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Errorf("%s: %v, want no error", op, err)
		}
		return
	}
	var got *CorruptError
	if !errors.As(err, &got) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("%s: %v, want a *CorruptError", op, err)
	}
	w := *want
	w.Path = path
	if diff := cmp.Diff(&w, got); diff != "" {
		t.Errorf("%s: CorruptError mismatch (-want +got):\n%s", op, diff)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "ledger: ") || !strings.Contains(msg, "corrupt") {
		t.Errorf("%s: error %q does not say the ledger is corrupt", op, msg)
	}
}

func TestLoadTooLarge(t *testing.T) {
	defer func(n int) { maxFile = n }(maxFile)
	maxFile = 1 << 10
	path := filepath.Join(t.TempDir(), "ledger")
	if err := os.WriteFile(path, []byte(Sentinel+"\n"+strings.Repeat("a record line\n", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Texts(path)
	var c *CorruptError
	if !errors.As(err, &c) || !c.Truncated {
		t.Errorf("Texts of a file over %d bytes: %v, want a truncated CorruptError", maxFile, err)
	}
	if len(got) == 0 || len(got) >= 100 {
		t.Errorf("Texts of a truncated file: %d records, want some of the 100", len(got))
	}
}

// TestRecordConcurrent records from many goroutines at once, each with its
// own lock file descriptor as separate processes would have; none is lost.
func TestRecordConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger")
	const writers, each = 6, 8
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				errs <- Record(path, fmt.Sprintf("writer %d sent nudge %d", w, i))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	got, err := Texts(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != writers*each {
		t.Errorf("%d records after %d concurrent Records", len(got), writers*each)
	}
}

// TestGrepNeverBlanks runs the shell's use of the file: grep -vFf over a
// stream, with a ledger holding only its sentinel, keeps every line.
func TestGrepNeverBlanks(t *testing.T) {
	grep := testenv.Need(t, "grep")[0]
	path := filepath.Join(t.TempDir(), "ledger")
	if err := Record(path, ""); err != nil {
		t.Fatal(err)
	}
	stream := strings.Join(screenLines(t), "\n") + "\n"
	for _, env := range []string{"LC_ALL=C", "LC_ALL=C.UTF-8"} {
		cmd := exec.Command(grep, "-vFf", path)
		cmd.Env = append(os.Environ(), env)
		cmd.Stdin = strings.NewReader(stream)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s grep -vFf: %v", env, err)
		}
		if diff := cmp.Diff(stream, string(out)); diff != "" {
			t.Errorf("%s grep -vFf over the sentinel-only ledger changed the stream (-want +got):\n%s", env, diff)
		}
	}
}
