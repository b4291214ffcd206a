package main

import (
	"flag"
	"fmt"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/mirror"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

const mirrorPlanUsage = `usage: omega-monitor mirror-plan --runner claude|codex|headless|bare < tracked.jsonl

Prints the task-mirror call plan: one JSON line per task-tool call
(TaskCreate or TaskUpdate, each with key, title, description and state) that
brings the agent's task list to the watchers' state, one task per watcher.
Stdin holds the tasks the agent already tracks, one
{"key":"<watcher>","phase":"<word in the title's brackets>","stage":"<description after stage: >"}
a line; empty stdin plans cold (a task for every live watcher). Nothing
changed prints nothing. Only Claude Code has task tools: codex prints no plan
and one notice (its mirror is the monitor agent of the MCP tool
codex_monitor_agent), headless and bare no plan, silently.

flags:
`

func runMirrorPlan(e *Env, args []string) int {
	fs := flag.NewFlagSet("mirror-plan", flag.ContinueOnError)
	runner := fs.String("runner", "", "the agent that applies the plan: `claude`, codex, headless or bare (required)")
	positional, code, ok := e.parse(fs, args, mirrorPlanUsage)
	if !ok {
		return code
	}
	if len(positional) > 0 {
		return e.exitf(2, "omega-monitor: mirror-plan takes no arguments, got %q; %s", positional[0], cmdline.HelpHint("mirror-plan"))
	}
	capability, err := mirror.CapabilityOf(*runner)
	if err != nil {
		return e.fail(2, err)
	}
	if capability.Surface != mirror.NativeTask { // no task tools: no plan, and its notice if any
		if capability.Notice != "" {
			fmt.Fprintln(e.Stderr, "omega-monitor: "+capability.Notice)
		}
		return 0
	}
	tracked, err := mirror.ReadTracked(e.Stdin)
	if err != nil {
		return e.fail(1, err)
	}
	home, err := statedir.Home(e.Getenv)
	if err != nil {
		return e.fail(1, err)
	}
	// Brief: the mirror needs no history or log, and moves no cursor.
	census, err := board.Census(home, e.Now(), board.Options{Brief: true})
	if err != nil {
		return e.fail(1, err)
	}
	watchers, err := mirror.FromFleet(census)
	if err != nil {
		return e.exitf(1, "omega-monitor: mirror-plan: %s; no mirror calls this time", pkgerr.Why(err))
	}
	for _, w := range watchers {
		if w.Unreadable {
			fmt.Fprintf(e.Stderr, "omega-monitor: mirror-plan: %s could not be read; its task is left as it is\n", w.Name)
		}
	}
	if err := mirror.WritePlan(e.Stdout, mirror.Plan(tracked, watchers)); err != nil {
		return e.fail(1, err)
	}
	return 0
}
