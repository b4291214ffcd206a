package auditrun

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
)

// captionMax is what a caption may hold: Telegram's limit is 1024
// characters once the HTML is parsed, and the escaping only adds.
const captionMax = 900

// deliver sends the report as one message through the alert funnel found
// in s.Environ: the summary as the caption, the whole report as a
// document, to a private chat. A group chat gets the summary and where the
// report lies, not the report: what an auditor read of a hostile
// repository is for the operator's eyes. The error is the record's
// DeliveryError, for a person to read.
func deliver(s Settings, summary, reportPath string) error {
	getenv := func(name string) string { return lookup(s.Environ, name) }
	home := getenv("HOME")
	funnel := alert.FunnelPath(getenv, home)
	if fi, err := os.Stat(funnel); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("no alert funnel installed at %s (install it, or pass --no-deliver)", funnel)
	}
	text := alert.Redact("AUDIT · " + s.Name + "\n" + summary)
	if r := []rune(text); len(r) > captionMax {
		text = string(r[:captionMax]) + "…"
	}
	caption := "<b>" + html.EscapeString(strings.SplitN(text, "\n", 2)[0]) + "</b>"
	if _, rest, ok := strings.Cut(text, "\n"); ok {
		caption += "\n" + html.EscapeString(rest)
	}
	args := []string{"--document", reportPath, caption}
	if !alert.PrivateChat(alert.ConfPath(getenv, home)) {
		args = []string{caption + "\n" + html.EscapeString("The report (not sent to a group chat): "+reportPath)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, funnel, args...)
	cmd.Env = s.Environ
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", funnel, err, lastLine(errb.String(), "no message"))
	}
	return nil
}
