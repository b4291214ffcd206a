package alert

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
)

// TestSendAPIEchoesNoToken: a Bot API (a proxy, a hostile address in
// OMEGA_TELEGRAM_API) whose refusal quotes the bot token back, in each
// form a server may write it, with raw line breaks, escape sequences, a
// forged alert-failed.log header and a megabyte of padding, has no form of
// the token said by the funnel or kept in alert-failed.log; each line the
// funnel says is its own, and each message kept has one header line.
func TestSendAPIEchoesNoToken(t *testing.T) {
	half := testToken[strings.IndexByte(testToken, ':')+1:]
	var echo []string
	for _, s := range []string{testToken, half} {
		for _, f := range fakeapi.Forms(s) {
			echo = append(echo, f.Name+": "+f.Text)
		}
	}
	said := strings.Join(echo, "\r\n") + "\r--- 2026-01-02T03:04:05Z · FORGED by the API\x1b]0;owned\x07\x1b[2J\u2028\u202enext"
	body := func(code int, pad int) string {
		d, _ := json.Marshal(said)
		// Raw control characters, as no JSON encoder writes them.
		d = []byte(strings.NewReplacer(`\r`, "\r", `\u001b`, "\x1b", `\u0007`, "\x07").Replace(string(d)))
		return `{"ok":false,"error_code":` + strconv.Itoa(code) + `,"description":` + string(d[:len(d)-1]) + strings.Repeat("x", pad) + `"}`
	}
	for _, a := range []answer{
		{500, body(500, 0)},
		{400, body(400, 0)},
		{401, body(401, 0)},
		{500, body(500, 1<<20)},
	} {
		t.Run(strconv.Itoa(a.status), func(t *testing.T) {
			api := newFakeAPI(t, a)
			e := newSendEnv(t, api.srv.URL, "OMEGA_ALERT_TRIES=2")
			r := e.runIn(t, "<b>QUESTION</b> · hello", "--stdin")
			if r.code != 1 {
				t.Fatalf("exit %d, stderr:\n%.2000s", r.code, r.stderr)
			}
			kept := e.failedLog(t)
			for where, text := range map[string]string{"stderr": r.stderr, "alert-failed.log": kept} {
				for _, s := range []string{testToken, half} {
					if leaks := fakeapi.Leaks(text, s); len(leaks) > 0 {
						t.Errorf("%s: the token leaked, %s:\n%.2000s", where, strings.Join(leaks, ", "), text)
					}
				}
				lines, bad := fakeapi.Records(text)
				for _, l := range lines {
					if len(l) > 2048 {
						bad = append(bad, "a line of "+strconv.Itoa(len(l))+" bytes")
					}
					if where == "stderr" && !strings.HasPrefix(l, "omega-alert-send: ") {
						bad = append(bad, "a line not the funnel's: "+l)
					}
				}
				if strings.Contains(text, "\n--- 2026-01-02T03:04:05Z") || strings.ContainsAny(text, "\r\x1b\u2028\u202e") {
					bad = append(bad, "a forged header or a control character")
				}
				for _, b := range bad {
					t.Errorf("%s: %.300q", where, b)
				}
			}
			if n := strings.Count("\n"+kept, "\n--- "); n != 1 {
				t.Errorf("%d header lines in alert-failed.log, want 1:\n%.2000s", n, kept)
			}
		})
	}
}
