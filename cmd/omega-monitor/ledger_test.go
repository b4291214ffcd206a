package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/ledger"
)

func TestLedgerCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "monitor-w", "ledger")
	if err := os.Mkdir(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(dir, "corrupt")
	if err := os.WriteFile(corrupt, []byte(ledger.Sentinel+"\nno sentinel\n\xff\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	readme := filepath.Join(dir, "README.md")
	const readmeText = "# title\n\nA paragraph.\n\n\nAnother.\n"
	if err := os.WriteFile(readme, []byte(readmeText), 0o644); err != nil {
		t.Fatal(err)
	}
	nowhere := filepath.Join(dir, "typo", "ledger")
	// The steps run in order against the same file.
	for _, tt := range []struct {
		name       string
		args       []string
		stdin      string
		code       int
		stdout     string
		stderrHas  string // a substring stderr must hold
		stderrNone bool
	}{
		{name: "no subcommand", args: []string{"ledger"}, code: 2, stderrHas: "usage: omega-monitor ledger"},
		{name: "help", args: []string{"ledger", "--help"}, code: 0, stdout: "usage: omega-monitor ledger"},
		{name: "record help", args: []string{"ledger", "record", "-h"}, code: 0, stdout: "usage: omega-monitor ledger"},
		{name: "unknown", args: []string{"ledger", "forget", file}, code: 2, stderrHas: `unknown subcommand "forget"`},
		{name: "record one argument", args: []string{"ledger", "record", file}, code: 2, stderrHas: "want 2 arguments, have 1"},
		{name: "record bad flag", args: []string{"ledger", "record", "-x", file, "t"}, code: 2, stderrHas: "unknown flag -"},
		{name: "record bad max", args: []string{"ledger", "record", "-max", "0", file, "t"}, code: 2, stderrHas: "-max 0"},
		{name: "list missing", args: []string{"ledger", "list", file}, code: 0, stderrNone: true},
		{name: "record", args: []string{"ledger", "record", file, "continue with the next step"}, code: 0, stderrNone: true},
		{name: "record short", args: []string{"ledger", "record", file, "go on"}, code: 0, stderrHas: "can never be matched"},
		{name: "record stdin", args: []string{"ledger", "record", file, "-"}, stdin: "keep going\nuntil the queue is empty\n", code: 0, stderrNone: true},
		{name: "record text like a flag", args: []string{"ledger", "record", file, "-- keep going --"}, code: 0, stderrNone: true},
		{name: "list", args: []string{"ledger", "list", file}, code: 0, stderrNone: true,
			stdout: "continue with the next step\ngo on\nkeep going\nuntil the queue is empty\n-- keep going --\n"},
		{name: "record max", args: []string{"ledger", "record", "-max", "2", file, "pick the next open ticket"}, code: 0, stderrNone: true},
		{name: "list bounded", args: []string{"ledger", "list", file}, code: 0, stderrNone: true,
			stdout: "-- keep going --\npick the next open ticket\n"},
		{name: "record into a directory", args: []string{"ledger", "record", dir, "continue"}, code: 1, stderrHas: "is not a regular file"},
		{name: "record into a README", args: []string{"ledger", "record", readme, "continue"}, code: 1,
			stderrHas: "README.md is not an echo ledger (its first line is not the ledger's sentinel); refusing to rewrite it"},
		{name: "record into a missing directory", args: []string{"ledger", "record", nowhere, "continue"}, code: 1,
			stderrHas: "no directory " + filepath.Dir(nowhere)},
		{name: "list corrupt", args: []string{"ledger", "list", corrupt}, code: 1, stdout: "no sentinel\n", stderrHas: "is corrupt"},
		{name: "record repairs", args: []string{"ledger", "record", corrupt, "continue with the next step"}, code: 0, stderrNone: true},
		{name: "list repaired", args: []string{"ledger", "list", corrupt}, code: 0, stderrNone: true,
			stdout: "no sentinel\ncontinue with the next step\n"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tt.args, strings.NewReader(tt.stdin), &stdout, &stderr)
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", tt.name, code, tt.code, stderr.String())
		}
		switch {
		case strings.HasPrefix(tt.stdout, "usage:"):
			if !strings.HasPrefix(stdout.String(), tt.stdout) {
				t.Errorf("%s: stdout %q, want the usage", tt.name, stdout.String())
			}
		default:
			if diff := cmp.Diff(tt.stdout, stdout.String()); diff != "" {
				t.Errorf("%s: stdout mismatch (-want +got):\n%s", tt.name, diff)
			}
		}
		if tt.stderrNone && stderr.Len() > 0 {
			t.Errorf("%s: stderr %q, want none", tt.name, stderr.String())
		}
		if !strings.Contains(stderr.String(), tt.stderrHas) {
			t.Errorf("%s: stderr %q, want it to hold %q", tt.name, stderr.String(), tt.stderrHas)
		}
		if tt.code == 1 && strings.Count(strings.TrimSuffix(stderr.String(), "\n"), "\n") > 0 {
			t.Errorf("%s: stderr %q, want one line", tt.name, stderr.String())
		}
	}
	if got, err := os.ReadFile(readme); err != nil || string(got) != readmeText {
		t.Errorf("README.md changed: %q (%v)", got, err)
	}
	if _, err := os.Stat(filepath.Dir(nowhere)); !os.IsNotExist(err) {
		t.Errorf("ledger record created %s (%v)", filepath.Dir(nowhere), err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), ledger.Sentinel+"\n") {
		t.Errorf("ledger file starts %q, want the sentinel", data)
	}
}
