package render

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/board/boardfix"
)

// TestAudits: the board shows when each audit last ran and what it found,
// read from audits/NAME/last.json as the audit command writes it; a record
// it cannot read degrades the census and is named.
func TestAudits(t *testing.T) {
	root := t.TempDir()
	ran := now.Add(-2*time.Hour - 5*time.Minute)
	boardfix.WriteDir(t, filepath.Join(root, "audits"), "shop", map[string]string{
		"last.json": `{"ran_at":"` + ran.Format(time.RFC3339) + `","dir":"/src/shop","agent":"claude","dimensions":3,"findings":2,"clean":1,"rejected":2,"failed":0,` +
			`"violations":[],"fallback":false,"summary":"3 dimensions: 2 findings in 1, 1 clean, 1 without a verdict; 2 rejected","report":"/h/audits/shop/report-1.md","delivered":true}`,
	})
	boardfix.WriteDir(t, filepath.Join(root, "audits"), "web", map[string]string{
		"last.json": `{"ran_at":"` + ran.Format(time.RFC3339) + `","agent":"codex","violations":["changed: a.go"],"summary":"4 dimensions: 0 findings in 0, 4 clean, 0 without a verdict; 0 rejected","report":"/r.md"}`,
	})
	boardfix.WriteDir(t, filepath.Join(root, "audits"), "broken", map[string]string{"last.json": `{"ran_at":`})
	boardfix.WriteDir(t, filepath.Join(root, "audits"), "first-run", map[string]string{"report-x.md": "running"})

	f, err := board.Census(root, now, board.Options{Procs: boardfix.Procs{}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range f.Audits {
		names = append(names, a.Name)
	}
	if diff := cmp.Diff([]string{"shop", "web"}, names); diff != "" {
		t.Errorf("audits mismatch (-want +got):\n%s", diff)
	}
	if !f.Degraded || len(f.Errors) != 1 || !strings.HasSuffix(f.Errors[0].Path, filepath.Join("broken", "last.json")) {
		t.Errorf("errors: %+v", f.Errors)
	}
	if len(f.Watchers) != 0 {
		t.Errorf("an audit was taken for a watcher: %+v", f.Watchers)
	}
	out := Compact(f)
	for _, want := range []string{
		"audit shop  ran 02:05:00 ago (claude)  3 dimensions: 2 findings in 1, 1 clean, 1 without a verdict; 2 rejected  /h/audits/shop/report-1.md\n",
		"audit web  ran 02:05:00 ago (codex)  READ-ONLY VIOLATED (1 changed); 4 dimensions",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("compact form lacks %q:\n%s", want, out)
		}
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"audits":[{"name":"shop","ran_at":"`) {
		t.Errorf("JSON: %s", b)
	}
	if err := os.RemoveAll(filepath.Join(root, "audits")); err != nil {
		t.Fatal(err)
	}
	if f, _ := board.Census(root, now, board.Options{Procs: boardfix.Procs{}}); f.Audits != nil || f.Degraded {
		t.Errorf("no audits dir: %+v", f)
	}
}
