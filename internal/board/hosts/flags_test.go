package hosts

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

func TestFlagsClock(t *testing.T) {
	noEnv := func(string) string { return "" }
	tests := []struct {
		args    []string
		want    time.Duration
		wantErr string
	}{
		{nil, Clock, ""},
		{[]string{"--hosts-timeout", "20s"}, 20 * time.Second, ""},
		{[]string{"--hosts-timeout", "60"}, time.Minute, ""},
		{[]string{"--hosts-timeout", "1s", "--hosts", "box"}, time.Second, ""},
		{[]string{"--hosts-timeout", "500ms"}, 0, "--hosts-timeout must be 1s to 60s, got 500ms"},
		{[]string{"--hosts-timeout", "61s"}, 0, "--hosts-timeout must be 1s to 60s, got 1m1s"},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("status", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f := BindFlags(fs)
		assert.NilError(t, fs.Parse(tt.args))
		b, err := f.Open(t.TempDir(), noEnv)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: error %v, want %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		assert.NilError(t, err)
		assert.Equal(t, b.Reader.clock(), tt.want, "%q", tt.args)
	}
}
