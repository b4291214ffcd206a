package setup

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHookEventsAsBefore: the events install --hooks writes each agent's
// hook under, now its description's, are those it wrote when they were
// this package's lists.
func TestHookEventsAsBefore(t *testing.T) {
	before := map[string][]string{
		HookClaude:   {"Notification", "PermissionRequest", "Stop", "StopFailure"},
		HookCodex:    {"PermissionRequest", "Stop", "Interrupt"},
		HookGemini:   {"Notification", "AfterAgent"},
		HookOpenCode: {"permission.asked", "permission.updated", "question.asked", "session.idle", "session.error"},
	}
	specs := hookSpecs(t.TempDir(), func(string) string { return "" })
	for _, agent := range HookAgents {
		if diff := cmp.Diff(before[agent], specs[agent].events); diff != "" {
			t.Errorf("%s's events (-before +now):\n%s", agent, diff)
		}
	}
}
