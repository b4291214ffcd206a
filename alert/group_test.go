package alert

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// TestGroupPageNamesEveryPane: twenty panes of one limit fit one message
// that names each, with the limit's words and its reset.
func TestGroupPageNamesEveryPane(t *testing.T) {
	g := GroupPage{Cause: Cause{Kind: CauseUsageLimit, Agent: "Claude Code", Limit: "You've hit your 5-hour limit · resets 9:02am (UTC)", Reset: "9:02am (UTC)"},
		Event: GroupStopped, Time: time.Date(2026, 12, 1, 9, 1, 0, 0, time.UTC)}
	for i := range 20 {
		g.Members = append(g.Members, GroupMember{Target: fmt.Sprintf("build-host:agent-%02d", i)})
	}
	msgs := g.HTML()
	assert.Equal(t, len(msgs), 1, "%q", msgs)
	for _, m := range g.Members {
		assert.Assert(t, strings.Contains(msgs[0], "<code>"+m.Target+"</code>"), "%s not named", m.Target)
	}
	for _, want := range []string{"<b>USAGE LIMIT</b> · 20 panes", "resets 9:02am (UTC)", "It resets 9:02am (UTC)", "Claude Code on this machine"} {
		assert.Assert(t, strings.Contains(msgs[0], want), "no %q in:\n%s", want, msgs[0])
	}
	// The panes of one account, on two machines: the page names no
	// machine for the cause, each pane its own.
	g.Cause.Account = true
	g.Members = []GroupMember{{Target: "box1:agent"}, {Target: "box2:agent"}}
	msgs = g.HTML()
	assert.Assert(t, strings.Contains(msgs[0], "Claude Code on one account stopped the panes below"), msgs[0])
}

// TestGroupPageHostileWords: what a pane or a host said (a target, an
// error, a limit line) reaches the page escaped, cleaned of terminal
// sequences and bidirectional overrides, redacted, cut to a line; a page of
// very many panes stays within the messages a page may take, and says how
// many lines it left out.
func TestGroupPageHostileWords(t *testing.T) {
	g := GroupPage{Cause: Cause{Kind: CauseHost, Host: "box<b>"}, Event: GroupGone, Members: []GroupMember{
		{Target: "box:<i>a</i>", Detail: "\x1b[31mrefused\x1b[0m \u202etxt.exe token: sk-ant-oat01-abcdefghijkl " + strings.Repeat("x", 500)},
	}}
	msg := strings.Join(g.HTML(), "\n")
	for _, bad := range []string{"<i>a</i>", "box<b>", "\x1b", "\u202e", "abcdefghijkl", strings.Repeat("x", 200)} {
		assert.Assert(t, !strings.Contains(msg, bad), "%q in:\n%s", bad, msg)
	}
	assert.Assert(t, strings.Contains(msg, "<code>box:&lt;i&gt;a&lt;/i&gt;</code>"), msg)
	assert.Assert(t, strings.Contains(msg, "refused"), msg)

	many := GroupPage{Cause: Cause{Kind: CauseHost, Host: "box"}, Event: GroupGone}
	for i := range 2000 {
		many.Members = append(many.Members, GroupMember{Target: fmt.Sprintf("box:agent-%04d", i), Detail: strings.Repeat("e", 100)})
	}
	msgs := many.HTML()
	assert.Assert(t, len(msgs) <= MaxMessages, "%d messages", len(msgs))
	assert.Assert(t, strings.Contains(msgs[len(msgs)-1], "more lines not sent"), msgs[len(msgs)-1])
}
