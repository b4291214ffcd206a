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
	typing := Humans{Known: true, Clients: 1, Idle: 2 * time.Second}
	quiet := Humans{Known: true, Clients: 1, Idle: KeyboardQuiet}
	nobody := Humans{Known: true, Idle: time.Second} // no client shows the window
	tests := []struct {
		name     string
		stage    Stage
		judged   string
		kind     ActionKind
		fresh    string
		witness  *Witness
		humans   Humans
		want     string // a part of why; "" for go on
		collided bool
	}{
		{"same stalled screen", BeforeTyping, "GOLDEN-stalled-real", Nudge, "GOLDEN-stalled-real", nil, Humans{}, "", false},
		{"a dialog came up", BeforeTyping, "GOLDEN-stalled-real", Nudge, "GOLDEN-question-real", nil, Humans{}, "a dialog is live", false},
		{"another screen", BeforeTyping, "GOLDEN-stalled-real", Nudge, "adv-agent-ellipsis-linux", nil, Humans{}, "changed", false},
		{"the agent says busy", BeforeTyping, "GOLDEN-stalled-real", Nudge, "GOLDEN-stalled-real", busy, Humans{}, "busy", false},
		{"our text left in the box is not typed again", BeforeTyping, "adv-own-nudge-stuck-in-box", Nudge, "adv-own-nudge-stuck-in-box", nil, Humans{}, "input box holds", false},
		{"enter only on our text in the box", BeforeTyping, "adv-own-nudge-stuck-in-box", Enter, "adv-own-nudge-stuck-in-box", nil, Humans{}, "", false},
		{"enter only, box emptied", BeforeTyping, "adv-own-nudge-stuck-in-box", Enter, "GOLDEN-stalled-real", nil, Humans{}, "changed", false},
		{"typed: exactly our text", BeforeEnter, "GOLDEN-stalled-real", Nudge, "adv-own-nudge-stuck-in-box", nil, Humans{}, "", false},
		{"typed: the box is empty", BeforeEnter, "GOLDEN-stalled-real", Nudge, "GOLDEN-stalled-real", nil, Humans{}, "does not show our text", false},
		{"typed: a dialog is live", BeforeEnter, "GOLDEN-stalled-real", Nudge, "GOLDEN-question-real", nil, Humans{}, "a dialog is live", false},
		{"typed: the agent is busy", BeforeEnter, "GOLDEN-stalled-real", Nudge, "adv-own-nudge-stuck-in-box", busy, Humans{}, "busy", false},

		{"a human typed 2s ago: nothing typed", BeforeTyping, "GOLDEN-stalled-real", Nudge, "GOLDEN-stalled-real", nil, typing, "a human typed at the agent 2s ago", false},
		{"a human typed 2s ago: no Enter only", BeforeTyping, "adv-own-nudge-stuck-in-box", Enter, "adv-own-nudge-stuck-in-box", nil, typing, "a human typed", false},
		{"a human typed 5s ago: typed", BeforeTyping, "GOLDEN-stalled-real", Nudge, "GOLDEN-stalled-real", nil, quiet, "", false},
		{"input, but no client shows the window", BeforeTyping, "GOLDEN-stalled-real", Nudge, "GOLDEN-stalled-real", nil, nobody, "", false},
		{"the multiplexer cannot say: typed", BeforeTyping, "GOLDEN-stalled-real", Nudge, "GOLDEN-stalled-real", nil, Humans{Unknown: "no formats"}, "", false},
		{"typed: exactly our text, but a human typed since", BeforeEnter, "GOLDEN-stalled-real", Nudge, "adv-own-nudge-stuck-in-box", nil, typing, "as our text was typed", false},
		{"typed: exactly our text, quiet keyboard", BeforeEnter, "GOLDEN-stalled-real", Nudge, "adv-own-nudge-stuck-in-box", nil, quiet, "", false},
		{"typed: a human's draft, not ours, while they type", BeforeEnter, "GOLDEN-stalled-real", Nudge, "claude-b-draft", nil, typing, "our text and a human's", true},
		{"typed: a human's draft, not ours, keyboard quiet", BeforeEnter, "GOLDEN-stalled-real", Nudge, "claude-b-draft", nil, quiet, "not exactly our text", false},
		{"typed: empty box while a human types", BeforeEnter, "GOLDEN-stalled-real", Nudge, "GOLDEN-stalled-real", nil, typing, "does not show our text", false},
		{"enter only: more than our text is no collision of ours", BeforeEnter, "adv-own-nudge-stuck-in-box", Enter, "claude-b-draft", nil, typing, "not exactly our text", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			masked, raw := read(tt.fresh)
			got, collided := Confirm(tt.stage, pending(tt.judged, tt.kind), masked, raw, tt.witness, tt.humans)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) || collided != tt.collided {
				t.Errorf("Confirm = %q, collided %v; want %q, collided %v", got, collided, tt.want, tt.collided)
			}
		})
	}
	// A box holding our text and more after our typing: a human typed
	// too (Enter would send their text), whatever the clock says.
	masked, raw := read("adv-own-nudge-stuck-in-box")
	p := pending("GOLDEN-stalled-real", Nudge)
	p.Text = "continue"
	for _, h := range []Humans{{}, quiet, {Unknown: "no formats"}} {
		if got, collided := Confirm(BeforeEnter, p, masked, raw, nil, h); !collided || !strings.Contains(got, "our text and a human's") {
			t.Errorf("Confirm with more than our text in the box, humans %+v = %q, collided %v", h, got, collided)
		}
	}
}

// TestCollides: our text and more in the box is a collision, however the
// box wrapped it; exactly ours, or an empty box, is not; anything else is
// only while a human's input is fresh.
func TestCollides(t *testing.T) {
	const ours = "continue with the next step"
	typing := Humans{Known: true, Clients: 1}
	for _, c := range []struct {
		box  string
		h    Humans
		want bool
	}{
		{"", typing, false},
		{ours, typing, false},
		{"continue with the\n  next step", typing, false},
		{"wait, wrong branch\n" + ours, Humans{}, true},
		{ours + "wait", Humans{}, true},
		{"wait, wrong\nbranch continue with the next   step", Humans{}, true},
		{"[Pasted text #1 +2 lines]", Humans{}, false},
		{"[Pasted text #1 +2 lines]", typing, true},
		{"continue with the next", Humans{}, false},
	} {
		if got := Collides(c.box, ours, c.h); got != c.want {
			t.Errorf("Collides(%q, humans %+v) = %v, want %v", c.box, c.h, got, c.want)
		}
	}
}

func TestRefund(t *testing.T) {
	s := State{}
	s.Budget.Used = 1
	if got := s.Refund("").Refund("").Budget.Used; got != 0 {
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
		w, err := probe.FreshestWitness(files, "a:@0.%0", now)
		if err != nil || w.Status != "busy" {
			t.Errorf("FreshestWitness = %+v, %v; want the fresh busy one", w, err)
		}
	}
	if _, err := probe.FreshestWitness([][]byte{stale}, "a:@0.%0", now); err == nil {
		t.Error("a stale file counted")
	}
}
