package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
)

func runIt(t *testing.T, stdin string, getenv func(string) string, args ...string) (code int, out, errs string) {
	t.Helper()
	var o, e strings.Builder
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	code = run(args, strings.NewReader(stdin), &o, &e, getenv)
	return code, o.String(), e.String()
}

// TestCheckSaysEachBadLineOnce: check names each bad line by its number,
// quotes none of its secrets, and counts the good ones.
func TestCheckSaysEachBadLineOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "channels")
	text := strings.Join([]string{
		"# mine",
		"ntfy://ntfy.example.com/alerts",
		"",
		"nosuch://SECRETtok@host",
		"just words SECRETword",
		"ntfy://ntfy.example.com/alerts",
		"discord://SECRETdiscord@123456",
		"generic+https://hooks.example.com/in/SECRETpath?x=SECRETq",
		"generic+http://[::1:bad/SECRETv6",
		"logger://",
	}, "\n")
	assert.NilError(t, os.WriteFile(file, []byte(text), 0o600))
	code, out, errs := runIt(t, "", nil, "check", file)
	assert.Equal(t, code, 1, errs)
	assert.Assert(t, !strings.Contains(out+errs, "SECRET"), out+errs)
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		line, _, _ := strings.Cut(l, ": ")
		got = append(got, line)
	}
	want := []string{file + ":4", file + ":5", file + ":6", file + ":9", file + ":10", file, file,
		"nothing was sent (check --test sends a test message to each channel)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("check's lines (-want +got):\n%s\n%s", diff, out)
	}
	assert.Assert(t, strings.Contains(out, "3 channel(s) good: channel line 2 (ntfy, ntfy.example.com); channel line 7 (discord); channel line 8 (generic, hooks.example.com)"), out)
	assert.Assert(t, strings.Contains(out, "the same channel as line 2"), out)
}

// TestCheckRefusesAFileOthersRead: the file holds secrets, so it is the
// user's own, 0600, or refused whole, saying the fix.
func TestCheckRefusesAFileOthersRead(t *testing.T) {
	file := filepath.Join(t.TempDir(), "channels")
	assert.NilError(t, os.WriteFile(file, []byte("ntfy://ntfy.example.com/a\n"), 0o640))
	code, _, errs := runIt(t, "", nil, "check", file)
	assert.Equal(t, code, 1)
	assert.Assert(t, strings.Contains(errs, "chmod 600 "+file), errs)
	assert.NilError(t, os.Chmod(file, 0o600))
	code, out, errs := runIt(t, "", nil, "check", file)
	assert.Equal(t, code, 0, out+errs)
	code, _, errs = runIt(t, "", nil, "check", filepath.Join(t.TempDir(), "none"))
	assert.Equal(t, code, 1, errs)
}

// TestSendUsage: bad arguments and settings are refused, exit 2.
func TestSendUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"send"}, {"send", "--home"}, {"send", "--home", "x", "extra"}, {"check"}, {"check", "a", "b"}, {"bogus"}} {
		code, _, _ := runIt(t, "", nil, args...)
		assert.Equal(t, code, 2, "%q", args)
	}
	env := func(k string) string {
		if k == "OMEGA_NOTIFY_TRIES" {
			return "0"
		}
		return ""
	}
	code, _, errs := runIt(t, "", env, "send", "--home", t.TempDir())
	assert.Equal(t, code, 2)
	assert.Assert(t, strings.Contains(errs, "OMEGA_NOTIFY_TRIES"), errs)
	// No channels file: nothing to do.
	code, out, errs := runIt(t, "msg", nil, "send", "--home", t.TempDir())
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, out, "")
}

// TestCheckSendsNothingUnlessAskedToTest: check reaches no service (the
// webhook is sent nothing, the password of a Matrix line goes nowhere);
// check --test sends a test message to each good channel and says the one
// that cannot be reached apart from the malformed line.
func TestCheckSendsNothingUnlessAskedToTest(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	refused := ln.Addr().String()
	ln.Close()
	file := filepath.Join(t.TempDir(), "channels")
	text := strings.Join([]string{
		"generic+" + srv.URL + "/in/SECRETok",
		"generic+http://" + refused + "/in/SECRETdown",
		"matrix://bot:SECRETpw@" + strings.TrimPrefix(srv.URL, "http://") + "/?rooms=!r:example.com&disableTLS=yes",
		"nosuch://SECRETbad@host",
	}, "\n")
	assert.NilError(t, os.WriteFile(file, []byte(text), 0o600))

	code, out, errs := runIt(t, "", nil, "check", file)
	assert.Equal(t, code, 1, errs)
	assert.Equal(t, hits.Load(), int32(0), "check reached the service")
	assert.Assert(t, strings.Contains(out, file+":4: no service") && strings.Contains(out, "3 channel(s) good") &&
		strings.Contains(out, "nothing was sent"), out)

	code, out, _ = runIt(t, "", func(k string) string {
		if k == "OMEGA_NOTIFY_TIMEOUT" {
			return "2"
		}
		return ""
	}, "check", "--test", file)
	assert.Equal(t, code, 1)
	assert.Assert(t, strings.Contains(out, "delivered: channel line 1 (generic, "+strings.TrimPrefix(srv.URL, "http://")+")"), out)
	assert.Assert(t, strings.Contains(out, "unreachable: channel line 2 (generic, "+refused+"): ") && strings.Contains(out, "connection refused"), out)
	assert.Assert(t, strings.Contains(out, file+":4: no service"), out)
	assert.Assert(t, !strings.Contains(out, "SECRET"), out)
}
