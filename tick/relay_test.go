package tick

import (
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/expect"
	"github.com/omega-monitor/omega-monitor/probe"
)

// TestGoldenQuestionRelay renders the alert for every QUESTION pane of the
// golden corpus and checks that it carries the question sentence and every
// option's label that the case's .want names, verbatim: an operator paged
// for a question must be able to read it.
func TestGoldenQuestionRelay(t *testing.T) {
	var panes []string
	for _, dir := range []string{"../golden/panes", "../golden/real"} {
		p, err := filepath.Glob(filepath.Join(dir, "*.pane"))
		if err != nil {
			t.Fatal(err)
		}
		panes = append(panes, p...)
	}
	questions := 0
	for _, p := range panes {
		w, err := expect.Read(strings.TrimSuffix(p, ".pane") + ".want")
		if err != nil {
			t.Fatal(err)
		}
		if w.State != "QUESTION" {
			continue
		}
		questions++
		name := filepath.Base(filepath.Dir(p)) + "/" + strings.TrimSuffix(filepath.Base(p), ".pane")
		t.Run(name, func(t *testing.T) {
			pane, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			r := classify.Classify(classify.ParseScreen(pane), classify.Options{Work: classify.WorkReading(probe.Read(w.Work, w.HasWork)), WorkPresent: w.HasWork})
			if r.State != classify.Question {
				t.Skipf("classified %v; TestGolden reports it", r.State)
			}
			if w.Question == "" && len(w.Options) == 0 && r.Dialog != nil && len(r.Dialog.Options) > 0 {
				t.Errorf("the .want names no question and no option, but the dialog has options; add question: and option: lines")
			}
			a := questionAlert("agent", time.Unix(0, 0).UTC(), r.Dialog)
			text := spaced(html.UnescapeString(strings.Join(a.HTML(), "\n")))
			if w.Question != "" && !strings.Contains(text, spaced(w.Question)) {
				t.Errorf("the alert does not carry the question %q:\n%s", w.Question, text)
			}
			for _, o := range w.Options {
				if !strings.Contains(text, spaced(o)) {
					t.Errorf("the alert does not carry the option %q:\n%s", o, text)
				}
			}
		})
	}
	if questions < 30 {
		t.Errorf("found %d QUESTION panes; the corpus holds more", questions)
	}
}

// spaced collapses every run of white space to one space.
func spaced(s string) string { return strings.Join(strings.Fields(s), " ") }
