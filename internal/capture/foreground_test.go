package capture

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/probe"
)

// TestForegroundBothWays: the pane's foreground process group, read from
// /proc for a local frame and sent by the host's shell for a remote one,
// is the same: the pane's shell and the program it runs, named as the
// kernel names them, with their command lines; a program whose name holds
// the frame's separators (a parenthesis, a space, a unit separator, a line
// break) cannot forge a second process or end the block.
func TestForegroundBothWays(t *testing.T) {
	sh := testenv.Need(t, "sh", "tr")[0]
	s := testenv.Tmux(t)
	dir := t.TempDir()
	// A script whose name holds every separator the frame uses: the
	// kernel names the process after it, and the frame calls it "?".
	evil := filepath.Join(dir, "a) 1 2\x1fb")
	// It sets the pane's title, as Gemini CLI does while it waits.
	if err := os.WriteFile(evil, []byte("#!/bin/sh\nprintf '\\033]2;✋  Action Required (work)\\033\\\\'\nsleep 300\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	// sh -c runs it as a child in its own foreground group (no job
	// control), as a pane running "cmd; sleep" does.
	s.NewSession(t, "agent", "sh -c "+coord.ShellQuote(coord.ShellQuote(evil)+" 'x\ny'; :"))
	const wantTitle = "✋  Action Required (work)"
	var local Capture
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		out, err := exec.Command(s.Mux, Args(coord.Exact("agent"))...).Output()
		if err != nil {
			return poll.Error(err)
		}
		local, err = Read(strings.NewReader(string(out)), Options{Framed: true, StatusDir: dir, Now: time.Now()})
		if err != nil {
			return poll.Error(err)
		}
		if len(local.Foreground.Procs) < 3 {
			return poll.Continue("foreground %+v", local.Foreground)
		}
		// The script has printed its title once it sleeps, but tmux
		// may not have read it from the terminal yet.
		if local.Title != wantTitle {
			return poll.Continue("title %q", local.Title)
		}
		return poll.Success()
	}, poll.WithTimeout(10*time.Second))
	if local.PaneState.PID != local.Foreground.Procs[0].PID || local.Foreground.Procs[0].Comm != "sh" {
		t.Errorf("the pane's own process first: state %+v, foreground %+v", local.PaneState, local.Foreground)
	}
	script := local.Foreground.Procs[1]
	if script.Comm != "?" {
		t.Errorf("the script's process is named %q, want its file's name", script.Comm)
	}
	cmd := exec.Command(sh, "-c", Remote(5, coord.Exact("agent"), builtinEvents))
	cmd.Env = []string{"HOME=" + dir, "OMEGA_MONITOR_MUX=" + s.Mux, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("remote capture: %v", err)
	}
	remote, err := Read(strings.NewReader(string(out)), Options{Framed: true})
	if err != nil {
		t.Fatal(err)
	}
	if remote.Title != local.Title {
		t.Errorf("the title: local %q, remote %q", local.Title, remote.Title)
	}
	if diff := cmp.Diff(local.Foreground, remote.Foreground); diff != "" {
		t.Errorf("the remote frame's foreground (-local +remote):\n%s\nframe:\n%s", diff, out)
	}
	if p, ok := remote.Foreground.Agent(classify.Programs(nil, "")); ok {
		t.Errorf("no agent runs, yet %+v reads as one", p)
	}
}

// TestForegroundBlockRefused: a host's block that does not read as the
// script writes it (a line too many, a line of another shape, no end) is
// believed on none of it.
func TestForegroundBlockRefused(t *testing.T) {
	proc := ProcMark + " 12 345 12\x1fclaude\x1fclaude"
	for _, c := range []struct {
		name, block string
		want        probe.Foreground
		err         bool
	}{
		{"one process", proc + "\n", probe.Foreground{Known: true, Procs: []probe.Process{{PID: 12, Start: "345", Comm: "claude", Args: []string{"claude"}}}}, false},
		{"none (no /proc)", "", probe.Foreground{Unknown: "the host did not say the pane's processes (no /proc there?)"}, false},
		{"another shape", proc + "\n" + ProcMark + " x 1 1\x1fa\n", probe.Foreground{Unknown: "the host's line on a process of the pane does not read"}, false},
		{"a status line in it", proc + "\n" + `{"tmux":"a:@1.%2","status":"waiting"}` + "\n", probe.Foreground{Unknown: "the host's line on a process of the pane does not read"}, false},
		{"too many", strings.Repeat(proc+"\n", maxProcs+1), probe.Foreground{Unknown: "the host sent more of the pane's processes than it may"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			frame := "agent:@1.%2\t/w\n" + ForegroundMark + "\n" + c.block + ForegroundEnd + "\n" + PaneMark + "\nthe pane\n"
			got, err := Read(strings.NewReader(frame), Options{Framed: true})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got.Foreground); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := Read(strings.NewReader("agent:@1.%2\t/w\n"+ForegroundMark+"\n"+proc+"\n"), Options{Framed: true}); err == nil {
		t.Errorf("a block without its end read")
	}
	// A block after a status line is a status file's text.
	frame := "agent:@1.%2\t/w\n{}\n" + StatusEnd + "\n" + ForegroundMark + "\n" + proc + "\n" + ForegroundEnd + "\n" + PaneMark + "\nthe pane\n"
	got, err := Read(strings.NewReader(frame), Options{Framed: true})
	if err != nil || got.Foreground.Known {
		t.Errorf("a block after a status was believed: %+v, %v", got.Foreground, err)
	}
}

// TestKeyCondition: the condition a key is sent on holds exactly while
// the pane is as the capture saw it, on a real tmux: a human's key (their
// session's activity, the cursor), a resize, copy mode each make it fail.
func TestKeyCondition(t *testing.T) {
	s := testenv.Tmux(t)
	s.NewSession(t, "agent", "cat")
	look := func() string {
		out, err := exec.Command(s.Mux, Args(coord.Exact("agent"))...).Output()
		if err != nil {
			t.Fatal(err)
		}
		c, err := Read(strings.NewReader(string(out)), Options{Framed: true, StatusDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		cond, ok := c.KeyCondition()
		if !ok {
			t.Fatalf("no condition from %q", out)
		}
		return cond
	}
	holds := func(cond string) bool {
		out, err := exec.Command(s.Mux, "if-shell", "-F", "-t", "=agent:", cond, "display-message -p yes", "display-message -p no").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out)) == "yes"
	}
	cond := look()
	if !holds(cond) {
		t.Fatalf("the condition %q does not hold on the pane it was read from", cond)
	}
	s.Run(t, "send-keys", "-t", "=agent:", "-l", "x")
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if holds(cond) {
			return poll.Continue("still holds after the cursor moved")
		}
		return poll.Success()
	}, poll.WithTimeout(5*time.Second))
	cond = look()
	s.Run(t, "resize-window", "-t", "=agent:", "-x", "100")
	if holds(cond) {
		t.Errorf("holds after a resize")
	}
	cond = look()
	s.Run(t, "copy-mode", "-t", "=agent:")
	if holds(cond) {
		t.Errorf("holds in copy mode")
	}
	s.Run(t, "send-keys", "-t", "=agent:", "-X", "cancel")
	if !holds(cond) {
		t.Errorf("does not hold once copy mode is left")
	}
}
