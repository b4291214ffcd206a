package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/icmd"

	"github.com/omega-monitor/omega-monitor/internal/mirror"
	"github.com/omega-monitor/omega-monitor/internal/testfleet"
)

// mirrorPlan runs the built binary's mirror-plan over the fleet under state.
func mirrorPlan(t *testing.T, state, stdin string, args ...string) *icmd.Result {
	t.Helper()
	cmd := icmd.Command(omegaMonitor(t), append([]string{"mirror-plan"}, args...)...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "OMEGA_MONITOR_HOME=" + state}
	cmd.Stdin = strings.NewReader(stdin)
	return icmd.RunCmd(cmd)
}

func TestMirrorPlanCommand(t *testing.T) {
	t.Parallel()
	state := testfleet.Home(t)
	cold := `{"call":"TaskCreate","key":"monitor-box-api","title":"monitor-box-api [needs you] box:api","description":"stage: QUESTION · work=3 · progress=2 · nudges 0/5","state":"in_progress"}
{"call":"TaskCreate","key":"monitor-proj","title":"monitor-proj [watching] proj","description":"stage: STALLED · work=7 · progress=41 · nudges 1/5","state":"in_progress"}
`
	mirrorPlan(t, state, "", "--runner", "claude").Assert(t, icmd.Expected{Out: cold})
	if res := mirrorPlan(t, state, "", "--runner=claude"); res.Stdout() != cold || res.Stderr() != "" {
		t.Errorf("cold plan: stdout %q stderr %q", res.Stdout(), res.Stderr())
	}

	tracked := `{"key":"monitor-box-api","phase":"needs you","stage":"QUESTION · work=3 · progress=2 · nudges 0/5"}
{"key":"monitor-proj","phase":"watching","stage":"STALLED · work=7 · progress=41 · nudges 1/5"}
`
	if res := mirrorPlan(t, state, tracked, "--runner", "claude"); res.ExitCode != 0 || res.Stdout() != "" || res.Stderr() != "" {
		t.Errorf("nothing changed: exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout(), res.Stderr())
	}

	// The runner matrix: Claude Code plans (above); Codex has an empty
	// plan and one notice naming its monitor agent; a headless or bare
	// runner an empty plan, said nowhere.
	for _, c := range []struct{ runner, notice string }{
		{"codex", "omega-monitor: " + mirror.CodexNotice + "\n"},
		{"headless", ""},
		{"bare", ""},
	} {
		for _, stdin := range []string{"", tracked} {
			mirrorPlan(t, state, stdin, "--runner", c.runner).Assert(t, icmd.Expected{Err: c.notice})
			if res := mirrorPlan(t, state, stdin, "--runner", c.runner); res.Stdout() != "" || res.Stderr() != c.notice {
				t.Errorf("--runner %s: stdout %q stderr %q, want no plan and %q", c.runner, res.Stdout(), res.Stderr(), c.notice)
			}
		}
	}

	for _, c := range []struct {
		stdin string
		args  []string
		want  icmd.Expected
	}{
		{"", []string{"--runner", "gemini"}, icmd.Expected{ExitCode: 2, Err: `omega-monitor: unknown runner "gemini": the known runners are claude, codex, headless, bare` + "\n"}},
		{"", []string{"--runner", "none"}, icmd.Expected{ExitCode: 2, Err: `unknown runner "none"`}},
		{"", []string{"--runner", ""}, icmd.Expected{ExitCode: 2, Err: "omega-monitor: no runner given: the known runners are claude, codex, headless, bare\n"}},
		{"", []string{"--runner", "Claude"}, icmd.Expected{ExitCode: 2, Err: `unknown runner "Claude"`}},
		{"", nil, icmd.Expected{ExitCode: 2, Err: "omega-monitor: no runner given: the known runners are claude, codex, headless, bare\n"}},
		{"", []string{"--runner", "claude", "extra"}, icmd.Expected{ExitCode: 2, Err: `mirror-plan takes no arguments, got "extra"`}},
		{"{\"key\":\"a\"}\nnot json\n", []string{"--runner", "claude"}, icmd.Expected{ExitCode: 1, Err: "omega-monitor: tracked line 2: invalid character"}},
		{`{"key":"a"}` + "\n" + `{"key":"a"}`, []string{"--runner", "claude"}, icmd.Expected{ExitCode: 1, Err: `key "a" already on line 1`}},
	} {
		res := mirrorPlan(t, state, c.stdin, c.args...)
		res.Assert(t, c.want)
		if res.Stdout() != "" {
			t.Errorf("%v: printed a plan on a failure: %q", c.args, res.Stdout())
		}
	}
}

// TestMirrorPlanLeavesUnreadableWatchers checks that a watcher whose state
// cannot be read does not have its task closed as if it had ended, while
// the rest of the fleet is still mirrored.
func TestMirrorPlanLeavesUnreadableWatchers(t *testing.T) {
	t.Parallel()
	state := testfleet.Home(t)
	if err := os.WriteFile(filepath.Join(state, "monitor-proj", "state.json"), []byte("{torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	tracked := `{"key":"monitor-proj","phase":"watching","stage":"STALLED · work=7 · progress=41 · nudges 1/5"}`
	res := mirrorPlan(t, state, tracked, "--runner", "claude")
	res.Assert(t, icmd.Expected{Err: "omega-monitor: mirror-plan: monitor-proj could not be read; its task is left as it is\n",
		Out: `{"call":"TaskCreate","key":"monitor-box-api","title":"monitor-box-api [needs you] box:api","description":"stage: QUESTION · work=3 · progress=2 · nudges 0/5","state":"in_progress"}` + "\n"})
	if strings.Contains(res.Stdout(), "monitor-proj") {
		t.Errorf("the unreadable watcher's task was planned: %s", res.Stdout())
	}
}
