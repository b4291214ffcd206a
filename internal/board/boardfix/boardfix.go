// Package boardfix is the board's test fixtures: watchers' state
// directories as the census reads them, and the fleet of the golden files,
// for the census's tests and the renderers' alike. It imports neither, so
// that both may import it. Test code only.
package boardfix

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Now is the census clock of the fixtures: 14:20 UTC, so the current hour
// holds twenty minutes.
var Now = time.Date(2026, 3, 10, 14, 20, 0, 0, time.UTC)

// Procs is a fixed process table: pid -> start token (a board.Procs).
type Procs map[int]string

func (p Procs) StartToken(pid int) (string, bool) {
	t, ok := p[pid]
	return t, ok
}

// WriteDir writes a watcher's files, 0600 in a 0700 directory.
func WriteDir(t testing.TB, root, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for f, content := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// LoopJSON is a loop.json.
func LoopJSON(pid int, token string, started time.Time, interval int, target string) string {
	return fmt.Sprintf(`{"pid":%d,"start_token":%q,"started_at":%q,"interval_s":%d,"target":%q,"watcher":"w","version":"test","settings":{}}`,
		pid, token, started.Format(time.RFC3339), interval, target)
}

// StateJSON is a state.json in state since since, polled last at lastPoll,
// with extra fields (",\"name\":value...").
func StateJSON(state string, since, lastPoll time.Time, extra string) string {
	return fmt.Sprintf(`{"version":1,"polls":9,"last":%q,"budget":{"limit":5,"used":2},"state":%q,"state_since":%q,"last_poll":%q%s}`,
		state, state, since.Format(time.RFC3339), lastPoll.Format(time.RFC3339), extra)
}

// HistoryLine is one line of history.jsonl.
func HistoryLine(at time.Time, name string) string {
	return fmt.Sprintf(`{"event":%q,"state":"WORKING","target":"t","ts":%q}`+"\n", name, at.UTC().Format(time.RFC3339))
}

// VitalsJSON is a vitals.json read at at, with the minutes given.
func VitalsJSON(at time.Time, agent, source, minutes string) string {
	return fmt.Sprintf(`{"agent":%q,"source":%q,"at":%q,"minutes":[%s],"cursor":{"offset":100}}`, agent, source, at.Format(time.RFC3339), minutes)
}

// Root is the state home the golden files name.
const Root = "/home/op/.omega/monitor"

// Golden writes the fleet of the golden files (every liveness, every need,
// a diff that is known, one that is not, a degraded directory) into a
// fresh directory, has census read it with the process table it needs, and
// stores what census returned in out as if it had been read under Root.
func Golden(t testing.TB, census func(dir string, p Procs) (any, error), out any) {
	t.Helper()
	dir := t.TempDir()
	p := Procs{101: "11", 102: "12", 103: "13", 104: "14", 105: "15"}
	at := func(m int) time.Time { return Now.Add(time.Duration(m) * time.Minute) }
	alertJSON := fmt.Sprintf(`,"agent":"claude","work":"7","progress":"41","last_alert":{"at":%q,"kind":"question","text":"Do you want to proceed?"},"last_transition":{"at":%q,"from":"WORKING","to":"QUESTION","line":"MONITOR · api · QUESTION · escalated to the operator, NOT answered"},"last_explain":"QUESTION: a live dialog\n  agent:    claude"`, at(-3).Format(time.RFC3339), at(-3).Format(time.RFC3339))
	WriteDir(t, dir, "monitor-api", map[string]string{
		"loop.json":   LoopJSON(101, "11", at(-300), 60, "api"),
		"state.json":  StateJSON("QUESTION", at(-3), at(-1), alertJSON),
		"diff.json":   fmt.Sprintf(`{"added":382,"removed":45,"at":%q,"dir":"/src/api","base":"origin/main"}`, at(-4).Format(time.RFC3339)),
		"monitor.log": strings.Repeat("MONITOR · api · WORKING\n", 540),
		// Seed 004's line: an hour ago and before is not counted.
		"vitals.json": VitalsJSON(at(0), "claude", "/home/op/.claude/projects/-src-api/s.jsonl",
			fmt.Sprintf(`{"minute":%d,"tools":5},{"minute":%d,"tools":30,"reason":4,"text":100,"wait":1},{"minute":%d,"tools":9,"text":12,"wait":1}`,
				at(-60).Unix()/60, at(-30).Unix()/60, at(-2).Unix()/60)),
		"history.jsonl": HistoryLine(at(-200), "budget_reset") + HistoryLine(at(-62), "budget_reset") + HistoryLine(at(-30), "nudge") +
			HistoryLine(at(-20), "budget_reset") + HistoryLine(at(-3), "escalate"),
	})
	WriteDir(t, dir, "monitor-build-box-web", map[string]string{
		"loop.json":  LoopJSON(102, "12", at(-200), 30, "build-box:web"),
		"state.json": StateJSON("WORKING", at(-23), at(0), `,"agent":"codex","work":"3","recent_polls":[{"m":`+fmt.Sprint(at(-2).Unix()/60)+`,"c":{"WORKING":2}},{"m":`+fmt.Sprint(at(-1).Unix()/60)+`,"c":{"WORKING":1,"STALLED":1}}]`),
		"diff.json":  fmt.Sprintf(`{"added":0,"removed":0,"at":%q,"dir":"/srv/web","base":"origin/master"}`, at(-1).Format(time.RFC3339)),
		"vitals.json": VitalsJSON(at(-1), "codex", "/home/op/.codex/sessions/2026/01/02/rollout-x.jsonl",
			fmt.Sprintf(`{"minute":%d,"tools":3,"reason":2,"text":1}`, at(-5).Unix()/60)),
	})
	WriteDir(t, dir, "monitor-docs", map[string]string{
		"loop.json":  LoopJSON(103, "13", at(-100), 60, "docs"),
		"state.json": fmt.Sprintf(`{"version":1,"budget":{"limit":3,"used":3},"budget_latch":true,"state":"STALLED","state_since":%q,"last_poll":%q,"work":"?"}`, at(-40).Format(time.RFC3339), at(0).Format(time.RFC3339)),
		"diff.json":  fmt.Sprintf(`{"added":0,"removed":0,"at":%q,"dir":"/tmp","error":"not a git worktree"}`, at(-1).Format(time.RFC3339)),
		// No record readable: "-", never 0.
		"vitals.json": fmt.Sprintf(`{"error":"vitals: no record of the agent found","at":%q,"minutes":null,"cursor":{"offset":0}}`, at(0).Format(time.RFC3339)),
	})
	WriteDir(t, dir, "monitor-frozen", map[string]string{
		"loop.json":  LoopJSON(104, "14", at(-90), 60, "frozen"),
		"state.json": StateJSON("BLOCKED", at(-30), at(-10), ""),
	})
	WriteDir(t, dir, "monitor-crashed", map[string]string{
		"loop.json":  LoopJSON(999, "99", at(-80), 60, "crashed"),
		"state.json": StateJSON("STALLED", at(-30), at(-25), ""),
	})
	WriteDir(t, dir, "monitor-old", map[string]string{
		"loop.json":  LoopJSON(105, "not-15", at(-3000), 60, "old"),
		"ended.json": fmt.Sprintf(`{"at":%q,"by":"stop"}`, at(-2000).Format(time.RFC3339)),
		"state.json": `{"broken`,
	})
	f, err := census(dir, p)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.ReplaceAll(string(data), dir, Root))
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatal(err)
	}
}
