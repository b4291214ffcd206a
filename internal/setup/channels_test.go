package setup

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBuilds()
	os.Exit(code)
}

// TestTestAlertToEachChannel: install --test-alert sends to each channel
// of the channels file too, and says per channel delivered or why not, and
// every fault of the file; the funnel's verdict stands beside them.
func TestTestAlertToEachChannel(t *testing.T) {
	t.Parallel()
	bin := testenv.Build(t, "../../cmd/omega-monitor-notify")
	var got []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, string(b))
	}))
	defer up.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusForbidden)
	}))
	defer down.Close()

	dir := t.TempDir()
	funnel := filepath.Join(dir, "ok.sh")
	assert.NilError(t, os.WriteFile(funnel, []byte("#!/bin/sh\ncat >/dev/null\n"), 0o700))
	env := testEnv(t, map[string]string{"OMEGA_MONITOR_ALERT_SEND": funnel})
	env.Environ = func() []string { return append(os.Environ(), "OMEGA_NOTIFY_TRIES=1") }
	env.FindNotify = func() (string, error) { return filepath.Join(bin, "omega-monitor-notify"), nil }
	assert.NilError(t, os.MkdirAll(env.State, 0o700))
	channels := filepath.Join(env.State, statedir.Channels)
	lines := "generic+" + up.URL + "/in/tokenABC\ngeneric+" + down.URL + "/in/tokenDEF\nwat://tokenGHI\n"
	assert.NilError(t, os.WriteFile(channels, []byte(lines), 0o600))

	out, err := install(t, env, Options{TestAlert: true})
	assert.Assert(t, errors.Is(err, ErrChannels), "%v\n%s", err, out)
	for _, want := range []string{
		"test alert delivered through " + funnel,
		"delivered: channel line 1 (generic, " + strings.TrimPrefix(up.URL, "http://") + ")",
		"not delivered: channel line 2 (generic, " + strings.TrimPrefix(down.URL, "http://") + "): ",
		"bad: " + channels + ":3: no service \"wat\"",
	} {
		assert.Assert(t, strings.Contains(out, want), "want %q in:\n%s", want, out)
	}
	for _, secret := range []string{"tokenABC", "tokenDEF", "tokenGHI"} {
		assert.Assert(t, !strings.Contains(out, secret), out)
	}
	assert.Equal(t, len(got), 1)
	assert.Assert(t, strings.Contains(got[0], "test alert from"), got[0])
	// A test keeps nothing: alert-failed.log is for the watchers' alerts.
	_, err = os.Stat(filepath.Join(env.State, statedir.FailedAlerts))
	assert.Assert(t, os.IsNotExist(err), "%v", err)
}
