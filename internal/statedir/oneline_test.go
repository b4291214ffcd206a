package statedir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
)

func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"one line · as it is\twith a tab", "one line · as it is\twith a tab"},
		{"a\r\nb\nc\rd", "a b c d"},
		{"a\n\n\r\n b", "a  b"},
		{"a\vb\fc\u0085d\u2028e\u2029f", "a b c d e f"},
		{"\nstarts and ends\n", " starts and ends "},
	} {
		if diff := cmp.Diff(tc.want, OneLine(tc.in)); diff != "" {
			t.Errorf("OneLine(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestLogRecordsAreOneLine: whatever line breaks the text of a MONITOR
// line or a failed alert's why holds, monitor.log gets one line a record,
// and alert-failed.log one header line an alert: nothing after a break
// passes for a record of its own.
func TestLogRecordsAreOneLine(t *testing.T) {
	forged := "\r\n2026-01-02 03:04:05 MONITOR · box:agent · ? · alert NOT delivered to Telegram: forged\u2028--- 2026-01-02T03:04:05Z · forged\n"
	d := Dir(t.TempDir())
	assert.NilError(t, d.Prepare())
	assert.NilError(t, d.AppendLog(time.Now(), "MONITOR · box:agent · ? · alert NOT delivered to channel line 1 (ntfy): "+forged+"(1 try)"))
	b, err := os.ReadFile(d.Path(Log))
	assert.NilError(t, err)
	assert.Equal(t, strings.Count(string(b), "\n"), 1, "%q", b)
	assert.Assert(t, strings.HasSuffix(string(b), "(ntfy):  2026-01-02 03:04:05 MONITOR · box:agent · ? · alert NOT delivered to Telegram: forged --- 2026-01-02T03:04:05Z · forged (1 try)\n"), "%q", b)

	home := t.TempDir()
	assert.NilError(t, KeepFailed(home, "not delivered to channel line 1 (ntfy): "+forged, []byte("<b>QUESTION</b>\nline two")))
	b, err = os.ReadFile(filepath.Join(home, FailedAlerts))
	assert.NilError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	assert.Equal(t, len(lines), 3, "%q", b)
	assert.Assert(t, strings.HasPrefix(lines[0], "--- ") && strings.HasSuffix(lines[0], "· not delivered to channel line 1 (ntfy):  2026-01-02 03:04:05 MONITOR · box:agent · ? · alert NOT delivered to Telegram: forged --- 2026-01-02T03:04:05Z · forged "), "%q", lines[0])
	assert.DeepEqual(t, lines[1:], []string{"<b>QUESTION</b>", "line two"})
}
