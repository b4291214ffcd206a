package vitals

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/probe"
)

// ClaudeSource finds Claude Code's transcript of the session in pane: the
// status file among statuses that names pane (the freshest, as the
// witness picks it) names the session and its directory, and the
// transcript is home/projects/<dir>/<session>.jsonl (home is ~/.claude).
// Only a session id of letters, digits and dashes is taken: a status file
// is the agent's, and a name like "../x" must open nothing.
func ClaudeSource(home string, statuses [][]byte, pane string) (Source, error) {
	id, cwd, err := claudeSession(statuses, pane)
	if id == "" {
		return Source{Agent: claudeIf(err)}, err
	}
	p := filepath.Join(home, "projects", ProjectDir(cwd), id+".jsonl")
	if _, err := os.Lstat(p); err == nil {
		return Source{Agent: Claude, Path: p}, nil
	}
	// Another version may name its directories otherwise: the session's
	// id is unique under projects/.
	if m, _ := filepath.Glob(filepath.Join(home, "projects", "*", id+".jsonl")); len(m) > 0 {
		sort.Strings(m)
		return Source{Agent: Claude, Path: m[0]}, nil
	}
	return Source{Agent: Claude}, fmt.Errorf("vitals: no transcript of session %s", id)
}

func claudeIf(err error) string {
	if err != nil {
		return Claude
	}
	return ""
}

// ClaudeSession is the session of Claude Code in pane, as its freshest
// status file among statuses names it: "" and no error where no status
// file names the pane.
func ClaudeSession(statuses [][]byte, pane string) (string, error) {
	id, _, err := claudeSession(statuses, pane)
	return id, err
}

func claudeSession(statuses [][]byte, pane string) (id, cwd string, err error) {
	type status struct {
		SessionID string `json:"sessionId"`
		Cwd       string `json:"cwd"`
		Tmux      string `json:"tmux"`
		UpdatedAt int64  `json:"updatedAt"`
	}
	var best status
	found := false
	for _, data := range statuses {
		var f status
		if json.Unmarshal(data, &f) != nil || f.Tmux == "" || f.Tmux != pane {
			continue
		}
		if !found || f.UpdatedAt > best.UpdatedAt {
			best, found = f, true
		}
	}
	if !found {
		return "", "", nil
	}
	if !safeID(best.SessionID) {
		return "", "", errors.New("vitals: the agent's status file names no usable session id")
	}
	return best.SessionID, best.Cwd, nil
}

// ClaudeSourceOn names the transcript of session id in folder dir of
// ~/.claude/projects on the agent's host.
func ClaudeSourceOn(id, dir string) Source {
	return Source{Agent: Claude, Path: "~/.claude/projects/" + dir + "/" + id + ".jsonl"}
}

// CodexSourceOn names Codex's session log rel (YYYY/MM/DD/rollout-*.jsonl,
// as capture checked it) under the sessions folder on the agent's host.
func CodexSourceOn(rel string) Source {
	return Source{Agent: Codex, Path: "$CODEX_HOME/sessions/" + rel}
}

// safeID says id is a session id as Claude Code writes them (a UUID): no
// path separator, dot or glob character can be in it.
func safeID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// ProjectDir is the name Claude Code gives a working directory's folder
// under ~/.claude/projects: every character but an ASCII letter or digit is
// a dash, one a UTF-16 unit as JavaScript counts them (/tmp/a.b → -tmp-a-b).
// Nothing of the name is left to reach outside that folder.
func ProjectDir(cwd string) string {
	var b strings.Builder
	for _, r := range cwd {
		switch {
		case 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9':
			b.WriteRune(r)
		case utf16.RuneLen(r) == 2:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// CodexSource finds Codex CLI's session log for a pane in dir: of the
// logs under home/sessions (home is $CODEX_HOME or ~/.codex) whose first
// line names dir, the one written last, within the window.
func CodexSource(home, dir string, now time.Time) Source {
	if home == "" || dir == "" {
		return Source{}
	}
	days, _ := filepath.Glob(filepath.Join(home, "sessions", "[0-9]*", "[0-9]*", "[0-9]*"))
	sort.Strings(days)
	if len(days) > 2 {
		days = days[len(days)-2:] // today and yesterday, by Codex's clock
	}
	var best string
	var bestAt time.Time
	for _, day := range days {
		logs, _ := filepath.Glob(filepath.Join(day, "rollout-*.jsonl"))
		for _, p := range logs {
			fi, err := os.Lstat(p)
			if err != nil || !fi.Mode().IsRegular() || now.Sub(fi.ModTime()) > Window || !fi.ModTime().After(bestAt) {
				continue
			}
			if probe.CodexLogDir(fsutil.FirstLine(p, 1<<20)) == dir {
				best, bestAt = p, fi.ModTime()
			}
		}
	}
	if best == "" {
		return Source{}
	}
	return Source{Agent: Codex, Path: best}
}
