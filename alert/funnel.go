package alert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/procgroup"
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

// StdinFlag is the funnel's last argument: the message is on its standard
// input. Nothing secret goes on a funnel's command line, which every user of
// the machine reads (ps, /proc/PID/cmdline).
const StdinFlag = "--stdin"

// ErrUnread is a funnel that exited 0 and left its message unread: one
// written for the contract before StdinFlag, which took the message as its
// first argument, and so has just sent the word --stdin for a message.
var ErrUnread = errors.New("alert: the funnel exited 0 without reading the message on its standard input")

// A FunnelError is a run of the funnel that did not deliver.
type FunnelError struct {
	// Code is the funnel's exit status: 1 when it gave up and kept the
	// message in alert-failed.log itself; 0 when it exited 0 with the
	// message unread (Err is ErrUnread); -1 when it did not exit (it
	// could not start, or ran out of time).
	Code int
	// Said is the last line it wrote on standard error; Stderr all of it
	// (the first 64 KiB), trimmed.
	Said, Stderr string
	Err          error
}

func (e *FunnelError) Error() string {
	said := e.Said
	if said == "" {
		said = "no message"
	}
	return fmt.Sprintf("the funnel: %v: %s", e.Err, said)
}

func (e *FunnelError) Unwrap() error { return e.Err }

// Send hands msg to the funnel: it runs `funnel [args...] --stdin` with msg
// on its standard input, in a process group of its own that ctx's end kills
// whole, with env (nil: this process's environment). It returns nil when
// the funnel delivered, else a *FunnelError.
//
// The funnel must read its standard input to the end before it exits. One
// that exits 0 leaving the message there is not taken at its word: a funnel
// of the old contract (the message as $1) does exactly that, having sent
// "--stdin" in the message's place, and the error wraps ErrUnread so that
// the caller keeps the message and says why, rather than drop it as sent.
func Send(ctx context.Context, funnel string, env []string, msg string, args ...string) error {
	_, err := SendMessage(ctx, funnel, env, msg, args...)
	return err
}

// A Sent is the message a funnel sent, as it said on its standard output
// (SentLine): the chat and the id Telegram gave the message. Zero when it
// did not say, as a funnel of its own need not.
type Sent struct {
	ChatID    int64
	MessageID int
}

// SentLine is the form of the line by which a funnel says which message it
// sent with buttons (--reply-markup): message_id=N chat_id=C. The watcher
// records it with the question's offers, to have the buttons removed when
// the question leaves the screen.
const SentLine = "message_id=%d chat_id=%d"

// ParseSent reads the funnel's standard output for its SentLine: the last
// line that is exactly one, with a message id above 0 and a chat id other
// than 0. Anything else is no id: the buttons then stay until tapped.
func ParseSent(out string) Sent {
	var s Sent
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		m, okm := strings.CutPrefix(f[0], "message_id=")
		c, okc := strings.CutPrefix(f[1], "chat_id=")
		if !okm || !okc || !digits(m) || !digits(strings.TrimPrefix(c, "-")) {
			continue
		}
		id, errm := strconv.ParseInt(m, 10, 32)
		chat, errc := strconv.ParseInt(c, 10, 64)
		if errm == nil && errc == nil && id > 0 && chat != 0 {
			s = Sent{ChatID: chat, MessageID: int(id)}
		}
	}
	return s
}

func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// SendMessage is Send, and says which message the funnel sent, when it
// said so on its standard output (ParseSent; the first 64 KiB are read).
func SendMessage(ctx context.Context, funnel string, env []string, msg string, args ...string) (Sent, error) {
	return sendMessage(ctx, funnel, env, msg, nil, args...)
}

// SendSaying is Send for one who waits on it (install --test-alert): what
// the funnel says on its standard error while it tries (each retry, and
// why) is copied to said as it comes.
func SendSaying(ctx context.Context, funnel string, env []string, msg string, said io.Writer) error {
	_, err := sendMessage(ctx, funnel, env, msg, said)
	return err
}

func sendMessage(ctx context.Context, funnel string, env []string, msg string, said io.Writer, args ...string) (Sent, error) {
	// A pipe of our own, not an io.Reader that exec would copy and close:
	// this end stays open here, so that what the funnel left unread can
	// be seen once it has exited.
	r, w, err := os.Pipe()
	if err != nil {
		return Sent{}, &FunnelError{Code: -1, Err: fmt.Errorf("alert: the funnel's standard input: %w", err)}
	}
	defer r.Close()
	cmd := exec.CommandContext(ctx, funnel, slices.Concat(args, []string{StdinFlag})...)
	cmd.Env = env
	cmd.Stdin = r
	procgroup.Set(cmd, time.Second)
	var outb, errb cappedBuffer
	cmd.Stdout, cmd.Stderr = &outb, &errb
	if said != nil {
		cmd.Stderr = io.MultiWriter(&errb, quiet{said})
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		return Sent{}, &FunnelError{Code: -1, Err: err}
	}
	written := make(chan struct{})
	go func() {
		defer close(written)
		// A funnel that stops reading leaves this write blocked on a
		// full pipe until r is closed below; its error is the funnel's
		// to report, not ours.
		io.WriteString(w, msg)
		w.Close()
	}()
	err = cmd.Wait()
	unread := err == nil && pipeHolds(r)
	r.Close()
	<-written
	if err == nil && !unread {
		return ParseSent(outb.String()), nil
	}
	fe := &FunnelError{Code: -1, Said: lastLine(errb.String()), Stderr: strings.TrimSpace(errb.String()), Err: err}
	var exit *exec.ExitError
	switch {
	case unread:
		fe.Code, fe.Err = 0, ErrUnread
	case errors.As(err, &exit) && ctx.Err() == nil:
		fe.Code = exit.ExitCode()
	}
	return Sent{}, fe
}

// pipeHolds reports whether bytes are left in the pipe r. It waits for no
// one but the writer, which either writes all and closes (then the read
// sees bytes, or the end) or blocks on a full pipe (then it sees bytes).
func pipeHolds(r *os.File) bool {
	n, _ := r.Read(make([]byte, 1))
	return n > 0
}

// cappedBuffer keeps the first 64 KiB written to it and drops the rest, so
// that a funnel that floods its standard error costs a bounded memory.
// quiet is a writer whose failures are not the funnel's: it is never
// stopped by one.
type quiet struct{ w io.Writer }

func (q quiet) Write(p []byte) (int, error) {
	q.w.Write(p)
	return len(p), nil
}

type cappedBuffer struct{ b bytes.Buffer }

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := 64<<10 - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string { return c.b.String() }

// lastLine is the last non-blank line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// Undeliverable says why no alert could leave this machine now, or "": the
// funnel is not installed (or not executable), or is the default one from
// before StdinFlag, or its config is missing. A watcher started so would
// relay questions to nobody.
func Undeliverable(getenv func(string) string, home string) string {
	funnel := FunnelPath(getenv, home)
	if fi, err := os.Stat(funnel); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o100 == 0 {
		return "no alert funnel at " + funnel + " (" + FunnelFix(funnel, home) + ")"
	}
	// Only the default funnel, which install writes and rewrites, is read:
	// one of the operator's own may read its standard input without naming
	// the flag, and Send tells at the first alert anyway.
	if getenv("OMEGA_MONITOR_ALERT_SEND") == "" {
		if b, err := fsutil.ReadCapped(funnel, 1<<20); err == nil && !bytes.Contains(b, []byte(StdinFlag)) {
			return "the alert funnel at " + funnel + " is older than this omega-monitor: it takes no " + StdinFlag +
				" and would send that word for each alert (omega-monitor install updates it)"
		}
	}
	// A funnel of the operator's own delivers as it will: the Telegram
	// config is the default funnel's, and its absence says nothing of
	// another's (the first alert, or install --test-alert, tells).
	if getenv("OMEGA_MONITOR_ALERT_SEND") != "" {
		return ""
	}
	conf := ConfPath(getenv, home)
	if fi, err := os.Stat(conf); err != nil || !fi.Mode().IsRegular() {
		return "no Telegram config at " + conf + " (bot_token= and chat_id= lines, mode 0600; then omega-monitor install --test-alert)"
	}
	return ""
}

// FunnelFix says how to put a funnel at funnel, where none is: install
// writes only the default one (home's); another is the one
// OMEGA_MONITOR_ALERT_SEND names, which install never writes.
func FunnelFix(funnel, home string) string {
	if funnel == DefaultFunnel(home) {
		return "omega-monitor install puts it there"
	}
	return "OMEGA_MONITOR_ALERT_SEND names it, and install never writes there: put an executable funnel at that path, " +
		"or unset OMEGA_MONITOR_ALERT_SEND and run omega-monitor install for the default one at " + DefaultFunnel(home)
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
