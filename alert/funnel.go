package alert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/fsutil"
)

// FunnelPath is the alert funnel, the script that delivers: the value of
// $OMEGA_MONITOR_ALERT_SEND, else ~/.omega/bin/omega-alert-send.sh under
// home, where install puts it. getenv is passed in, not read here, so that
// a caller resolves the path for the environment it hands on (a sandbox, a
// scheduled session) and not only for its own.
func FunnelPath(getenv func(string) string, home string) string {
	if p := getenv("OMEGA_MONITOR_ALERT_SEND"); p != "" {
		return p
	}
	return DefaultFunnel(home)
}

// DefaultFunnel is where install puts the funnel under home.
func DefaultFunnel(home string) string {
	return filepath.Join(home, ".omega", "bin", "omega-alert-send.sh")
}

// ConfPath is the funnel's configuration (its bot token and chat id): the
// value of $OMEGA_TELEGRAM_CONF, else ~/.omega/telegram.conf under home, as
// the funnel itself finds it.
func ConfPath(getenv func(string) string, home string) string {
	if p := getenv("OMEGA_TELEGRAM_CONF"); p != "" {
		return p
	}
	return filepath.Join(home, ".omega", "telegram.conf")
}

// A FunnelError is a run of the funnel that did not deliver.
type FunnelError struct {
	// Code is the funnel's exit status: 1 when it gave up and kept the
	// message in alert-failed.log itself; -1 when it did not exit (it
	// could not start, or ran out of time).
	Code int
	// Said is the last line it wrote on standard error.
	Said string
	Err  error
}

func (e *FunnelError) Error() string {
	said := e.Said
	if said == "" {
		said = "no message"
	}
	return fmt.Sprintf("the funnel: %v: %s", e.Err, said)
}

func (e *FunnelError) Unwrap() error { return e.Err }

// Send runs the funnel with args, in a process group of its own that ctx's
// end kills whole, with env (nil: this process's environment). It returns
// nil when the funnel delivered, else a *FunnelError.
func Send(ctx context.Context, funnel string, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, funnel, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	if err == nil {
		return nil
	}
	fe := &FunnelError{Code: -1, Said: lastLine(errb.String()), Err: err}
	var exit *exec.ExitError
	if errors.As(err, &exit) && ctx.Err() == nil {
		fe.Code = exit.ExitCode()
	}
	return fe
}

// lastLine is the last non-blank line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// Undeliverable says why no alert could leave this machine now, or "": the
// funnel is not installed (or not executable), or its config is missing.
// A watcher started without either would relay questions to nobody.
func Undeliverable(getenv func(string) string, home string) string {
	funnel := FunnelPath(getenv, home)
	if fi, err := os.Stat(funnel); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o100 == 0 {
		return "no alert funnel at " + funnel + " (omega-monitor install puts it there)"
	}
	conf := ConfPath(getenv, home)
	if fi, err := os.Stat(conf); err != nil || !fi.Mode().IsRegular() {
		return "no Telegram config at " + conf + " (bot_token= and chat_id= lines, mode 0600; then omega-monitor install --test-alert)"
	}
	return ""
}

// PrivateChat reports whether the funnel's config conf writes to a private
// chat (a positive chat id: the operator and the bot). A group or a channel
// is not, nor a config that cannot be read: the funnel will say what is
// wrong with it.
func PrivateChat(conf string) bool {
	b, err := fsutil.ReadCapped(conf, 64<<10)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "chat_id="); ok {
			v = strings.Trim(strings.TrimSpace(v), `"'`)
			return v != "" && strings.Trim(v, "0123456789") == ""
		}
	}
	return false
}

// Audience says who else reads what the watcher relays, or "": a config
// whose chat is a group or a channel, where every member reads the
// questions and the screen lines they quote. A missing config is
// Undeliverable's to say.
func Audience(getenv func(string) string, home string) string {
	conf := ConfPath(getenv, home)
	if fi, err := os.Stat(conf); err != nil || !fi.Mode().IsRegular() || PrivateChat(conf) {
		return ""
	}
	return "the chat_id in " + conf + " is not a private chat (a positive number): everyone in that group or channel reads the questions relayed and the screen lines they quote"
}
