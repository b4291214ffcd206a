package poll

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/answer"
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/tick"
)

// TestDescribedAgentsProcess: the process of an agent an operator
// describes with its programs is the one keys of ours would go to, and
// its screen back ends a half-typed answer's hold; without the
// description's programs no process is its. Its questions still get no
// buttons: package answer reads no described agent's menus.
func TestDescribedAgentsProcess(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "classify", "testdata", "tern.rules.json"))
	if err != nil {
		t.Fatal(err)
	}
	local, err := classify.ParseLocal(data, "tern.rules.json")
	if err != nil {
		t.Fatal(err)
	}
	tern := tick.Process{PID: 41, Start: "7", Comm: "tern", Args: []string{"/opt/tern/bin/tern"}}
	fg := tick.Foreground{Known: true, Procs: []tick.Process{{PID: 40, Start: "6", Comm: "bash", Args: []string{"-bash"}}, tern}}
	screen := classify.Result{Agent: "Tern", State: classify.Question}

	got, why := offerGate(screen, classify.Programs(local, "Tern"), fg, nil, nil)
	if diff := cmp.Diff(tern, got); diff != "" || why != "" {
		t.Errorf("with its programs: refused (%q), or another process (-want +got):\n%s", why, diff)
	}
	if _, why := offerGate(screen, classify.Programs(nil, "Tern"), fg, nil, nil); !strings.Contains(why, "not Tern") {
		t.Errorf("without its description: %q, want its process not found", why)
	}

	stalled := classify.Result{Agent: "Tern", State: classify.Stalled}
	next := tick.State{HalfTyped: &tick.HalfTyped{Keys: []string{"2"}}}
	if note := halfTypedOver(&next, stalled, "", fg, classify.Programs(local, "Tern")); note == "" || next.HalfTyped != nil {
		t.Errorf("its own screen back with its process: note %q, hold %+v", note, next.HalfTyped)
	}
	next = tick.State{HalfTyped: &tick.HalfTyped{Keys: []string{"2"}}}
	if note := halfTypedOver(&next, stalled, "", fg, classify.Programs(nil, "Tern")); note != "" || next.HalfTyped == nil {
		t.Errorf("without its programs the hold ended: %q", note)
	}

	asks := classify.ClassifyText("Tern v0.3 · ~/proj\n\n» clean the build\n  Allow tern to run `rm -rf build`?\n  [y] yes   [n] no   [a] always\n  y/n/a · esc to cancel\n", classify.Options{Local: local})
	if asks.State != classify.Question || asks.Agent != "Tern" {
		t.Fatalf("Tern's question reads %s, %q's", asks.State, asks.Agent)
	}
	if _, err := answer.Inspect(asks); err == nil {
		t.Errorf("a described agent's question has a menu to answer")
	}
}
