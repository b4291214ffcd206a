package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// A hostileChannel is a line of the channels file whose service is a
// hostile echo, and the secrets the line holds, by name.
type hostileChannel struct {
	line    string
	echo    *fakeapi.Echo
	secrets map[string]string
}

// hostileChannels are a channel of each service that takes a server of the
// operator's, each refused by a server that echoes the request in its
// error: ntfy with a user and password (Basic) and its topic, Gotify's
// token in the query, a generic webhook with a user and password, a token
// in its path and one in its query, another with a bearer header, Bark's
// device key in the body, Matrix's password in the login's body.
func hostileChannels(t *testing.T) []hostileChannel {
	echo := func(s fakeapi.EchoShape) *fakeapi.Echo { return fakeapi.NewEcho(t, s) }
	var cs []hostileChannel
	add := func(e *fakeapi.Echo, line string, secrets ...string) {
		c := hostileChannel{line: line, echo: e, secrets: map[string]string{}}
		for i := 0; i < len(secrets); i += 2 {
			c.secrets[secrets[i]] = secrets[i+1]
		}
		cs = append(cs, c)
	}
	e := echo(fakeapi.EchoNtfy)
	add(e, "ntfy://opsbot:pw-Zq9xK7dLm2@"+e.HostPort()+"/alerts-T0p1cK9?disabletls=yes",
		"ntfy password", "pw-Zq9xK7dLm2", "ntfy user:password", "opsbot:pw-Zq9xK7dLm2", "ntfy topic", "alerts-T0p1cK9")
	e = echo(fakeapi.EchoGotify)
	add(e, "gotify://"+e.HostPort()+"/AbCdEfGh1234567?disabletls=yes", "gotify token", "AbCdEfGh1234567")
	e = echo(fakeapi.EchoStatus)
	add(e, "generic+http://hookuser:hk-P4ssW0rd9@"+e.HostPort()+"/hook/in/Wb7TokQ2xZ?token=qT0k3n-8YhPw",
		"generic password", "hk-P4ssW0rd9", "generic user:password", "hookuser:hk-P4ssW0rd9",
		"generic path token", "Wb7TokQ2xZ", "generic query token", "qT0k3n-8YhPw")
	e = echo(fakeapi.EchoStatus)
	add(e, "generic+http://"+e.HostPort()+"/in?@Authorization=Bearer+bR3ar-T0ken-5xYv", "bearer token", "bR3ar-T0ken-5xYv")
	e = echo(fakeapi.EchoBark)
	add(e, "bark://:dev1ceK3yZq8@"+e.HostPort()+"/?scheme=http", "bark device key", "dev1ceK3yZq8")
	e = echo(fakeapi.EchoMatrix)
	add(e, "matrix://mxuser:mxP4ss-w0rd7@"+e.HostPort()+"/?rooms=!r:example.com&disableTLS=yes",
		"matrix password", "mxP4ss-w0rd7", "matrix user:password", "mxuser:mxP4ss-w0rd7")
	return cs
}

// TestHostileServerEchoesNoSecret: servers that refuse each alert with an
// error quoting the request back put no form of any secret in what send,
// send --channel and check --test print or keep in alert-failed.log. Each
// server first echoes each credential of the request in one form alone (as
// written, URL-escaped, in base64 of both alphabets with and without
// padding, JSON-escaped, after "Bearer ", inside a longer base64 text),
// then the whole request with every form, and one pads that to more than
// 1 MB; each answer ends with line breaks of every kind, escape sequences
// and lines forged as the watcher's. Every line printed is one record of
// ours, and the service's own words are not masked where a short part of
// the URL is in them ("webhook", "Go-http-client").
func TestHostileServerEchoesNoSecret(t *testing.T) {
	chans := hostileChannels(t)
	home := t.TempDir()
	var lines []string
	for _, c := range chans {
		lines = append(lines, c.line)
	}
	file := filepath.Join(home, "channels")
	assert.NilError(t, os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	env := func(k string) string {
		return map[string]string{"OMEGA_NOTIFY_TRIES": "1", "OMEGA_NOTIFY_BACKOFF": "0", "OMEGA_NOTIFY_TIMEOUT": "20"}[k]
	}
	code, listed, errs := runIt(t, "", nil, "list", "--home", home)
	assert.Equal(t, code, 0, errs)
	said := map[string]string{} // what was printed or kept, by where

	for _, form := range fakeapi.FormNames() {
		for _, c := range chans {
			c.echo.Only(form)
		}
		for _, l := range strings.Split(strings.TrimSpace(listed), "\n") {
			id, _, _ := strings.Cut(l, "\t")
			code, out, errs := runIt(t, "an alert", env, "send", "--home", home, "--channel", id)
			assert.Equal(t, code, 1, "%s: %s", l, errs)
			said["send --channel, echoed "+form] += out + errs
		}
	}

	for _, c := range chans {
		c.echo.Only("")
	}
	chans[0].echo.Pad = 1 << 20
	code, out, errs := runIt(t, "<b>QUESTION</b> · an alert", env, "send", "--home", home)
	assert.Equal(t, code, 0, errs)
	said["send, echoed whole"] = out + errs
	failed, err := os.ReadFile(filepath.Join(home, statedir.FailedAlerts))
	assert.NilError(t, err)
	said["alert-failed.log"] = string(failed)
	_, out, errs = runIt(t, "", env, "check", "--test", file)
	said["check --test, echoed whole"] = out + errs
	for _, l := range strings.Split(said["send, echoed whole"], "\n") {
		if strings.Contains(l, "web"+alert.Masked) || strings.Contains(l, "Go-"+alert.Masked) || strings.Contains(l, "(generic") && !strings.Contains(l, "generic webhook: ") {
			t.Errorf("a word that holds a part of the URL is masked: %.300s", l)
		}
	}
	for _, where := range slices.Sorted(maps.Keys(said)) {
		text := said[where]
		for _, c := range chans {
			for _, name := range slices.Sorted(maps.Keys(c.secrets)) {
				if forms := fakeapi.Leaks(text, c.secrets[name]); len(forms) > 0 {
					t.Errorf("%s: the %s leaked, %s", where, name, strings.Join(forms, ", "))
				}
			}
		}
		records, bad := fakeapi.Records(text)
		for _, r := range records {
			if len(r) > 2048 {
				bad = append(bad, fmt.Sprintf("a line of %d bytes: %.200s…", len(r), r))
			}
			if where != "alert-failed.log" && !ours(r) {
				bad = append(bad, fmt.Sprintf("a line not ours: %.200q", r))
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s: %d faults; the first: %.300s", where, len(bad), bad[0])
		}
	}
	headers := 0
	for _, l := range strings.Split(string(failed), "\n") {
		if strings.HasPrefix(l, "--- ") {
			headers++
		}
	}
	assert.Equal(t, headers, len(chans), "one header line a channel that gave up:\n%.3000s", failed)
}

// ours says whether l is a line omega-monitor-notify writes.
func ours(l string) bool {
	for _, p := range []string{"not delivered: channel line ", "unreachable: channel line ", "delivered: channel line ", "nothing was sent", "omega-monitor-notify: "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return strings.Contains(l, "channel(s) good: ")
}
