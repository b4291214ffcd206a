package alert

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// TestSendContract: Send hands the message on the funnel's standard input
// with --stdin as its last argument, and takes a funnel's exit 0 for a
// delivery only when the funnel read the message to its end.
func TestSendContract(t *testing.T) {
	testenv.Need(t, "sh")
	msg := "<b>QUESTION</b> · <code>h:s</code>\n<pre>line two\nline three</pre>\n"
	big := strings.Repeat("x", 1<<20) // more than any pipe holds
	type outcome struct {
		Code   int    // -2: nil, delivered
		Unread bool   // the error wraps ErrUnread
		Said   string // the funnel's last line on stderr
		Argv   string // the funnel's arguments, as it got them
		Got    string // what it read
	}
	tests := []struct {
		name   string
		script string // sh; $ARGV and $GOT are files for what it got
		msg    string
		args   []string
		want   outcome
	}{
		{
			name:   "reads it all",
			script: `cat >"$GOT"`,
			msg:    msg,
			want:   outcome{Code: -2, Argv: "--stdin", Got: msg},
		},
		{
			name:   "arguments go before --stdin",
			script: `cat >"$GOT"`,
			msg:    msg,
			args:   []string{"--document", "/tmp/report.md"},
			want:   outcome{Code: -2, Argv: "--document /tmp/report.md --stdin", Got: msg},
		},
		{
			name:   "reads a large one",
			script: `cat >/dev/null`,
			msg:    big,
			want:   outcome{Code: -2, Argv: "--stdin"},
		},
		{
			name:   "the old contract: the message as $1, exit 0",
			script: `printf '%s' "$1" >"$GOT"`,
			msg:    msg,
			want:   outcome{Code: 0, Unread: true, Argv: "--stdin", Got: "--stdin"},
		},
		{
			name:   "the old contract, with more than a pipe holds",
			script: `printf '%s' "$1" >"$GOT"`,
			msg:    big,
			want:   outcome{Code: 0, Unread: true, Argv: "--stdin", Got: "--stdin"},
		},
		{
			name:   "reads the first line only",
			script: `IFS= read -r line; printf '%s' "$line" >"$GOT"`,
			msg:    msg,
			want:   outcome{Code: 0, Unread: true, Argv: "--stdin", Got: "<b>QUESTION</b> · <code>h:s</code>"},
		},
		{
			name:   "gives up",
			script: `cat >/dev/null; echo 'omega-alert-send: try 1: HTTP 500' >&2; echo 'omega-alert-send: not sent: HTTP 403' >&2; exit 1`,
			msg:    msg,
			want:   outcome{Code: 1, Said: "omega-alert-send: not sent: HTTP 403", Argv: "--stdin"},
		},
		{
			name:   "gives up unread: the exit status is its word",
			script: `echo 'no config' >&2; exit 1`,
			msg:    msg,
			want:   outcome{Code: 1, Said: "no config", Argv: "--stdin"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			argv, got := filepath.Join(dir, "argv"), filepath.Join(dir, "got")
			funnel := filepath.Join(dir, "funnel.sh")
			script := "#!/bin/sh\nprintf '%s' \"$*\" >\"$ARGV\"\n" + tt.script + "\n"
			if err := os.WriteFile(funnel, []byte(script), 0o700); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			env := append(os.Environ(), "ARGV="+argv, "GOT="+got)
			err := Send(ctx, funnel, env, tt.msg, tt.args...)
			o := outcome{Code: -2, Unread: errors.Is(err, ErrUnread)}
			var fe *FunnelError
			if errors.As(err, &fe) {
				o.Code, o.Said = fe.Code, fe.Said
			} else if err != nil {
				t.Fatalf("Send: %v, want a *FunnelError", err)
			}
			b, _ := os.ReadFile(argv)
			o.Argv = string(b)
			b, _ = os.ReadFile(got)
			o.Got = string(b)
			if diff := cmp.Diff(tt.want, o); diff != "" {
				t.Errorf("Send: %v: mismatch (-want +got):\n%s", err, diff)
			}
		})
	}
}

// TestSendNotStarted: a funnel that cannot run, or does not end in time,
// is no delivery and no exit status.
func TestSendNotStarted(t *testing.T) {
	testenv.Need(t, "sh")
	dir := t.TempDir()
	slow := filepath.Join(dir, "slow.sh")
	if err := os.WriteFile(slow, []byte("#!/bin/sh\nexec sleep 30\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, funnel := range []string{filepath.Join(dir, "missing.sh"), slow} {
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		start := time.Now()
		err := Send(ctx, funnel, nil, "<b>x</b>")
		cancel()
		var fe *FunnelError
		if !errors.As(err, &fe) || fe.Code != -1 || errors.Is(err, ErrUnread) {
			t.Errorf("%s: %v, want a *FunnelError with code -1", funnel, err)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%s: Send took %v", funnel, took)
		}
	}
}

// TestSendThroughTheScript: the real funnel, run by Send as a watcher runs
// it, with a secret in the message: while the fake API holds the request,
// no command line below this test holds the secret or the token; then the
// message arrives whole.
func TestSendThroughTheScript(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc here")
	}
	api := newFakeAPI(t, ok200)
	api.arrived, api.hold = make(chan struct{}, 1), make(chan struct{})
	e := newSendEnv(t, api.srv.URL)
	script, err := filepath.Abs(sendScript)
	if err != nil {
		t.Fatal(err)
	}
	msg := "<b>FAILURE</b> · <code>h:s</code>\n<pre>curl -u admin:" + argvSecret + " https://x</pre>"
	done := make(chan error, 1)
	go func() { done <- Send(t.Context(), script, e.env, msg) }()
	select {
	case <-api.arrived:
	case <-time.After(30 * time.Second):
		close(api.hold)
		t.Fatal("no request arrived")
	}
	lines := cmdlines(t, os.Getpid())
	close(api.hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	checkCmdlines(t, lines, "omega-alert-send.sh --stdin", "curl ")
	var texts []string
	for _, q := range api.requests() {
		texts = append(texts, q.Get("text"))
	}
	if diff := cmp.Diff([]string{msg}, texts); diff != "" {
		t.Errorf("delivered mismatch (-want +got):\n%s", diff)
	}
}
