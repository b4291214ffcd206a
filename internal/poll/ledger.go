package poll

import (
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/ledger"
	"github.com/omega-monitor/omega-monitor/probe"
)

// LoadLedger loads an echo ledger as a Masker: nil when there is nothing to
// mask, and with what could be read of a damaged file, whose error is to be
// said, not to stop the verdict.
func LoadLedger(path string) (classify.Masker, error) {
	// The classifier keeps MaxTailLines of a pane, and each text sent
	// after another puts at least one line below it: no older record can
	// still be on the screen it reads.
	m, err := ledger.LoadRecent(path, classify.MaxTailLines)
	if m == nil {
		return nil, err
	}
	return m, err
}

// ClassifyOptions are the classifier's inputs from the work probe's raw
// output (present says a probe ran) and the echo ledger.
func ClassifyOptions(work string, present bool, m classify.Masker) classify.Options {
	return classify.Options{Work: classify.WorkReading(probe.Read(work, present)), WorkPresent: present, Ledger: m}
}
