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
	if h := getenv("QWEN_HOME"); h != "" {
		return h
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".qwen")
	}
	return ""
}

// qwenChats returns the tails of the recent Qwen Code records under home
// whose working directory is dir, on this machine: the newest
// MaxQwenChats, as a remote host sends them. Only regular files are read.
func qwenChats(home, dir string, now time.Time) [][]byte {
	if dir == "" || home == "" {
		return nil
	}
	chats, _ := filepath.Glob(filepath.Join(home, "projects", "*", "chats", "*.jsonl"))
	type chat struct {
		path string
		mod  time.Time
	}
	var recent []chat
	for _, p := range chats {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || now.Sub(fi.ModTime()) > probe.WitnessMaxAge || probe.QwenChatDir(fsutil.FirstLine(p, 1<<20)) != dir {
			continue
		}
		recent = append(recent, chat{p, fi.ModTime()})
	}
	slices.SortStableFunc(recent, func(a, b chat) int { return b.mod.Compare(a.mod) })
	var out [][]byte
	for _, c := range recent[:min(len(recent), MaxQwenChats)] {
		if tail := readTail(c.path, MaxStatusFile); tail != nil {
			out = append(out, tail)
		}
	}
	return out
}
