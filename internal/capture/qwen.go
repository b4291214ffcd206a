package capture

import (
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/probe"
)

// Qwen Code's own word: it records each session in
// $QWEN_HOME/projects/<dir>/chats/<session>.jsonl (QWEN_HOME defaults to
// ~/.qwen), every line naming the session's working directory; the human's
// message is written when it is sent and the answer when it is whole
// (probe/qwenwitness.go reads them). As a Codex log, the record names no
// pane: a record counts for a pane when its working directory is the
// pane's and it was written lately, and another Qwen Code in the same
// directory can only make a busy witness, which only stops a nudge.

// MaxQwenChats is how many of the pane's recent Qwen Code records a frame
// carries, the newest, for the reasons and at the cost MaxCodexLogs says.
const MaxQwenChats = 4

// QwenHome is where Qwen Code keeps its records in the environment getenv
// reads: $QWEN_HOME, else ~/.qwen ("" when neither is known).
func QwenHome(getenv func(string) string) string {
	return agentHome(getenv, "QWEN_HOME", ".qwen")
}

// qwenChats returns the tails of the recent Qwen Code records under home
// whose working directory is dir, on this machine: the newest
// MaxQwenChats, as a remote host sends them.
func qwenChats(home, dir string, now time.Time) [][]byte {
	if home == "" {
		return nil
	}
	chats, _ := filepath.Glob(filepath.Join(home, "projects", "*", "chats", "*.jsonl"))
	return recentTails(chats, probe.QwenChatDir, dir, now, MaxQwenChats)
}

// recentTails returns the last MaxStatusFile bytes of each of the newest
// max of paths written within probe.WitnessMaxAge of now whose first line
// names dir as dirOf reads it. Only regular files are read: a FIFO under a
// log's name would hold the read, and a link could lead anywhere.
func recentTails(paths []string, dirOf func([]byte) string, dir string, now time.Time, max int) [][]byte {
	if dir == "" {
		return nil
	}
	type file struct {
		path string
		mod  time.Time
	}
	var recent []file
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || now.Sub(fi.ModTime()) > probe.WitnessMaxAge || dirOf(fsutil.FirstLine(p, 1<<20)) != dir {
			continue
		}
		recent = append(recent, file{p, fi.ModTime()})
	}
	slices.SortStableFunc(recent, func(a, b file) int { return b.mod.Compare(a.mod) })
	var out [][]byte
	for _, f := range recent[:min(len(recent), max)] {
		if tail := readTail(f.path, MaxStatusFile); tail != nil {
			out = append(out, tail)
		}
	}
	return out
}
