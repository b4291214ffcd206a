package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/golden"
)

// TestReplayGolden replays every recorded session in golden/sessions and
// compares what it says and does with the .out file beside it. Regenerate
// with go test ./cmd/omega-monitor -run TestReplayGolden -update, then read
// the diff: an output changes only on purpose.
func TestReplayGolden(t *testing.T) {
	t.Parallel()
	sessions, err := filepath.Glob(filepath.Join("..", "..", "golden", "sessions", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) < 15 {
		t.Errorf("golden/sessions holds %d recorded sessions; it must hold at least 15", len(sessions))
	}
	for _, path := range sessions {
		name := strings.TrimSuffix(filepath.Base(path), ".txtar")
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run([]string{"replay", path}, nil, &out, &errb); code != 0 {
				t.Fatalf("replay exited %d: %s", code, errb.String())
			}
			abs, err := filepath.Abs(strings.TrimSuffix(path, ".txtar") + ".out")
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, out.String(), abs)
		})
	}
}

func TestReplayErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"unknown-section": "-- 001.pane --\nx\n-- 001.nonsense --\n",
		"no-pane":         "-- 001.work --\n3\n",
		"bad-flags":       "-- flags --\n--nudge-budget many\n-- 001.pane --\nx\n",
		"bad-quote":       "-- flags --\n--nudge-text 'open\n-- 001.pane --\nx\n",
		"twice":           "-- 001.pane --\nx\n-- 001.pane --\ny\n",
	} {
		path := filepath.Join(dir, name+".txtar")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		if code := run([]string{"replay", path}, nil, &out, &errb); code != 1 || !strings.HasPrefix(errb.String(), "omega-monitor replay: ") || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%s: code %d, stderr %q; want 1 and one line", name, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"replay", filepath.Join(dir, "missing.txtar")}, nil, &out, &errb); code != 1 {
		t.Errorf("a missing file: code %d", code)
	}
	if code := run([]string{"replay"}, nil, &out, &errb); code != 2 {
		t.Errorf("no file: code %d, want 2", code)
	}
	// A file that never ends is refused, not read.
	errb.Reset()
	if code := run([]string{"replay", "/dev/zero"}, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), "not a regular file") {
		t.Errorf("/dev/zero: code %d, stderr %q", code, errb.String())
	}
}

func FuzzReplay(f *testing.F) {
	f.Add([]byte("-- flags --\n--nudge-budget 2\n-- 001.pane --\n────\n❯ \n────\n-- 001.work --\n3\n"))
	f.Add([]byte("comment\n-- 002.pane --\nx\n-- 001.capture-error --\ntimeout\n"))
	f.Add([]byte("-- flags --\n--start 2026-01-05T09:00:00Z --nudge-text '\"'\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "f.txtar")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := run([]string{"replay", path}, nil, &out, &errb)
		if code != 0 && code != 1 {
			t.Fatalf("replay exited %d", code)
		}
		if code == 1 && strings.Count(errb.String(), "\n") != 1 {
			t.Fatalf("a replay error is one line: %q", errb.String())
		}
		var again bytes.Buffer
		run([]string{"replay", path}, nil, &again, &errb)
		if again.String() != out.String() {
			t.Fatal("same recording, different replay")
		}
	})
}
