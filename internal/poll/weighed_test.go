package poll

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/probe"
	"github.com/omega-monitor/omega-monitor/tick"
)

// TestWeighedSaid: --explain says why a witness found for the pane is not
// weighed, and says nothing more of one that is.
func TestWeighedSaid(t *testing.T) {
	for _, tt := range []struct {
		agent string
		w     *tick.Witness
		want  string
	}{
		{"Qwen Code", &tick.Witness{Kind: probe.QwenChat}, "says busy"},
		{"Qwen Code", &tick.Witness{Kind: probe.CodexLog}, "says busy; not weighed: it is a codex-log file, and Qwen Code's description names qwen-chat"},
		{"Gemini CLI", &tick.Witness{Kind: probe.CopilotEvents}, "says busy; not weighed: it is a copilot-events file, and Gemini CLI's description names none"},
		{"", &tick.Witness{Kind: probe.CodexLog}, "says busy"},
		{"Qwen Code", nil, "says busy"},
	} {
		if diff := cmp.Diff(tt.want, weighedSaid(nil, tt.agent, tt.w, "says busy")); diff != "" {
			t.Errorf("%s, %+v (-want +got):\n%s", tt.agent, tt.w, diff)
		}
	}
}
