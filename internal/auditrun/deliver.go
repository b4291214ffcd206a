package auditrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html"
	"os"
	"strings"
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
	// The caption goes on the funnel's standard input: a summary of what
	// the auditors read is not for every user's ps.
	msg, args := caption, []string{"--document", reportPath}
	if !alert.PrivateChat(alert.ConfPath(getenv, home)) {
		msg, args = caption+"\n"+html.EscapeString("The report (not sent to a group chat): "+reportPath), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := alert.Send(ctx, funnel, s.Environ, msg, args...); err != nil {
		var fe *alert.FunnelError
		if errors.As(err, &fe) {
			return fmt.Errorf("%s: %w: %s", funnel, fe.Err, cmp.Or(fe.Said, "no message"))
		}
		return fmt.Errorf("%s: %w", funnel, err)
	}
	return nil
}
