package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStatusUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"status", "--once", "--json"},
		{"status", "--json", "--tmux"},
		{"status", "extra"},
		{"status", "--interval", "1ms"},
		{"status", "--bogus"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, nil, &out, &errb); code != 2 || errb.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, errb.String())
		}
	}
}

func TestStatusOnceOfAnEmptyRootExits3(t *testing.T) {
	t.Setenv("OMEGA_MONITOR_HOME", t.TempDir())
	var out, errb bytes.Buffer
	if code := run([]string{"status", "--once"}, nil, &out, &errb); code != 3 {
		t.Errorf("exit %d, want 3; stderr %s", code, errb.String())
	}
	if !strings.HasSuffix(out.String(), "\nno live watchers\n") {
		t.Errorf("output:\n%s", out.String())
	}
	// Not a terminal: the compact form, with the same exit status.
	out.Reset()
	if code := run([]string{"status"}, nil, &out, &errb); code != 3 || strings.Contains(out.String(), "\x1b") {
		t.Errorf("status to a buffer: exit %d\n%q", code, out.String())
	}
}

func TestReadKeys(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	keys := make(chan key, 16)
	go readKeys(r, keys)
	w.Write([]byte("j\x1b[Bk\x1b[A\x1bOB\r"))
	w.Write([]byte{3})
	w.Close()
	var got []key
	for k := range keys {
		got = append(got, k)
		if len(got) == 8 {
			break
		}
	}
	want := []key{keyDown, keyDown, keyUp, keyUp, keyDown, keyEnter, keyQuit, keyQuit}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}
