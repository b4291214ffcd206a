package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/tick"
)

// Many writers append while sweeps replace the file: no append is lost to a
// replace (the writer that opened the old file before the rename), and no
// line is torn or doubled.
func TestHistorySurvivesManyWritersAndSweeps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := statedir.Dir(dir)
	const writers, each, keep = 8, 300, 500
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				ev := []tick.Event{{Name: "nudge", State: "STALLED", Fields: map[string]any{"id": fmt.Sprintf("%d-%d", w, i)}}}
				if err := d.AppendHistory(time.Now(), "t", ev); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	dropped := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 40 {
			n, err := statedir.Dir(dir).SweepHistory(keep)
			if err != nil {
				t.Error(err)
				return
			}
			dropped += n
			time.Sleep(time.Millisecond)
		}
	}()
	wg.Wait()
	<-done
	data, err := os.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if got, want := len(lines)+dropped, writers*each; got != want {
		t.Errorf("%d lines kept + %d swept = %d, want %d: appends were lost", len(lines), dropped, got, want)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		var v struct{ ID string }
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.ID == "" {
			t.Fatalf("bad line %q: %v", l, err)
		}
		if seen[v.ID] {
			t.Fatalf("line %s twice", v.ID)
		}
		seen[v.ID] = true
	}
	if dropped == 0 {
		t.Errorf("no sweep dropped anything; the test raced nothing")
	}
}

func TestSweepKeepsTheLastLinesAndDropsATornOne(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b bytes.Buffer
	for i := range 12 {
		fmt.Fprintf(&b, "{\"n\":%d}\n", i)
	}
	b.WriteString(`{"n":`)
	path := filepath.Join(dir, "history.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	n, err := statedir.Dir(dir).SweepHistory(10)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if n != 3 || !strings.HasPrefix(string(data), "{\"n\":2}\n") || !strings.HasSuffix(string(data), "{\"n\":11}\n") {
		t.Errorf("dropped %d, kept:\n%s", n, data)
	}
	after, _ := os.Stat(path)
	if os.SameFile(before, after) {
		t.Errorf("the sweep rewrote the history in place, not by replace")
	}
	if after.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", after.Mode().Perm())
	}
	// Under the cap, nothing is touched.
	if n, err := statedir.Dir(dir).SweepHistory(10); n != 0 || err != nil {
		t.Errorf("second sweep: %d, %v", n, err)
	}
}
