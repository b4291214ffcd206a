package setup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/relay"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/scripts"
)

// A Check is one thing doctor looks at: what it found, and how to fix it
// when it is wrong (OK false).
type Check struct {
	Name, Found, Fix string
	OK               bool
}

// String is the check as doctor prints it, one line, its fix after it.
func (c Check) String() string {
	if c.OK {
		return "ok    " + c.Name + ": " + c.Found
	}
	return "FIX   " + c.Name + ": " + c.Found + "\n        → " + c.Fix
}

// Doctor looks at what a watcher needs on this machine, and what makes
// its alerts and answers reach the operator: the multiplexer, the state
// home, the alert funnel and its config, the other channels, the agents'
// hooks, the answer receiver. It changes nothing.
func Doctor(ctx context.Context, env Env) []Check {
	var out []Check
	add := func(name string, ok bool, found, fix string) {
		out = append(out, Check{Name: name, OK: ok, Found: found, Fix: fix})
	}
	if bin, err := coord.MuxBinary("", env.getenv); err != nil {
		add("multiplexer", false, pkgerr.Why(err), "install tmux (Debian: apt install tmux), or set OMEGA_MONITOR_MUX to its path")
	} else {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		v, err := exec.CommandContext(ctx, bin, "-V").Output()
		cancel()
		if err != nil {
			add("multiplexer", false, bin+" does not run: "+err.Error(), "install tmux (Debian: apt install tmux), or set OMEGA_MONITOR_MUX to one that runs")
		} else {
			add("multiplexer", true, bin+" ("+strings.TrimSpace(string(v))+")", "")
		}
	}
	switch err := statedir.CheckPrivate(env.State); {
	case errors.Is(err, fs.ErrNotExist):
		add("state home", true, env.State+" (not made yet: the first watcher makes it, mode 0700)", "")
	case err != nil:
		add("state home", false, err.Error(), "chmod 700 "+env.State+", a directory of yours alone (nothing is read from one another user can write)")
	default:
		add("state home", true, env.State+" (yours alone)", "")
	}
	funnel := alert.FunnelPath(env.getenv, env.Home)
	channels := filepath.Join(env.State, statedir.Channels)
	_, channelsErr := os.Lstat(channels)
	if why := alert.Undeliverable(env.getenv, env.Home); why != "" && channelsErr != nil {
		add("alerts", false, why, "as it says; then omega-monitor install --test-alert proves the alert reaches you")
	} else if why != "" {
		add("alerts", true, "through "+channels+" alone (Telegram: "+why+")", "")
	} else if b, err := os.ReadFile(funnel); err == nil && funnel == env.funnel() && !bytes.Equal(b, scripts.AlertSend) {
		add("alerts", false, "the funnel at "+funnel+" is not this release's", "omega-monitor install (it rewrites the default funnel)")
	} else {
		add("alerts", true, "the funnel "+funnel+", the config "+env.conf()+" (omega-monitor install --test-alert proves the chat)", "")
	}
	if channelsErr == nil {
		add("other channels", true, channels+" (omega-monitor channels check --test FILE sends to each)", "")
	}
	specs := hookSpecs(env.Home, env.getenv)
	installed := hooksInstalled(env.Home, env.getenv, specs)
	for _, spec := range specs {
		agent := spec.agent
		found, _ := agentFound(env, spec)
		switch {
		case !found:
		case installed[agent]:
			add(agent+" hooks", true, "installed: its turns' ends and dialogs wake the watcher at once", "")
		default:
			add(agent+" hooks", false, "not installed: its watcher sees a turn's end at the next poll only", "omega-monitor install --hooks "+hookFlag(agent))
		}
	}
	if c, ok := codexSkillCheck(env); ok {
		out = append(out, c)
	}
	if c, err := relay.Load(env.getenv, env.Home); err != nil {
		add("answers from the chat", true, "off: "+pkgerr.Why(err), "")
	} else if running, rec, err := relay.Running(env.State); err != nil || !running {
		add("answers from the chat", false, fmt.Sprintf("on (%s), but no receiver runs", c), "omega-monitor relay start (a watcher started with answers on starts it too)")
	} else {
		add("answers from the chat", true, fmt.Sprintf("on, the receiver runs (pid %d)", rec.Pid), "")
	}
	return out
}

// Report writes Doctor's checks to w, a line each, and how many need
// fixing; it returns that number.
func Report(ctx context.Context, env Env, w io.Writer) int {
	bad := 0
	for _, c := range Doctor(ctx, env) {
		fmt.Fprintln(w, c)
		if !c.OK {
			bad++
		}
	}
	if bad > 0 {
		fmt.Fprintf(w, "%d to fix\n", bad)
	} else {
		fmt.Fprintln(w, "nothing to fix")
	}
	return bad
}

// codexSkillCheck looks at the $monitor skill install --codex wrote, when
// there is one: it holds the monitor agent's prompt as this release words
// it, or the release it was installed by (a prompt of an older release
// lacks what this one says). ok false: no skill of ours, nothing to say.
func codexSkillCheck(env Env) (Check, bool) {
	skill := codexFilesIn(env.codexHome()).skill
	b, err := os.ReadFile(skill)
	if err != nil || !bytes.Contains(b, []byte(codexSkillMarker)) {
		return Check{}, false
	}
	c := Check{Name: "codex $monitor", OK: true, Found: skill + " (this release's)"}
	if bin, err := env.binary(); err == nil && string(b) != CodexSkill(bin) {
		c.OK, c.Found, c.Fix = false, skill+" is not this release's, or runs another binary", "omega-monitor install --codex (it rewrites the skill)"
	}
	return c, true
}
