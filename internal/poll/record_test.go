package poll

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCompactRecordReadsTheSame: an alert's record compacted says of each
// channel what it said before (its failures in a row, the last's time and
// why, whether it has the alert, gave up or is being sent to), in a few
// lines; and a day of tries to a channel that is down, marked as the
// deliverer marks them, keeps the record readable and small.
func TestCompactRecordReadsTheSame(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "aaaa sending %d\naaaa failed %d HTTP 503 try %d\n", 1000+i*30, 1000+i*30+5, i)
		if i == 10 {
			b.WriteString("bbbb sending 1300\nbbbb delivered 1301\nfunnel done\n")
		}
	}
	b.WriteString("cccc failed 900 refused\ncccc sending 990\naaaa sending 99999\n")
	before := b.String()
	after := compactRecord(before)
	opt := cmp.AllowUnexported(channelState{})
	read := func(text string) map[string]channelState {
		path := filepath.Join(t.TempDir(), "r.sent")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return readChannelStates(path)
	}
	if diff := cmp.Diff(read(before), read(after), opt); diff != "" {
		t.Errorf("the compacted record reads otherwise (-before +after):\n%s\n%s", diff, after)
	}
	if n := strings.Count(after, "\n"); n > 6 {
		t.Errorf("compacted to %d lines:\n%s", n, after)
	}
	if diff := cmp.Diff(after, compactRecord(after)); diff != "" {
		t.Errorf("compacting again changes it (-once +twice):\n%s", diff)
	}
	if st := read(after)["aaaa"]; st.fails != 3000 || !st.sending || st.why != "HTTP 503 try 2999" {
		t.Errorf("aaaa reads %+v", st)
	}

	dv := &deliverer{}
	record := filepath.Join(t.TempDir(), "x.alert.sent")
	at := time.Unix(1000, 0)
	for range 3000 {
		at = at.Add(30 * time.Second)
		if err := dv.mark(record, "aaaa", "sending", at, ""); err != nil {
			t.Fatal(err)
		}
		if err := dv.mark(record, "aaaa", "failed", at, strings.Repeat("a reason from the server ", 20)); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(record); err != nil || fi.Size() > compactAt+1024 {
		t.Fatalf("a day of tries: %v, %d bytes", err, fi.Size())
	}
	if st := readChannelStates(record)["aaaa"]; st.fails != 3000 || st.terminal {
		t.Errorf("a day of tries reads %+v", st)
	}
}
