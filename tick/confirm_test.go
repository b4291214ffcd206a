package tick

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/ledger"
	"github.com/omega-monitor/omega-monitor/probe"
)

func goldenPane(t *testing.T, name string) *classify.Screen {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "golden", "panes", name+".pane"))
	if err != nil {
		t.Fatal(err)
	}
	return classify.ParseScreen(data)
}

// TestConfirm checks fresh captures of golden panes before typing and
// before Enter: only the judged screen, unchanged, with an empty box (or
// exactly our text for Enter) lets the nudge go on.
func TestConfirm(t *testing.T) {
	const ours = "continue with the next failing test; do not stop until the work probe reads 0"
	echo := ledger.NewMatcher(ours)
	read := func(name string) (masked, raw classify.Result) {
		s := goldenPane(t, name)
		return classify.Classify(s, classify.Options{Ledger: echo, Work: classify.WorkReading(probe.Count(5)), WorkPresent: true}),
			classify.Classify(s, classify.Options{Work: classify.WorkReading(probe.Count(5)), WorkPresent: true})
	}
	pending := func(name string, kind ActionKind) Pending {
		m, _ := read(name)
		return NewPending("001.nudge", Action{Kind: kind, Text: ours}, m, time.Now())
	}
	busy := &Witness{Status: "busy"}
	tests := []struct {
		name    string
		stage   Stage
		judged  string
		kind    ActionKind
		fresh   string
		witness *Witness
		want    string // a part of why; "" for go on
	}{
		{"same stalled screen", BeforeTyping, "GOLDEN-stalled-real", Nudge, "GOLDEN-stalled-real", nil, ""},
		{"a dialog came up", BeforeTyping, "GOLDEN-stalled-real", Nudge, "GOLDEN-question-real", nil, "a dialog is live"},
		{"another screen", BeforeTyping, "GOLDEN-stalled-real", Nudge, "adv-agent-ellipsis-linux", nil, "changed"},
		{"the agent says busy", BeforeTyping, "GOLDEN-stalled-real", Nudge, "GOLDEN-stalled-real", busy, "busy"},
		{"our text left in the box is not typed again", BeforeTyping, "adv-own-nudge-stuck-in-box", Nudge, "adv-own-nudge-stuck-in-box", nil, "input box holds"},
		{"enter only on our text in the box", BeforeTyping, "adv-own-nudge-stuck-in-box", Enter, "adv-own-nudge-stuck-in-box", nil, ""},
		{"enter only, box emptied", BeforeTyping, "adv-own-nudge-stuck-in-box", Enter, "GOLDEN-stalled-real", nil, "changed"},
		{"typed: exactly our text", BeforeEnter, "GOLDEN-stalled-real", Nudge, "adv-own-nudge-stuck-in-box", nil, ""},
		{"typed: the box is empty", BeforeEnter, "GOLDEN-stalled-real", Nudge, "GOLDEN-stalled-real", nil, "does not show our text"},
		{"typed: a dialog is live", BeforeEnter, "GOLDEN-stalled-real", Nudge, "GOLDEN-question-real", nil, "a dialog is live"},
		{"typed: the agent is busy", BeforeEnter, "GOLDEN-stalled-real", Nudge, "adv-own-nudge-stuck-in-box", busy, "busy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			masked, raw := read(tt.fresh)
			got := Confirm(tt.stage, pending(tt.judged, tt.kind), masked, raw, tt.witness)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("Confirm = %q, want %q", got, tt.want)
			}
		})
	}
	// A box holding more than our text is a human's: Enter would send it.
	masked, raw := read("adv-own-nudge-stuck-in-box")
	p := pending("GOLDEN-stalled-real", Nudge)
	p.Text = "continue"
	if got := Confirm(BeforeEnter, p, masked, raw, nil); !strings.Contains(got, "not exactly our text") {
		t.Errorf("Confirm with more than our text in the box = %q", got)
	}
}

func TestRefund(t *testing.T) {
	s := State{}
	s.Budget.Used = 1
	if got := s.Refund().Refund().Budget.Used; got != 0 {
		t.Errorf("Refund twice from 1 = %d, want 0", got)
	}
}

// TestFreshestWitness: a stale file for the same pane does not hide a fresh
// one, whatever the order; files for other panes are passed over.
func TestFreshestWitness(t *testing.T) {
	now := time.UnixMilli(1_000_000_000)
	stale := []byte(`{"tmux":"a:@0.%0","status":"idle","updatedAt":1}`)
	fresh := []byte(`{"tmux":"a:@0.%0","status":"busy","updatedAt":999999000}`)
	other := []byte(`{"tmux":"b:@0.%0","status":"idle","updatedAt":999999500}`)
	for _, files := range [][][]byte{{stale, fresh, other}, {other, fresh, stale}} {
		w, err := FreshestWitness(files, "a:@0.%0", now)
		if err != nil || w.Status != "busy" {
			t.Errorf("FreshestWitness = %+v, %v; want the fresh busy one", w, err)
		}
	}
	if _, err := FreshestWitness([][]byte{stale}, "a:@0.%0", now); err == nil {
		t.Error("a stale file counted")
	}
}
