package poll

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
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
// (its files are there: remoteAccount reads them), an agent
// whose description says nothing, or a file that names no account. It is
// read only when a usage limit is about to be paged.
func accountOf(c capture.Capture, local *classify.Local, agent string, environ []string) string {
	spec, ok := classify.AccountOf(local, agent)
	if !ok || !c.Foreground.Known {
		return ""
	}
	env := environ
	if pid := agentProcess(c, local, agent); pid > 0 {
		if b, err := fsutil.ReadCapped(filepath.Join("/proc", strconv.Itoa(pid), "environ"), maxEnviron); err == nil {
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
func localAccount(c capture.Capture, local *classify.Local, target string) func(agent string) (string, bool) {
	if t, err := coord.ParseTarget(target); err != nil || !t.Local() {
		return nil
	}
	return func(agent string) (string, bool) { return accountOf(c, local, agent, os.Environ()), false }
}

// The account of the agent of a pane of an ssh host is read there, where
// its files are, once per agent process: when a usage limit is about to
// be paged and no reading of that process is recorded, the tick asks for
// one (a measure action, run over the loop's ssh connection, whose output
// the next tick reads, as it reads a diff's) and the page waits for that
// look, half a second later. What the host sends is hostile: only a
// digest of the one field (probe.AccountKey) is kept, and a host that
// names an account it does not have can at worst join its panes to that
// account's page, or leave them apart.

// An accountRecord is the reading of the account of one agent process on
// the host (statedir.AccountFile).
type accountRecord struct {
	Agent string `json:"agent"`
	PID   int    `json:"pid"`
	// Key is the account's digest; "" when the host named none.
	Key string `json:"key,omitempty"`
	// Asked says a reading was asked for and has not come back.
	Asked bool      `json:"asked,omitempty"`
	At    time.Time `json:"at"`
}

// accountScript prints "account PID" and the account file of the agent
// process PID ($1): in the directory its variable $2 names, where its
// environment has that variable as an absolute path, else under its HOME
// (the login's where its environment cannot be read) in $3; the file $4,
// a regular one (a FIFO planted there would hold the read), its first
// 16 MiB. Every argument is a number or a checked description's word.
const accountScript = `printf 'account %s\n' "$1"
e= h=
if [ -r "/proc/$1/environ" ]; then
  [ -z "$2" ] || e=$(tr '\000' '\n' <"/proc/$1/environ" | sed -n "s/^$2=//p" | tail -n 1)
  h=$(tr '\000' '\n' <"/proc/$1/environ" | sed -n 's/^HOME=//p' | tail -n 1)
fi
case $e in /*) d=$e ;; *) case $h in /*) ;; *) h=$HOME ;; esac; d=$h/$3 ;; esac
[ -f "$d/$4" ] && head -c 16777216 -- "$d/$4"
:`

// accountCommand is the command line that reads the account of the agent
// process pid as spec says, for ssh (the host's login shell parses it).
func accountCommand(spec classify.LocalAccount, pid int) string {
	return "sh -c " + coord.ShellJoin(accountScript, "omega-monitor", strconv.Itoa(pid), spec.Home, spec.Default, spec.File)
}

// agentProcess is the process of the agent named agent in the pane's
// foreground, 0 where the capture shows none.
func agentProcess(c capture.Capture, local *classify.Local, agent string) int {
	if !c.Foreground.Known {
		return 0
	}
	programs := classify.Programs(local, agent)
	if i := slices.IndexFunc(c.Foreground.Procs, func(p probe.Process) bool { return probe.AgentProgram(programs, p) }); i >= 0 {
		return c.Foreground.Procs[i].PID
	}
	return 0
}

// readAccountReading is the record of the reading the last tick asked for,
// from what its measure printed (output, a file) or why it failed; ok is
// false when no reading was asked for (the output is a diff's).
func (d stateDirectory) readAccountReading(now time.Time, output, failed string, local *classify.Local) (accountRecord, bool) {
	if output == "" && failed == "" { // no measure this poll: the file is not read
		return accountRecord{}, false
	}
	var rec accountRecord
	data, err := os.ReadFile(d.path(statedir.AccountFile))
	if err != nil || json.Unmarshal(data, &rec) != nil || !rec.Asked {
		return accountRecord{}, false
	}
	rec.Asked, rec.At, rec.Key = false, now, ""
	spec, ok := classify.AccountOf(local, rec.Agent)
	if failed != "" || !ok {
		return rec, true
	}
	out, err := fsutil.ReadCapped(output, maxAccountFile+64)
	if first, rest, found := bytes.Cut(out, []byte("\n")); err == nil && found && string(first) == "account "+strconv.Itoa(rec.PID) {
		rec.Key = probe.AccountKey(rest, strings.Split(spec.Field, "."))
	}
	return rec, true
}

// remoteAccount reads accounts for the pane of an ssh host in capture c:
// the reading recorded for the agent's process (fresh, this tick's, else
// the file's), or none yet: then ask is set to the reading to ask for, and
// the tick is told the account is pending.
func (d stateDirectory) remoteAccount(c capture.Capture, local *classify.Local, fresh *accountRecord, ask *accountRecord) func(agent string) (string, bool) {
	return func(agent string) (string, bool) {
		spec, ok := classify.AccountOf(local, agent)
		pid := agentProcess(c, local, agent)
		if !ok || pid == 0 || spec.File == "" {
			return "", false
		}
		rec := fresh
		if rec == nil {
			rec = &accountRecord{}
			if data, err := os.ReadFile(d.path(statedir.AccountFile)); err != nil || json.Unmarshal(data, rec) != nil {
				*rec = accountRecord{}
			}
		}
		if rec.Agent == agent && rec.PID == pid {
			// Asked and never read (the loop stopped meanwhile): the
			// page goes without it rather than wait again.
			return rec.Key, false
		}
		*ask = accountRecord{Agent: agent, PID: pid, Asked: true}
		return "", true
	}
}

// recordAccount writes the account reading this tick read, and the one it
// asks for, whose measure then takes the place of a diff's (one measure a
// poll: its output comes back as the diff's does).
func (d stateDirectory) recordAccount(now time.Time, read, ask *accountRecord, local *classify.Local, measure *string) error {
	rec := read
	if ask.Agent != "" {
		spec, _ := classify.AccountOf(local, ask.Agent)
		*measure = accountCommand(spec, ask.PID)
		ask.At = now
		rec = ask
	}
	if rec == nil {
		return nil
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("account: %w", err)
	}
	if err := writeAtomic(d.path(statedir.AccountFile), append(data, '\n')); err != nil {
		return fmt.Errorf("account: %w", err)
	}
	return nil
}
