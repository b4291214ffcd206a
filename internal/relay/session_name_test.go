package relay

import (
	"strings"
	"testing"
)

// TestSessionFor: the default state home's receiver runs in omega-relay;
// every other state home has a session of its own, the same each time, so
// that two on one multiplexer server each answer.
func TestSessionFor(t *testing.T) {
	env := func(name string) string { return map[string]string{"HOME": "/home/op"}[name] }
	if got := SessionFor("/home/op/.omega/monitor", env); got != Session {
		t.Errorf("the default home: %q, want %q", got, Session)
	}
	a, b := SessionFor("/srv/team-a", env), SessionFor("/srv/team-b", env)
	if a == b || !strings.HasPrefix(a, Session+"-") || a != SessionFor("/srv/team-a/", env) {
		t.Errorf("two homes: %q and %q", a, b)
	}
}
