package poll

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/probe"
)

// Bounds of what is read to tell an agent's account: its environment, and
// its file (Claude Code's ~/.claude.json holds every project's settings,
// and grows).
const (
	maxEnviron     = 256 << 10
	maxAccountFile = 16 << 20
)

// accountOf is the account (probe.AccountKey) of the agent named agent in
// the local pane of capture c, read where its description says it keeps it
// (classify.AccountOf), in the environment of the agent's own process when
// the pane's foreground shows it (two accounts on one machine are often
// two CLAUDE_CONFIG_DIR), else in environ's. "" for a pane of an ssh host
// (its files are there: its panes are one account per host), an agent
// whose description says nothing, or a file that names no account. It is
// read only when a usage limit is about to be paged.
func accountOf(c capture.Capture, local *classify.Local, agent string, environ []string) string {
	spec, ok := classify.AccountOf(local, agent)
	if !ok || !c.Foreground.Known {
		return ""
	}
	env := environ
	programs := classify.Programs(local, agent)
	if i := slices.IndexFunc(c.Foreground.Procs, func(p probe.Process) bool { return probe.AgentProgram(programs, p) }); i >= 0 {
		if b, err := fsutil.ReadCapped(filepath.Join("/proc", strconv.Itoa(c.Foreground.Procs[i].PID), "environ"), maxEnviron); err == nil {
			env = strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
		}
	}
	getenv := func(k string) string {
		for _, kv := range slices.Backward(env) {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	dir := getenv(spec.Home)
	if spec.Home == "" || !filepath.IsAbs(dir) {
		home := getenv("HOME")
		if !filepath.IsAbs(home) {
			return ""
		}
		dir = filepath.Join(home, filepath.FromSlash(spec.Default))
	}
	data, err := fsutil.ReadCapped(filepath.Join(dir, filepath.FromSlash(spec.File)), maxAccountFile)
	if err != nil {
		return ""
	}
	return probe.AccountKey(data, strings.Split(spec.Field, "."))
}

// localAccount reads accounts for the pane of target in capture c: for a
// pane of this machine only, in the watcher's own environment where the
// agent's cannot be read (an agent started beside it most often shares
// it).
func localAccount(c capture.Capture, local *classify.Local, target string) func(agent string) string {
	if t, err := coord.ParseTarget(target); err != nil || !t.Local() {
		return nil
	}
	return func(agent string) string { return accountOf(c, local, agent, os.Environ()) }
}
