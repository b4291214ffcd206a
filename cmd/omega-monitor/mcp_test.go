package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omega-monitor/omega-monitor/board"
)

// testWatcher is one watcher's state directory as a test writes it.
type testWatcher struct {
	name, target, state string
	work, progress      string
	used, limit         int
	// pid is the loop's pid: 0 for this test process (alive, with its real
	// start token), -1 for no loop.json, else a pid recorded with a token
	// that cannot match.
	pid     int
	history []string
	log     []string
}

// procToken returns the start token the board reads for pid.
func procToken(t testing.TB, pid int) string {
	t.Helper()
	token, err := startToken(pid)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// writeFleet writes the state directories of ws under a new home.
func writeFleet(t testing.TB, now time.Time, ws ...testWatcher) string {
	t.Helper()
	home := t.TempDir()
	for _, w := range ws {
		dir := filepath.Join(home, w.name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		st := map[string]any{"version": 1, "polls": 3, "last": w.state, "state": w.state,
			"last_poll": now.Add(-30 * time.Second).UTC().Format(time.RFC3339),
			"work":      w.work, "progress": w.progress, "transition": "✻ Baked for 3s",
			"last_explain":    "rule stalled: the prompt box is idle and work remains",
			"last_transition": map[string]any{"at": "2026-11-30T11:58:00Z", "from": "WORKING", "to": w.state, "line": "✻ Baked for 3s"},
			"budget":          map[string]any{"limit": w.limit, "used": w.used}}
		write := func(name string, v any) {
			var b []byte
			switch v := v.(type) {
			case string:
				b = []byte(v)
			default:
				b, _ = json.Marshal(v)
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		write("state.json", st)
		write("target", w.target+"\n")
		switch {
		case w.pid == 0:
			// An hour's interval: the watcher stays live however long a
			// loaded machine takes to reach the census.
			write("loop.json", map[string]any{"pid": os.Getpid(), "start_token": procToken(t, os.Getpid()),
				"interval_s": 3600, "target": w.target, "watcher": w.name})
		case w.pid > 0:
			write("loop.json", map[string]any{"pid": w.pid, "start_token": "1", "interval_s": 60,
				"target": w.target, "watcher": w.name})
		}
		if w.history != nil {
			write("history.jsonl", strings.Join(w.history, "\n")+"\n")
		}
		if w.log != nil {
			write("monitor.log", strings.Join(w.log, "\n")+"\n")
		}
	}
	return home
}

var mcpNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func historyLine(ago time.Duration, event, state string) string {
	return fmt.Sprintf(`{"ts":%q,"target":"proj","event":%q,"state":%q}`, mcpNow.Add(-ago).Format(time.RFC3339), event, state)
}

func testFleetHome(t testing.TB) string {
	return writeFleet(t, time.Now(),
		testWatcher{name: "monitor-proj", target: "proj", state: "STALLED", work: "7", progress: "41", used: 1, limit: 5,
			history: []string{
				historyLine(50*time.Hour, "state", "WORKING"),
				historyLine(3*time.Hour, "nudge", "STALLED"),
				`{"ts":"torn`,
				historyLine(time.Hour, "state", "STALLED"),
			},
			log: []string{"MONITOR · proj · WORKING · work=7", "MONITOR · proj · STALLED · work=7 · nudged (1/5)", "MONITOR · proj · STALLED · work=7 · nudged (1/5)"}},
		testWatcher{name: "monitor-box-api", target: "box:api", state: "QUESTION", work: "3", progress: "2", limit: 5},
		testWatcher{name: "monitor-old", target: "old", state: "WORKING", limit: 5, pid: -1},
	)
}

// connect starts the server over an in-memory transport and returns a
// client session to it.
func connect(t *testing.T, home string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	server := newMCPServer(home, func() time.Time { return mcpNow })
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func TestMCPToolsAreReadOnly(t *testing.T) {
	cs := connect(t, testFleetHome(t))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		a := tool.Annotations
		if a == nil || !a.ReadOnlyHint || !a.IdempotentHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("tool %s: annotations %+v, want read-only, idempotent, closed world", tool.Name, a)
		}
	}
	if diff := cmp.Diff([]string{"explain", "history", "logs", "status"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestMCPStatus(t *testing.T) {
	cs := connect(t, testFleetHome(t))
	out, isErr := callText(t, cs, "status", nil)
	if isErr {
		t.Fatalf("status failed: %s", out)
	}
	var got board.Fleet
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("status is not the board's JSON: %v\n%s", err, out)
	}
	want := []string{
		"monitor-box-api box:api live QUESTION work=3 progress=2 nudges 0/5",
		"monitor-old old gone WORKING work= progress= nudges 0/5",
		"monitor-proj proj live STALLED work=7 progress=41 nudges 1/5",
	}
	if diff := cmp.Diff(want, fleetLines(got)); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	// The torn history line is named, and the rest still shows.
	if !got.Degraded || len(got.Errors) != 1 || got.Errors[0].Watcher != "monitor-proj" {
		t.Errorf("degraded %v, errors %+v; want the torn history of monitor-proj named", got.Degraded, got.Errors)
	}
}

// fleetLines returns one line a watcher of a census: what the mirror and
// the agent read.
func fleetLines(f board.Fleet) []string {
	var out []string
	for _, w := range f.Watchers {
		out = append(out, fmt.Sprintf("%s %s %s %s work=%s progress=%s nudges %d/%d",
			w.Name, w.Target, w.Liveness, w.State, w.Work, w.Progress, w.Nudges.Used, w.Nudges.Limit))
	}
	return out
}

func TestMCPHistoryLogsExplain(t *testing.T) {
	cs := connect(t, testFleetHome(t))
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"history", map[string]any{"watcher": "monitor-proj"}, historyLine(3*time.Hour, "nudge", "STALLED") + "\n" + historyLine(time.Hour, "state", "STALLED") + "\n"},
		{"history", map[string]any{"watcher": "proj", "days": 3},
			historyLine(50*time.Hour, "state", "WORKING") + "\n" + historyLine(3*time.Hour, "nudge", "STALLED") + "\n" + historyLine(time.Hour, "state", "STALLED") + "\n"},
		{"history", map[string]any{"watcher": "box:api"}, ""},
		{"logs", map[string]any{"watcher": "monitor-proj", "lines": 2}, "MONITOR · proj · STALLED · work=7 · nudged (1/5)\nMONITOR · proj · STALLED · work=7 · nudged (1/5)\n"},
		{"logs", map[string]any{"watcher": "proj", "lines": 2000}, "MONITOR · proj · WORKING · work=7\nMONITOR · proj · STALLED · work=7 · nudged (1/5)\nMONITOR · proj · STALLED · work=7 · nudged (1/5)\n"},
		{"logs", map[string]any{"watcher": "monitor-old"}, ""},
	} {
		got, isErr := callText(t, cs, c.tool, c.args)
		if isErr {
			t.Errorf("%s %v failed: %s", c.tool, c.args, got)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s %v (-want +got):\n%s", c.tool, c.args, diff)
		}
	}
	got, isErr := callText(t, cs, "explain", map[string]any{"watcher": "proj"})
	for _, want := range []string{"watcher: monitor-proj\n", `state: "STALLED"`, `transition: "✻ Baked for 3s"`, `"used":1`,
		`last_explain: "rule stalled: the prompt box is idle and work remains"`, `last_transition: {"at":"2026-11-30T11:58:00Z","from":"WORKING","line":"✻ Baked for 3s","to":"STALLED"}`} {
		if isErr || !strings.Contains(got, want) {
			t.Errorf("explain proj = %q (error %v), want it to hold %q", got, isErr, want)
		}
	}
}

// TestMCPBadArguments checks that every bad argument gets an MCP error, a
// protocol error or a tool error, and that the server still answers after.
func TestMCPBadArguments(t *testing.T) {
	home := testFleetHome(t)
	if err := os.WriteFile(filepath.Join(filepath.Dir(home), "secret"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, home)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"history", map[string]any{}, `missing properties: ["watcher"]`},
		{"history", map[string]any{"watcher": "proj", "days": 0.5}, "days"},
		{"history", map[string]any{"watcher": "proj", "days": 31}, "days must be 1 to 30, got 31"},
		{"history", map[string]any{"watcher": "proj", "days": -1}, "days must be 1 to 30, got -1"},
		{"history", map[string]any{"watcher": "proj", "days": "two"}, "days"},
		{"history", map[string]any{"watcher": 7}, "watcher"},
		{"history", map[string]any{"watcher": "nosuch"}, `no watcher "nosuch"`},
		{"logs", map[string]any{"watcher": "../secret"}, `no watcher "../secret"`},
		{"logs", map[string]any{"watcher": ".."}, `no watcher ".."`},
		{"logs", map[string]any{"watcher": "proj", "lines": 2001}, "lines must be 1 to 2000, got 2001"},
		{"explain", map[string]any{"watcher": ""}, "watcher is required"},
		{"explain", map[string]any{"watcher": "proj", "extra": true}, "extra"},
		{"nudge", map[string]any{"watcher": "proj"}, "nudge"},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		var msg string
		switch {
		case err != nil:
			msg = err.Error()
		case res.IsError:
			msg = res.Content[0].(*mcp.TextContent).Text
		default:
			t.Errorf("%s %v succeeded: %+v", c.tool, c.args, res.Content)
			continue
		}
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s %v: error %q, want it to say %q", c.tool, c.args, msg, c.want)
		}
	}
	if _, isErr := callText(t, cs, "status", nil); isErr {
		t.Error("status failed after the bad calls")
	}
}

// TestMCPOverStdio runs the built binary as a client would: a subprocess
// spoken to on its stdin and stdout.
func TestMCPOverStdio(t *testing.T) {
	home := testFleetHome(t)
	cmd := exec.Command(omegaMonitor(t), "mcp")
	cmd.Env = append(os.Environ(), "OMEGA_MONITOR_HOME="+home)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Name; got != "omega-monitor" {
		t.Errorf("server name %q", got)
	}
	out, isErr := callText(t, cs, "status", nil)
	for _, want := range []string{`"name": "monitor-proj"`, `"state": "QUESTION"`, `"liveness": "gone"`, `"running": 2`} {
		if isErr || !strings.Contains(out, want) {
			t.Errorf("status over stdio = %s, want it to hold %s", out, want)
		}
	}
}
