package watcher

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
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
	r := runProbeOnce(ctx, dir, command)
	switch {
	case !r.Ran && strings.HasSuffix(r.Failure, ": "):
		return "FAILED: " + r.Failure + "nothing on standard error"
	case !r.Ran:
		return "FAILED: " + r.Failure
	}
	if p := probe.Read(r.Output, true); p.Known {
		return p.String()
	}
	return "NO COUNT: " + probe.Unusable(r.Output, r.Stderr)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
