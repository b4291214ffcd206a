package capture

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/probe"
)

// builtinEvents are the built-in descriptions' events logs, and
// framedOptions a remote frame's options with them.
var (
	builtinEvents = classify.EventsLogs(nil)
	framedOptions = Options{Framed: true, Events: EventsSources(func(string) string { return "" }, builtinEvents)}
)

// eventsOf is what the capture c holds of the events logs of the agent
// whose key is key.
func eventsOf(c Capture, key string) EventsFound {
	for _, e := range c.Events {
		if e.Log.Key == key {
			return e
		}
	}
	for _, l := range builtinEvents {
		if l.Key == key {
			return EventsFound{Log: l}
		}
	}
	return EventsFound{}
}

// ternRules describes an agent the project does not ship, Tern, whose
// events log is its own format: a "kind" field, epoch-free times under
// "at", and its directory under "session.dir", the logs two folders deep
// in $TERN_HOME (default ~/.tern).
const ternRules = `{"agents": [{"name": "Tern", "box": {"prompt": "^tern> (.*)$"}, "witness": "events",
  "events": {"home": "TERN_HOME", "default": ".tern", "path": "logs/*/*.events",
    "type": "kind", "time": "at", "dir": "session.dir",
    "busy": ["ask"], "waiting": ["confirm"], "idle": ["done"], "quiet": ["hello"]}}],
  "rules": [{"agent": "Tern", "name": "Tern thinks", "region": "above", "pattern": "^thinking…$", "verdict": "working"}]}`

// TestEventsLogOfADescription: an events log an operator's description
// gives, in a format the project never saw, is found on this machine and by
// the host's script as Copilot CLI's is, read as its description says, and
// speaks only for its agent; a planted log outside the path, a link, an
// old one and another directory's are not read.
func TestEventsLogOfADescription(t *testing.T) {
	local, err := classify.ParseLocal([]byte(ternRules), "tern.json")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	tern := filepath.Join(home, "tern-home")
	now := time.Now()
	stamp := func(ago time.Duration) string { return now.Add(-ago).UTC().Format(time.RFC3339Nano) }
	mine := `{"kind":"hello","at":"` + stamp(time.Minute) + `","session":{"dir":"/w d"}}` + "\n" +
		`{"kind":"ask","at":"` + stamp(30*time.Second) + `"}` + "\n" + `{"kind":"confirm","at":"` + stamp(time.Second) + `"}` + "\n"
	write := func(rel, text string, mod time.Time) string { return writeAt(t, filepath.Join(tern, rel), text, mod) }
	write("logs/a/one.events", mine, now)
	write("logs/b/other.events", strings.Replace(mine, "/w d", "/elsewhere", 1), now)
	write("logs/c/old.events", mine, now.Add(-10*time.Minute))
	write("logs/d/deeper/too.events", mine, now)
	write("logs/e/not.jsonl", mine, now)
	outside := write("../outside.events", mine, now)
	if err := os.Symlink(outside, filepath.Join(tern, "logs", "a", "link.events")); err != nil {
		t.Fatal(err)
	}
	for where, c := range bothWays(t, map[string]string{"HOME": home, "TERN_HOME": tern}, local) {
		e := eventsOf(c, "tern")
		if diff := cmp.Diff([]string{mine}, texts(e.Tails)); diff != "" || e.Err != nil {
			t.Errorf("%s: events logs (-want +got):\n%s%v", where, diff, e.Err)
		}
		w, said := c.WitnessOfKind(now, probe.EventsKind("tern"))
		if w == nil || w.Status != "waiting" || w.WaitingFor != "confirm" {
			t.Errorf("%s: witness %+v (%s), want Tern's, waiting (confirm)", where, w, said)
		}
		if w, said := c.WitnessOfKind(now, probe.EventsKind("copilot-cli")); w != nil {
			t.Errorf("%s: Tern's log speaks for Copilot CLI: %+v (%s)", where, w, said)
		}
	}
}

// TestReadEventsOfNoDescription: a host's block of an agent's events that
// no description read here gives (the rules changed since the watcher
// started) is read past, whole: none of its lines is taken for a status
// file, and a block without its end fails the frame as any log's does.
func TestReadEventsOfNoDescription(t *testing.T) {
	const head, tail = "agent:@1.%2\t/w\n", PaneMark + "\nthe pane\n"
	status := `{"tmux":"agent:@1.%2","status":"busy","updatedAt":1}`
	block := "[omega-monitor:events gone]\n" + base64Lines(status) + "\n[omega-monitor:events-end gone]\n"
	c, err := Read(strings.NewReader(head+block+status+"\n"+StatusEnd+"\n"+tail), framedOptions)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{status + "\n"}, texts(c.Statuses)); diff != "" {
		t.Errorf("status files (-want +got):\n%s", diff)
	}
	if _, err := Read(strings.NewReader(head+"[omega-monitor:events gone]\n"+tail), framedOptions); err == nil || !strings.Contains(err.Error(), "without its end") {
		t.Errorf("a block without its end: %v, want the frame refused", err)
	}
}

// texts are files' contents, as text.
func texts(files [][]byte) []string {
	var out []string
	for _, f := range files {
		out = append(out, string(f))
	}
	return out
}

// bothWays captures the pane agent:@1.%2, in the directory "/w d", as a
// host's script sends it and as a call on this machine reads it, in the
// environment env (HOME among it), with the agents local describes: the
// two captures, by where they were made.
func bothWays(t *testing.T, env map[string]string, local *classify.Local) map[string]Capture {
	t.Helper()
	sh := testenv.Need(t, "sh", "find", "tail", "base64")[0]
	mux := filepath.Join(t.TempDir(), "mux")
	script := "#!/bin/sh\ncase $1 in\ndisplay-message) printf 'agent:@1.%%2\\t/w d\\n' ;;\ncapture-pane) printf 'the pane\\n' ;;\nesac\n"
	if err := os.WriteFile(mux, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sh, "-c", Remote(10, coord.Exact("agent"), classify.EventsLogs(local)))
	cmd.Env = []string{"OMEGA_MONITOR_MUX=" + mux, "PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("remote capture: %v", err)
	}
	getenv := func(k string) string { return env[k] }
	remote, err := Read(strings.NewReader(string(out)), Options{Framed: true, Events: EventsSources(getenv, classify.EventsLogs(local))})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	here, err := Read(strings.NewReader("agent:@1.%2\t/w d\n"+PaneMark+"\nthe pane\n"), LocalOptions(getenv, true, t.TempDir(), time.Now(), local))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Capture{"remote": remote, "local": here}
}

// writeAt writes text to path, its folders made, and dates it mod; it
// returns path.
func writeAt(t *testing.T, path, text string, mod time.Time) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
	return path
}
