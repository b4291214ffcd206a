package hosts

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/testfleet"
)

// serve runs what read-watcher runs over home for q of watcher, as a host
// does for another board, and returns what it printed.
func serve(home string, now time.Time, watcher string, q Query) (string, error) {
	var out bytes.Buffer
	err := ServeWatcher(&out, home, watcher, q, now)
	return out.String(), err
}

// TestServeWatcherRoundTrip: what read-watcher prints of a watcher, read
// back as another board reads it, is what this machine's board reads of
// it itself, for every kind.
func TestServeWatcherRoundTrip(t *testing.T) {
	home := testfleet.Home(t)
	tests := []struct {
		watcher string
		q       Query
	}{
		{"monitor-proj", Query{Kind: History, Days: 1}},
		{"proj", Query{Kind: Explain}},
		{"proj", Query{Kind: Logs, Lines: 2}},
	}
	for _, tt := range tests {
		out, err := serve(home, testfleet.Now, tt.watcher, tt.q)
		if err != nil {
			t.Fatalf("read-watcher %v of %s: %v", tt.q, tt.watcher, err)
		}
		got, err := DecodeRecords([]byte(out), tt.q)
		if err != nil {
			t.Fatalf("read-watcher %v of %s: %v\n%s", tt.q, tt.watcher, err, out)
		}
		want, err := Local(home, "proj", tt.q, testfleet.Now)
		assert.NilError(t, err)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("read-watcher %v of %s, read back (-want +got):\n%s", tt.q, tt.watcher, diff)
		}
	}
}

// TestReadFlagsQuery: read-watcher's flags ask one query of one watcher,
// within its bounds, or say what is wrong.
func TestReadFlagsQuery(t *testing.T) {
	tests := []struct {
		args    []string
		want    Query
		wantErr string
	}{
		{[]string{"--history", "1", "proj"}, Query{Kind: History, Days: 1}, ""},
		{[]string{"--logs", "2", "proj"}, Query{Kind: Logs, Lines: 2}, ""},
		{[]string{"proj"}, Query{}, "give one of --history DAYS, --explain, --logs N"},
		{[]string{"--explain", "--logs", "3", "proj"}, Query{}, "give one of"},
		{[]string{"--explain"}, Query{}, "takes one watcher, got 0"},
		{[]string{"--explain", "a", "b"}, Query{}, "takes one watcher, got 2"},
		{[]string{"--history", "31", "proj"}, Query{}, "days must be 1 to 30, got 31"},
		{[]string{"--logs", "-1", "proj"}, Query{}, "lines must be 1 to 2000, got -1"},
	}
	for _, tt := range tests {
		var f ReadFlags
		fs := f.FlagSet()
		assert.NilError(t, fs.Parse(tt.args))
		q, err := f.Query(fs.Args())
		if tt.wantErr != "" {
			assert.ErrorContains(t, err, tt.wantErr, "read-watcher %q", tt.args)
			continue
		}
		assert.NilError(t, err, "read-watcher %q", tt.args)
		assert.Equal(t, q, tt.want, "read-watcher %q", tt.args)
	}
}

// TestServeWatcherNoSuchWatcher: a name that is no watcher of this
// machine's, or that leaves the state home, is refused.
func TestServeWatcherNoSuchWatcher(t *testing.T) {
	home := testfleet.Home(t)
	for _, w := range []string{"nobody", "../monitor-proj"} {
		out, err := serve(home, testfleet.Now, w, Query{Kind: Explain})
		assert.ErrorContains(t, err, fmt.Sprintf("no watcher %q", w))
		assert.Equal(t, out, "")
	}
}

// TestServeWatcherBoundsItsHistory: an honest host sends the newest of a
// long history that fit its room, and says how many it left out, so that
// its answer is read.
func TestServeWatcherBoundsItsHistory(t *testing.T) {
	home := testfleet.Home(t)
	var h strings.Builder
	const events = 6000
	for i := range events {
		fmt.Fprintf(&h, `{"ts":%q,"target":"proj","event":"failure","state":"STALLED","line":"#%d %s"}`+"\n",
			testfleet.Now.Add(-time.Hour).Format(time.RFC3339), i, strings.Repeat("x", 1000))
	}
	assert.NilError(t, os.WriteFile(filepath.Join(home, "monitor-proj", "history.jsonl"), []byte(h.String()), 0o600))
	out, err := serve(home, testfleet.Now, "proj", Query{Kind: History, Days: 1})
	assert.NilError(t, err)
	assert.Assert(t, len(out) <= historyRoom+1024, "%d bytes", len(out))
	r, err := DecodeRecords([]byte(out), Query{Kind: History, Days: 1})
	assert.NilError(t, err)
	assert.Assert(t, r.LeftOut > 0 && r.LeftOut+len(r.History) == events, "left out %d, kept %d", r.LeftOut, len(r.History))
	assert.Assert(t, strings.HasPrefix(r.History[len(r.History)-1]["line"].(string), fmt.Sprintf("#%d ", events-1)))
}

// TestDecodeRecordsHostile: whatever a host answers is read as records of
// the kind asked, or refused in one line; its escapes never pass.
func TestDecodeRecordsHostile(t *testing.T) {
	logs := Query{Kind: Logs, Lines: 2}
	tests := []struct {
		name    string
		in      string
		q       Query
		wantErr string
	}{
		{"nothing", "", logs, "not a watcher's records: EOF"},
		{"an array", `[1]`, logs, "not a JSON object"},
		{"torn", `{"watcher":"monitor-a","log":["x"`, logs, "unexpected EOF"},
		{"two objects", `{"watcher":"monitor-a"}{}`, logs, "more follows its object"},
		{"a path for a name", `{"watcher":"../../etc/passwd","log":[]}`, logs, `names the watcher "../../etc/passwd"`},
		{"a name not a watcher's", `{"watcher":"root","log":[]}`, logs, `names the watcher "root"`},
		{"more lines than asked", `{"watcher":"monitor-a","log":["1","2","3"]}`, logs, "3 log lines, 2 asked"},
		{"records not asked", `{"watcher":"monitor-a","log":["1"],"state":{}}`, logs, "records not asked for"},
		{"no verdict", `{"watcher":"monitor-a"}`, Query{Kind: Explain}, "no verdict"},
		{"a verdict of another type", `{"watcher":"monitor-a","state":{"state":7}}`, Query{Kind: Explain}, "not a watcher's records: json"},
		{"history not objects", `{"watcher":"monitor-a","history":["x"]}`, Query{Kind: History, Days: 1}, "not a watcher's records"},
		{"too many events", `{"watcher":"monitor-a","history":[` + strings.Repeat("{},", maxEvents) + `{}]}`, Query{Kind: History, Days: 1}, "more than 20000: not read"},
		{"too big", `{"watcher":"monitor-a","log":["` + strings.Repeat("x", MaxAnswer) + `"]}`, logs, "larger than 4 MiB"},
	}
	for _, tt := range tests {
		_, err := DecodeRecords([]byte(tt.in), tt.q)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line with %q", tt.name, err, tt.wantErr)
		}
	}

	// Escapes and invisible characters in the texts are gone, and every
	// text is cut to its bound.
	in := "{\"watcher\":\"monitor-a\\u001b]0;x\\u0007\",\"log\":[\"ok \\u001b]52;c;ZWNobw==\\u0007\\u202egone\",\"" + strings.Repeat("y", 3*maxString) + "\"]}"
	r, err := DecodeRecords([]byte(in), logs)
	assert.NilError(t, err)
	assert.Assert(t, !strings.ContainsAny(strings.Join(r.Log, ""), "\x1b\x07\u202e"), "%q", r.Log[0])
	assert.Equal(t, r.Watcher, "monitor-a")
	assert.Assert(t, len(r.Log[1]) <= maxString+len("…"), "%d bytes", len(r.Log[1]))
}

// TestWatcherAsksOnlyTheBoardsHosts: a watcher of a host the board does
// not list, or a name that is no watcher's, is refused before anything
// runs (no ssh: the reader's ssh config does not exist).
func TestWatcherAsksOnlyTheBoardsHosts(t *testing.T) {
	b := &Board{Root: testfleet.Home(t), Hosts: []string{"box"},
		Reader: Reader{SSH: sshConfigThatFails(t)}}
	tests := []struct{ ref, wantErr string }{
		{"gpu/monitor-x", `"gpu" is not a host of this board`},
		{"../monitor-x", `no watcher "../monitor-x"`},
		{"/monitor-x", `"" is not a host of this board`},
		{"box/../../etc", `no watcher "../../etc" on box`},
		{"box/$(touch x)", `no watcher "$(touch x)" on box`},
		{"box/-oProxyCommand=x", `no watcher "-oProxyCommand=x" on box`},
	}
	for _, tt := range tests {
		_, err := b.Watcher(context.Background(), tt.ref, Query{Kind: Explain}, testfleet.Now)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("Watcher(%q): %v, want an error with %q", tt.ref, err, tt.wantErr)
		}
	}
	r, err := b.Watcher(context.Background(), "proj", Query{Kind: Logs, Lines: 1}, testfleet.Now)
	assert.NilError(t, err)
	assert.Equal(t, r.Name(), "monitor-proj")
}

// sshConfigThatFails is ssh's options with a config file that does not
// exist: an ssh run with them fails at once, and says so.
func sshConfigThatFails(t *testing.T) coord.SSH {
	return coord.SSH{Config: filepath.Join(t.TempDir(), "none")}
}
