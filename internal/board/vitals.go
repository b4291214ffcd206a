package board

import (
	"time"

	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// vitalsWindow is how far back the agent's own activity is summed.
const vitalsWindow = time.Hour

// vitalsOf sums a vitals record's minutes over the hour before now; nil,
// and why, when its record could not be read, or was not read for that
// long (the counts would be of a time the board does not show).
func vitalsOf(r statedir.VitalsRecord, now time.Time) (*Vitals, string) {
	switch {
	case r.Error != "":
		return nil, printable.String(r.Error)
	case r.At.IsZero() || now.Sub(r.At) > vitalsWindow:
		return nil, "the agent's record was not read in the last hour"
	}
	v := &Vitals{WindowS: int(vitalsWindow / time.Second), Agent: printable.String(r.Agent),
		Source: printable.String(r.Source), ReadAt: r.At, Behind: r.Cursor.Behind, Gap: r.Cursor.Gap}
	from, to := now.Add(-vitalsWindow).Unix()/60, now.Unix()/60
	for _, m := range r.Minutes {
		if m.Minute <= from || m.Minute > to {
			continue
		}
		v.Tools += max(m.Tools, 0)
		v.Reason += max(m.Reason, 0)
		v.Text += max(m.Text, 0)
		v.Wait += max(m.Wait, 0)
	}
	return v, ""
}
