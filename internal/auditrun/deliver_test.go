package auditrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// TestDeliverKeepsTheCaptionOffTheCommandLine: the report goes to the
// funnel as a document for a private chat and as its path for a group,
// with the summary (what the auditors read of the repository) always on
// the funnel's standard input, never among its arguments; a funnel of the
// old contract, which took the caption as an argument, is a failure.
func TestDeliverKeepsTheCaptionOffTheCommandLine(t *testing.T) {
	testenv.Need(t, "sh")
	const secret = "hunter2-in-the-summary"
	tests := []struct {
		name   string
		chat   string
		script string // sh; $ARGV and $GOT are files for what it got
		want   []string
		err    string // a substring of the error, or "" for none
	}{
		{"private chat", "12345", `cat >"$GOT"`, []string{"--document REPORT --stdin", "<b>AUDIT · shop</b>\n1 finding: " + secret}, ""},
		{"group chat", "-100123", `cat >"$GOT"`, []string{"--stdin", "<b>AUDIT · shop</b>\n1 finding: " + secret +
			"\nThe report (not sent to a group chat): REPORT"}, ""},
		{"a funnel of the old contract", "12345", `printf '%s' "$3" >"$GOT"`, []string{"--document REPORT --stdin", "--stdin"},
			"exited 0 without reading the message on its standard input"},
		{"a funnel that gives up", "12345", `cat >/dev/null; echo 'not sent: HTTP 403' >&2; exit 1`, []string{"--document REPORT --stdin", ""},
			"FUNNEL: exit status 1: not sent: HTTP 403"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			argv, got := filepath.Join(dir, "argv"), filepath.Join(dir, "got")
			funnel := filepath.Join(dir, "funnel.sh")
			script := "#!/bin/sh\nprintf '%s' \"$*\" >\"$ARGV\"\n" + tt.script + "\n"
			conf := filepath.Join(dir, "telegram.conf")
			report := filepath.Join(dir, "report.md")
			for path, data := range map[string]string{funnel: script, conf: "bot_token=1:x\nchat_id=" + tt.chat + "\n", report: "# report\n"} {
				if err := os.WriteFile(path, []byte(data), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			s := Settings{Name: "shop", Environ: []string{
				"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "ARGV=" + argv, "GOT=" + got,
				"OMEGA_MONITOR_ALERT_SEND=" + funnel, "OMEGA_TELEGRAM_CONF=" + conf,
			}}
			err := deliver(s, "1 finding: "+secret, report)
			errText := ""
			if err != nil {
				errText = strings.ReplaceAll(err.Error(), funnel, "FUNNEL")
			}
			if tt.err == "" && err != nil || !strings.Contains(errText, tt.err) {
				t.Errorf("deliver: %v, want %q", err, tt.err)
			}
			a, _ := os.ReadFile(argv)
			g, _ := os.ReadFile(got)
			gotten := []string{strings.ReplaceAll(string(a), report, "REPORT"), strings.ReplaceAll(string(g), report, "REPORT")}
			if diff := cmp.Diff(tt.want, gotten); diff != "" {
				t.Errorf("the funnel's arguments and input mismatch (-want +got):\n%s", diff)
			}
			if strings.Contains(string(a), secret) {
				t.Errorf("the summary is on the funnel's command line: %q", a)
			}
		})
	}
}
