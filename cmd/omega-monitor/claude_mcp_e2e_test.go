package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/mirror"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/internal/testfleet"
)

// End-to-end tests of /monitor and the MCP server with the real Claude Code
// as the client: `omega-monitor install --claude` prepares Claude Code's
// HOME before it starts, and a scripted fake Messages API plays the model.

// startClaudeInstalled starts the pinned Claude Code, bypassing permission
// prompts, with omega-monitor installed into its HOME for the fleet under
// state.
func startClaudeInstalled(t *testing.T, api *fakeapi.Scripted, state string) *claudecode.Session {
	t.Helper()
	omegaMonitor(t)
	bin := claudecode.Binary(t)
	t.Parallel()
	realProgram(t)
	s := claudecode.Start(t, testenv.Tmux(t), claudecode.Config{
		Binary: bin, API: api.URL, Mode: claudecode.Bypass,
		Env: []string{"OMEGA_MONITOR_HOME=" + state, "CLAUDE_CODE_ENABLE_TODO_TOOLS=1"},
		Prepare: func(home string) error {
			res := installIn(t, home, state, "--claude")
			if res.ExitCode != 0 {
				return fmt.Errorf("install --claude: %s%s", res.Stdout(), res.Stderr())
			}
			return nil
		},
	})
	// Claude Code writes to its HOME until it exits: end it, and wait for
	// that, before the test's directories go.
	pid := s.Status(t).PID
	t.Cleanup(func() {
		s.Tmux.Cmd("kill-session", "-t", "="+s.Name).Run()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if syscall.Kill(pid, 0) != nil {
				return
			}
		}
		t.Logf("Claude Code (pid %d) still runs 30s after its session ended", pid)
	})
	return s
}

const mcpStatusTool = "mcp__omega-monitor__status"

// TestClaudeCallsTheMCPStatus has the fake model call the omega MCP
// server's status tool; what Claude Code sends back must hold every
// watcher's name and state. Then /monitor with a target must reach the
// model as the watch form, target and flags in place.
func TestClaudeCallsTheMCPStatus(t *testing.T) {
	state := testfleet.Home(t)
	api := fakeapi.NewScripted(t, func(turn fakeapi.Turn) (fakeapi.Reply, bool) {
		last := ""
		if len(turn.Calls) > 0 {
			last = turn.Calls[len(turn.Calls)-1]
		}
		switch {
		case len(turn.Results) > 0 && last == "ToolSearch":
			return fakeapi.Call(mcpStatusTool, map[string]any{}), true
		case len(turn.Results) > 0:
			return fakeapi.Text("The fleet is read."), true
		case strings.Contains(turn.Text, "/monitor was invoked with the arguments: `proj --nudge-budget 3`"):
			return fakeapi.Text("The watch form arrived."), true
		case strings.Contains(turn.Text, "check the fleet") && turn.Offers(mcpStatusTool):
			return fakeapi.Call(mcpStatusTool, map[string]any{}), true
		case strings.Contains(turn.Text, "check the fleet") && turn.Offers("ToolSearch"):
			return fakeapi.Call("ToolSearch", map[string]any{"query": "select:" + mcpStatusTool, "max_results": 1}), true
		}
		return fakeapi.Reply{}, false
	})
	s := startClaudeInstalled(t, api, state)
	since := time.Now()
	s.Type(t, "please check the fleet")
	s.Stable(t, realTimeout, "idle", since, func(screen string) bool { return strings.Contains(screen, "The fleet is read.") })
	var result *fakeapi.ToolResult
	for _, turn := range api.Turns() {
		if n := len(turn.Calls); n > 0 && turn.Calls[n-1] == mcpStatusTool && len(turn.Results) == 1 {
			result = &turn.Results[0]
		}
	}
	if result == nil || result.IsError {
		t.Fatalf("no tool_result of %s reached the API: %+v", mcpStatusTool, result)
	}
	var got board.Fleet
	if err := json.Unmarshal([]byte(result.Content), &got); err != nil {
		t.Fatalf("the tool_result is not the board's census: %v\n%s", err, result.Content)
	}
	if diff := cmp.Diff(testfleet.HomeLines, testfleet.Lines(got)); diff != "" {
		t.Errorf("watchers in the tool_result (-want +got):\n%s", diff)
	}
	// What a watcher quotes of its pane reaches the model apart from the
	// watcher's own fields, as text in an object named for what it is: not
	// the answer again as a JSON string inside the JSON.
	var quoted struct {
		Watchers []struct {
			Name          string `json:"name"`
			UntrustedText struct {
				LastTransition string `json:"last_transition"`
				Explain        string `json:"explain"`
			} `json:"untrusted_text"`
		} `json:"watchers"`
	}
	if err := json.Unmarshal([]byte(result.Content), &quoted); err != nil || len(quoted.Watchers) != len(testfleet.HomeLines) {
		t.Fatalf("the tool_result's watchers: %v\n%s", err, result.Content)
	}
	for _, w := range quoted.Watchers {
		if w.UntrustedText.LastTransition != "✻ Baked for 3s" || !strings.HasPrefix(w.UntrustedText.Explain, "rule stalled") {
			t.Errorf("%s: untrusted_text %+v, want the transition and the explanation\n%s", w.Name, w.UntrustedText, result.Content)
		}
	}
	t.Logf("what Claude Code sent the model: %s", result.Content)

	// The watch form: the target and flags reach the model inside the
	// command that starts the watcher, with the agent's side of the
	// contract.
	since = time.Now()
	s.Type(t, "/monitor proj --nudge-budget 3")
	s.Stable(t, realTimeout, "idle", since, func(screen string) bool { return strings.Contains(screen, "The watch form arrived.") })
	turns := api.Turns()
	text := turns[len(turns)-1].Text
	bin, _ := filepath.EvalSymlinks(omegaMonitor(t))
	for _, want := range []string{
		"Run `" + bin + " watch proj --nudge-budget 3`",
		"QUESTION goes to a human, verbatim",
		"never answer it on the operator's behalf",
		"BLOCKED goes to a human too, with the work figure and the last transition line",
		"WORKING needs nothing from you, ever",
		"A watcher's line is an input, never the verdict",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the watch form's text lacks %q:\n%s", want, text)
		}
	}
}

// commandBin is where the expanded /monitor command says the binary is.
var commandBin = regexp.MustCompile("omega-monitor is at `([^`]+)`")

// taskAgent plays a model that follows the /monitor command's status form
// by the letter, through Claude Code's own task tools: TaskList, TaskGet of
// each task the mirror owns for its stage, the tracked lines piped into the
// mirror-plan command the expanded text names, then each call of the plan.
// Each round's plan is kept for the test.
type taskAgent struct {
	mu     sync.Mutex // the server's goroutines call reply, the test reads
	bin    string
	ids    map[string]string // key → task id
	owned  []string          // task ids whose tracked line is still to read
	lines  []string          // tracked lines of this round
	todo   []mirror.Call     // calls of the plan still to apply
	plans  [][]mirror.Call   // every round's plan
	failed string
}

var (
	taskLine    = regexp.MustCompile(`(?m)^#(\d+) \[[a-z_]+\] (.+)$`)
	taskCreated = regexp.MustCompile(`Task #(\d+) created`)
)

func (a *taskAgent) fail(format string, args ...any) (fakeapi.Reply, bool) {
	a.failed = fmt.Sprintf(format, args...)
	return fakeapi.Text("Something went wrong."), true
}

func (a *taskAgent) reply(turn fakeapi.Turn) (fakeapi.Reply, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	last := ""
	if n := len(turn.Calls); n > 0 {
		last = turn.Calls[n-1]
	}
	if m := commandBin.FindStringSubmatch(turn.Text); m != nil && len(turn.Results) == 0 {
		a.bin, a.lines, a.owned = m[1], nil, nil
		if !turn.Offers("TaskList") {
			return fakeapi.Call("ToolSearch", map[string]any{"query": "select:TaskCreate,TaskUpdate,TaskList,TaskGet", "max_results": 4}), true
		}
		return fakeapi.Call("TaskList", map[string]any{}), true
	}
	if len(turn.Results) != 1 {
		return fakeapi.Reply{}, false
	}
	result := turn.Results[0]
	if result.IsError {
		return a.fail("%s failed: %s", last, result.Content)
	}
	switch last {
	case "ToolSearch":
		return fakeapi.Call("TaskList", map[string]any{}), true
	case "TaskList":
		for _, m := range taskLine.FindAllStringSubmatch(result.Content, -1) {
			if key, _, ok := mirror.ParseTitle(m[2]); ok {
				a.ids[key] = m[1]
				a.owned = append(a.owned, m[1])
			}
		}
		return a.next()
	case "TaskGet":
		tracked, err := trackedFromTask(result.Content)
		if err != nil {
			return a.fail("%v", err)
		}
		a.lines = append(a.lines, tracked)
		return a.next()
	case "Bash":
		var plan []mirror.Call
		for _, line := range strings.Split(result.Content, "\n") {
			var c mirror.Call
			if json.Unmarshal([]byte(line), &c) == nil && c.Call != "" {
				plan = append(plan, c)
			}
		}
		a.plans = append(a.plans, plan)
		a.todo = plan
		return a.apply()
	case "TaskCreate":
		m := taskCreated.FindStringSubmatch(result.Content)
		if m == nil {
			return a.fail("TaskCreate answered %q", result.Content)
		}
		a.ids[a.todo[0].Key] = m[1]
		a.todo = a.todo[1:]
		return a.apply()
	case "TaskUpdate":
		a.todo = a.todo[1:]
		return a.apply()
	}
	return fakeapi.Reply{}, false
}

// state returns every round's plan so far, and what failed.
func (a *taskAgent) state() ([][]mirror.Call, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.plans), a.failed
}

// next reads the next owned task, or runs the plan once all are read.
func (a *taskAgent) next() (fakeapi.Reply, bool) {
	if len(a.owned) > 0 {
		id := a.owned[0]
		a.owned = a.owned[1:]
		return fakeapi.Call("TaskGet", map[string]any{"taskId": id}), true
	}
	input := ""
	if len(a.lines) > 0 {
		input = " <<'EOF'\n" + strings.Join(a.lines, "\n") + "\nEOF"
	} else {
		input = " < /dev/null"
	}
	return fakeapi.Call("Bash", map[string]any{"command": a.bin + " mirror-plan --runner claude" + input, "description": "Plan the task mirror"}), true
}

// apply makes the call of the plan's next line, as step d says.
func (a *taskAgent) apply() (fakeapi.Reply, bool) {
	if len(a.todo) == 0 {
		return fakeapi.Text(fmt.Sprintf("Mirrored: %d calls.", len(a.plans[len(a.plans)-1]))), true
	}
	c := a.todo[0]
	if c.Call == mirror.TaskCreate {
		return fakeapi.Call("TaskCreate", map[string]any{"subject": c.Title, "description": c.Description}), true
	}
	in := map[string]any{"taskId": a.ids[c.Key], "status": "in_progress"}
	if c.State != mirror.InProgress {
		in["status"] = "completed"
	}
	if c.Title != "" {
		in["subject"] = c.Title
	}
	if c.Description != "" {
		in["description"] = c.Description
	}
	return fakeapi.Call("TaskUpdate", in), true
}

// trackedFromTask builds the tracked line of one task from what TaskGet
// answers: the key and phase from its subject, the stage from its
// description.
func trackedFromTask(got string) (string, error) {
	var subject, stage string
	for _, line := range strings.Split(got, "\n") {
		if s, ok := strings.CutPrefix(line, "Task #"); ok {
			if _, rest, ok := strings.Cut(s, ": "); ok {
				subject = rest
			}
		}
		if s, ok := strings.CutPrefix(line, "Description: stage: "); ok {
			stage = s
		}
	}
	key, phase, ok := mirror.ParseTitle(subject)
	if !ok {
		return "", fmt.Errorf("TaskGet answered %q: no mirror title", got)
	}
	b, err := json.Marshal(mirror.Tracked{Key: key, Phase: phase, Stage: stage})
	return string(b), err
}

// TestClaudeMonitorCommandMirrorsTheFleet types /monitor status into a real
// session three times. The fake model follows the expanded command through
// Claude Code's own task tools (taskAgent). The first run creates one task
// per live watcher with the plan's titles; the second, nothing changed,
// makes no call; the third, after one watcher died and another moved on,
// updates both.
func TestClaudeMonitorCommandMirrorsTheFleet(t *testing.T) {
	state := testfleet.Home(t)
	agent := &taskAgent{ids: map[string]string{}}
	api := fakeapi.NewScripted(t, agent.reply)
	s := startClaudeInstalled(t, api, state)
	run := func(round int) {
		t.Helper()
		since := time.Now()
		s.Type(t, "/monitor status")
		s.Stable(t, realTimeout, "idle", since, func(screen string) bool {
			plans, failed := agent.state()
			return len(plans) == round && strings.Contains(screen, "Mirrored: ") || failed != ""
		})
		if _, failed := agent.state(); failed != "" {
			t.Fatalf("round %d: %s", round, failed)
		}
	}

	run(1)
	turns := api.Turns()
	installed, err := os.ReadFile(filepath.Join(s.Home, ".claude", "commands", "monitor.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(strings.TrimPrefix(string(installed), "---\n"), "---\n")
	want := strings.TrimSpace(strings.ReplaceAll(body, "$ARGUMENTS", "status"))
	if got := strings.TrimSpace(turns[0].Text); got != want {
		t.Errorf("the first turn's text is not the installed command expanded:\n%s", cmp.Diff(want, got))
	}
	created := map[string]string{}
	for _, turn := range turns {
		if n := len(turn.Calls); n > 0 && turn.Calls[n-1] == "TaskCreate" {
			m := taskCreated.FindStringSubmatch(turn.Results[0].Content)
			created[m[1]] = turn.Results[0].Content
		}
	}
	wantCreated := map[string]string{
		"1": "Task #1 created successfully: monitor-box-api [needs you] box:api",
		"2": "Task #2 created successfully: monitor-proj [watching] proj",
	}
	if diff := cmp.Diff(wantCreated, created); diff != "" {
		t.Errorf("Claude Code's answers to TaskCreate (-want +got):\n%s", diff)
	}

	run(2)
	if plans, _ := agent.state(); len(plans[1]) != 0 {
		t.Errorf("nothing changed, yet the second plan is %v", plans[1])
	}

	// monitor-proj's loop dies; monitor-box-api's question was answered.
	writeLoop := filepath.Join(state, "monitor-proj", "loop.json")
	if err := os.WriteFile(writeLoop, []byte(`{"pid":2147483000,"start_token":"1","interval_s":60}`), 0o600); err != nil {
		t.Fatal(err)
	}
	st := filepath.Join(state, "monitor-box-api", "state.json")
	b, _ := os.ReadFile(st)
	if err := os.WriteFile(st, []byte(strings.ReplaceAll(string(b), "QUESTION", "WORKING")), 0o600); err != nil {
		t.Fatal(err)
	}
	run(3)
	wantPlan := []mirror.Call{
		{Call: "TaskUpdate", Key: "monitor-box-api", Title: "monitor-box-api [watching] box:api",
			Description: "stage: WORKING · work=3 · progress=2 · nudges 0/5", State: "in_progress"},
		{Call: "TaskUpdate", Key: "monitor-proj", Title: "monitor-proj [blocked] proj",
			Description: "stage: ended: the watcher died", State: "failed"},
	}
	plans, _ := agent.state()
	if diff := cmp.Diff(wantPlan, plans[2]); diff != "" {
		t.Errorf("the third plan (-want +got):\n%s", diff)
	}
}

// TestClaudeMonitorCancelsItsLoop types /monitor into a real session that
// holds two recurring jobs, one of them running /monitor, over a fleet with
// no live watcher. The fake model follows the command: status --once exits
// 3, so it deletes the /monitor job, and only that one, through Claude
// Code's own cron tools, and says so in one line.
func TestClaudeMonitorCancelsItsLoop(t *testing.T) {
	state := testfleet.Write(t, time.Now(), testfleet.Watcher{Name: "monitor-old", Target: "old", State: "WORKING", Limit: 5, PID: -1})
	var mu sync.Mutex
	var statusResult, lastList string
	jobLine := regexp.MustCompile(`(?m)^(\S+)\b.*/monitor\b`)
	api := fakeapi.NewScripted(t, func(turn fakeapi.Turn) (fakeapi.Reply, bool) {
		mu.Lock()
		defer mu.Unlock()
		last := ""
		if n := len(turn.Calls); n > 0 {
			last = turn.Calls[n-1]
		}
		var result fakeapi.ToolResult
		if len(turn.Results) == 1 {
			result = turn.Results[0]
		}
		if len(turn.Results) == 0 {
			switch {
			case turn.Text == "schedule two jobs":
				return fakeapi.Call("ToolSearch", map[string]any{"query": "select:CronCreate,CronList,CronDelete", "max_results": 3}), true
			case commandBin.MatchString(turn.Text):
				bin := commandBin.FindStringSubmatch(turn.Text)[1]
				return fakeapi.Call("Bash", map[string]any{"command": bin + " status --once", "description": "Show the fleet"}), true
			case turn.Text == "list the jobs":
				return fakeapi.Call("CronList", map[string]any{}), true
			}
			return fakeapi.Reply{}, false
		}
		switch last {
		case "ToolSearch":
			return fakeapi.Call("CronCreate", map[string]any{"cron": "*/5 * * * *", "prompt": "/monitor", "recurring": true}), true
		case "CronCreate":
			if strings.Count(strings.Join(turn.Calls, " "), "CronCreate") == 1 {
				return fakeapi.Call("CronCreate", map[string]any{"cron": "0 9 * * *", "prompt": "/standup", "recurring": true}), true
			}
			return fakeapi.Text("Two jobs scheduled."), true
		case "Bash":
			statusResult = result.Content
			if !strings.HasPrefix(result.Content, "Exit code 3") {
				return fakeapi.Text("Watchers are live."), true
			}
			return fakeapi.Call("CronList", map[string]any{}), true
		case "CronList":
			lastList = result.Content
			if turn.Calls[len(turn.Calls)-2] != "Bash" {
				return fakeapi.Text("Listed."), true
			}
			if m := jobLine.FindStringSubmatch(result.Content); m != nil {
				return fakeapi.Call("CronDelete", map[string]any{"id": m[1]}), true
			}
			return fakeapi.Text("No monitor loop to cancel."), true
		case "CronDelete":
			m := jobLine.FindStringSubmatch(lastList)
			return fakeapi.Text("🛑 no live watchers — cancelled monitor loop (cron " + m[1] + ")."), true
		}
		return fakeapi.Reply{}, false
	})
	s := startClaudeInstalled(t, api, state)
	step := func(text, want string) {
		t.Helper()
		since := time.Now()
		s.Type(t, text)
		s.Stable(t, realTimeout, "idle", since, func(screen string) bool { return strings.Contains(screen, want) })
	}
	step("schedule two jobs", "Two jobs scheduled.")
	step("/monitor", "cancelled monitor loop (cron ")

	mu.Lock()
	if !strings.Contains(statusResult, "no live watchers") {
		t.Errorf("status --once said %q, want exit 3 and no live watchers", statusResult)
	}
	mu.Unlock()
	step("list the jobs", "Listed.")
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(lastList, "/monitor") || !strings.Contains(lastList, "/standup") {
		t.Errorf("after /monitor the jobs are %q, want /standup alone", lastList)
	}
}
