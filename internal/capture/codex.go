package capture

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/omega-monitor/omega-monitor/probe"
)

// Codex CLI's own word: it logs each session to
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl (CODEX_HOME defaults to
// ~/.codex), whose first line names the session's working directory and
// whose task_started / task_complete events say whether a turn is open
// (probe/codexwitness.go reads them). The log names no pane: a log counts for
// a pane when its working directory is the pane's and it was written
// lately. Another Codex in the same directory can only make a busy witness,
// which only stops a nudge.

// CodexHome is where Codex keeps its session logs in the environment getenv
// reads: $CODEX_HOME, else ~/.codex ("" when neither is known).
func CodexHome(getenv func(string) string) string {
	return agentHome(getenv, "CODEX_HOME", ".codex")
}

// agentHome is an agent's home in the environment getenv reads: the
// variable's value, else dir in the user's home ("" when neither is known).
func agentHome(getenv func(string) string, variable, dir string) string {
	if h := getenv(variable); h != "" {
		return h
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, dir)
	}
	return ""
}

// codexLogs returns the tails of the recent Codex session logs under home
// whose working directory is dir, on this machine: the newest
// MaxCodexLogs, as a remote host sends them.
func codexLogs(home, dir string, now time.Time) [][]byte {
	if dir == "" || home == "" {
		return nil
	}
	days, _ := filepath.Glob(filepath.Join(home, "sessions", "[0-9]*", "[0-9]*", "[0-9]*"))
	sort.Strings(days)
	if len(days) > 2 {
		days = days[len(days)-2:] // today and yesterday, by Codex's clock
	}
	var logs []string
	for _, day := range days {
		found, _ := filepath.Glob(filepath.Join(day, "rollout-*.jsonl"))
		logs = append(logs, found...)
	}
	return recentTails(logs, probe.CodexLogDir, dir, now, MaxCodexLogs)
}

// readTail returns the last n bytes of a file, or nil.
func readTail(path string, n int64) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	off := max(fi.Size()-n, 0)
	b := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
		return nil
	}
	return b
}
