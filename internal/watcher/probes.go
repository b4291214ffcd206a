package watcher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/procgroup"
	"github.com/omega-monitor/omega-monitor/probe"
)

// probeTimeout bounds a probe's run at start, as the loop's call clock
// bounds it at each poll.
const probeTimeout = 20 * time.Second

// ProbeDir is the directory a watcher's probes run in when --probe-dir is
// not given: the pane's working directory for a local target, where the
// agent works (the README's probes read its files); this process's for a
// remote one, since the probes run on this machine.
func ProbeDir(ctx context.Context, m coord.Mux, target coord.Target, pane string) string {
	if target.Local() {
		out, err := m.Run(ctx, "", "display-message", "-p", "-t", pane, "#{pane_current_path}")
		dir := strings.TrimSpace(string(out))
		if fi, statErr := os.Stat(dir); err == nil && filepath.IsAbs(dir) && statErr == nil && fi.IsDir() {
			return dir
		}
	}
	dir, _ := os.Getwd()
	return dir
}

// TryProbes runs each probe of f once, in f.ProbeDir, as the loop will,
// and says what each read and where, one line each; and, plainly, what
// a missing probe means. home shortens the directory for the eye.
func TryProbes(ctx context.Context, f Settings, home string) []string {
	where := f.ProbeDir
	if home != "" && (where == home || strings.HasPrefix(where, home+"/")) {
		where = "~" + strings.TrimPrefix(where, home)
	}
	var lines []string
	for _, p := range []struct{ name, command, missing string }{
		{"work", f.WorkProbe, "no work probe (--work-probe): every idle screen is taken for work left, and nudged"},
		{"progress", f.ProgressProbe, "no progress probe (--progress-probe): the nudge budget never re-arms by itself (omega-monitor reset does)"},
	} {
		if p.command == "" {
			lines = append(lines, "warning: "+p.missing)
			continue
		}
		lines = append(lines, fmt.Sprintf("%s probe in %s: %s", p.name, where, runProbe(ctx, f.ProbeDir, p.command)))
	}
	return lines
}

// runProbe runs command in dir with bash, as the loop does, and says its
// reading or why there is none.
func runProbe(ctx context.Context, dir, command string) string {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir = dir
	procgroup.Set(cmd, time.Second)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	said := lastLine(errb.String())
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return fmt.Sprintf("FAILED: no answer within %v", probeTimeout)
	case errors.As(err, &exit):
		if said == "" {
			said = "nothing on standard error"
		}
		return fmt.Sprintf("FAILED: exit %d: %s", exit.ExitCode(), said)
	case err != nil:
		return "FAILED: " + err.Error()
	}
	if r := probe.Read(out.String(), true); r.Known {
		return r.String()
	}
	return "NO COUNT: " + probe.Unusable(out.String(), said)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
