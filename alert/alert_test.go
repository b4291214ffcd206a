package alert

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/golden"
)

var when = time.Date(2026, 3, 14, 17, 42, 3, 0, time.UTC)

// examples is one alert of each kind, as the tick would build them from the
// golden panes.
var examples = []Alert{
	{
		Kind: Question, Target: "matrix:MoonBaseCapital", State: "QUESTION", Time: when,
		Question: "☐ History\n\nWhere should the monitor keep its history?",
		Options: []string{
			"❯ 1. JSON Lines",
			"     One JSON object a line, appended; grep-able.",
			"  2. SQLite",
			"     One file, queryable, needs the sqlite3 library.",
			"  3. Type something.",
			"  4. Chat about this",
		},
	},
	{
		Kind: Blocked, Target: "matrix:MoonBaseCapital", State: "BLOCKED", Time: when,
		Work: "0", Transition: "◼ Step 157/157: write the release notes <draft> & sign-off",
	},
	{
		Kind: BudgetExhausted, Target: "build-box:omega", State: "STALLED", Time: when,
		Work: "7", Progress: "41", Budget: 5,
		Transition: "◼ Waiting on the migration lock held by step 40",
	},
	{
		Kind: Failure, Target: "build-box:omega", State: "WORKING", Time: when,
		FailLine: "--- FAIL: TestLedger (0.01s) exit code 1 (token sk-ant-api03-Xk29fjQm7LpZ0aB3cD4eF5gH6)",
	},
	{
		Kind: UsageLimit, Target: "api", State: "STALLED", Time: when, Agent: "Claude Code",
		Limit: "You've hit your 5-hour limit · resets 6:12am (UTC)", Reset: "6:12am (UTC)",
	},
	{
		Kind: UsageLimit, Target: "build-box:omega", State: "STALLED", Time: when, Agent: "Claude Code",
		Limit: "You've hit your org's monthly spend limit <b>",
	},
	{
		Kind: Notice, Target: "build-box:omega", Time: when,
		Text: "capture of build-box:omega timed out after 20s; the watcher keeps polling",
	},
}

func TestHTMLGolden(t *testing.T) {
	var b strings.Builder
	for _, a := range examples {
		fmt.Fprintf(&b, "==== %s\nkey: %s\nfirst line: %s\n", a.Kind, a.Key(), a.FirstLine())
		for i, m := range a.HTML() {
			fmt.Fprintf(&b, "---- message %d\n%s\n", i+1, m)
		}
	}
	golden.Assert(t, b.String(), "messages.golden")
}

func TestExamplesParse(t *testing.T) {
	for _, a := range examples {
		msgs := a.HTML()
		if len(msgs) != 1 {
			t.Errorf("%s: %d messages, want 1", a.Kind, len(msgs))
		}
		for _, m := range msgs {
			if _, err := telegramText(m); err != nil {
				t.Errorf("%s: %v\n%s", a.Kind, err, m)
			}
		}
	}
}

// TestQuestionRelaysVerbatim: the question and every option arrive in order,
// nothing added to them, nothing marked as the choice.
func TestQuestionRelaysVerbatim(t *testing.T) {
	a := examples[0]
	text, err := telegramText(strings.Join(a.HTML(), "\n"))
	if err != nil {
		t.Fatal(err)
	}
	at := 0
	for _, want := range append(strings.Split(a.Question, "\n")[2:], a.Options[1:]...) {
		i := strings.Index(text[at:], want)
		if i < 0 {
			t.Fatalf("%q missing or out of order in\n%s", want, text)
		}
		at += i + len(want)
	}
	if !strings.Contains(text, "\n  1. JSON Lines\n") {
		t.Errorf("the cursor's option should keep its text and alignment:\n%s", text)
	}
	for _, editorial := range []string{"❯", "recommend", "suggest", "default", "best", "✓", "→"} {
		if strings.Contains(text, editorial) {
			t.Errorf("message contains %q:\n%s", editorial, text)
		}
	}
}

func TestKey(t *testing.T) {
	q := Alert{Kind: Question, Target: "h:s", Question: "Pick a store?", Options: []string{"❯ 1. JSON", "  2. SQLite"}}
	same := []Alert{
		q,
		{Kind: Question, Target: "h:s", Question: "Pick a\n  store?  ", Options: []string{"  1. JSON", "❯ 2. SQLite"}, Time: when, State: "QUESTION"},
		{Kind: Question, Target: "h:s", Question: "\x1b[1mPick a store?\x1b[0m", Options: []string{"› 1. JSON", "  2.   SQLite"}},
	}
	// An unnumbered menu (a trust or API key dialog): the cursor moving
	// keeps the key, and the message does not show it.
	trust := Alert{Kind: Question, Target: "h:s", Question: "Trust this folder?", Options: []string{" ❯ No, exit", "   Yes, I trust this folder"}}
	moved := trust
	moved.Options = []string{"   No, exit", " ❯ Yes, I trust this folder"}
	if trust.Key() != moved.Key() {
		t.Errorf("moving the cursor in an unnumbered menu changed the key")
	}
	if text := strings.Join(trust.HTML(), "\n"); strings.Contains(text, "❯") {
		t.Errorf("the unnumbered menu's cursor is in the message:\n%s", text)
	}
	for i, a := range same {
		if got, want := a.Key(), q.Key(); got != want {
			t.Errorf("same[%d].Key() = %q, want %q", i, got, want)
		}
	}
	differ := []Alert{
		{Kind: Question, Target: "h:s2", Question: "Pick a store?", Options: []string{"1. JSON", "2. SQLite"}},
		{Kind: Question, Target: "h:s", Question: "Pick a store!", Options: []string{"1. JSON", "2. SQLite"}},
		{Kind: Question, Target: "h:s", Question: "Pick a store?", Options: []string{"1. JSON", "2. SQLite", "3. Type something."}},
		{Kind: Failure, Target: "h:s", FailLine: "Pick a store?"},
		{Kind: Failure, Target: "h:s", FailLine: "exit code 2"},
		{Kind: Failure, Target: "h:s", FailLine: "exit code 1"},
		{Kind: Blocked, Target: "h:s"},
		{Kind: BudgetExhausted, Target: "h:s", Progress: "41"},
		{Kind: BudgetExhausted, Target: "h:s", Progress: "42"},
		{Kind: Notice, Target: "h:s", Text: "capture failed"},
	}
	seen := map[string]int{q.Key(): -1}
	for i, a := range differ {
		k := a.Key()
		if j, dup := seen[k]; dup {
			t.Errorf("differ[%d] and %d share the key %q", i, j, k)
		}
		seen[k] = i
	}
	// Blocked is one escalation per target, whatever the figures say.
	b1 := Alert{Kind: Blocked, Target: "h:s", Work: "0", Transition: "a"}
	b2 := Alert{Kind: Blocked, Target: "h:s", Work: "0", Transition: "b", Time: when}
	if b1.Key() != b2.Key() {
		t.Errorf("blocked keys differ: %q, %q", b1.Key(), b2.Key())
	}
	// A key never holds a secret.
	s := Alert{Kind: Failure, Target: "h:s", FailLine: "curl -H 'Authorization: Bearer abcDEF123456789xyz' failed"}
	if strings.Contains(s.Key(), "abcDEF") {
		t.Errorf("key %q holds the secret", s.Key())
	}
}

func TestFirstLine(t *testing.T) {
	tests := []struct {
		a    Alert
		want string
	}{
		{examples[0], "QUESTION · matrix:MoonBaseCapital · ☐ History Where should the monitor keep its history?"},
		{examples[1], "BLOCKED · matrix:MoonBaseCapital · work=0 · ◼ Step 157/157: write the release notes <draft> & sign-off"},
		{examples[2], "NUDGE BUDGET EXHAUSTED · build-box:omega · 5 nudges without progress, needs a human"},
		{examples[3], "FAILURE · build-box:omega · --- FAIL: TestLedger (0.01s) exit code 1 (token sk-ant-…[redacted])"},
		{examples[4], "USAGE LIMIT · api · You've hit your 5-hour limit · resets 6:12am (UTC)"},
		{examples[5], "USAGE LIMIT · build-box:omega · You've hit your org's monthly spend limit <b> · no reset time shown"},
		{examples[6], "NOTICE · build-box:omega · capture of build-box:omega timed out after 20s; the watcher keeps polling"},
		{Alert{Kind: Blocked, Target: "t"}, "BLOCKED · t · work=?"},
		{Alert{Kind: BudgetExhausted, Target: "t", Budget: 1}, "NUDGE BUDGET EXHAUSTED · t · 1 nudge without progress, needs a human"},
		{Alert{Kind: Failure, Target: "t", FailLine: "\n\n  Traceback (most recent call last):\n  File"}, "FAILURE · t · Traceback (most recent call last):"},
		{Alert{Kind: Failure, Target: "t", FailLine: strings.Repeat("é", 500)}, "FAILURE · t · " + strings.Repeat("é", 200-15) + "…"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.a.FirstLine()); diff != "" {
			t.Errorf("%s FirstLine() mismatch (-want +got):\n%s", tt.a.Kind, diff)
		}
	}
}

func TestKindString(t *testing.T) {
	for _, k := range []Kind{Notice, Question, Blocked, BudgetExhausted, Failure} {
		got, ok := ParseKind(k.String())
		if !ok || got != k {
			t.Errorf("ParseKind(%q) = %v, %v", k.String(), got, ok)
		}
	}
	if got := Kind(99).String(); got != "kind(99)" {
		t.Errorf("Kind(99).String() = %q", got)
	}
	if _, ok := ParseKind("QUESTION"); ok {
		t.Error(`ParseKind("QUESTION") succeeded`)
	}
}

// hostile is pane text that tries everything: markup, Telegram entities,
// text already escaped, secrets, scripts from other languages, emoji,
// invalid UTF-8, terminal escapes, a bidirectional override and a 10k line.
var hostile = strings.Join([]string{
	`<script>alert("pwned")</script> <b>bold</b> <a href="tg://user?id=1">click</a> </pre></code>`,
	`&amp; already escaped &lt;b&gt; &#60;x&#62; &quot;q&quot; & a bare ampersand; 1 < 2 > 0`,
	`@everyone /start #deploy https://evil.example/?a=<x>&b=1 tg-spoiler <tg-spoiler>s</tg-spoiler>`,
	`export ANTHROPIC_API_KEY=sk-ant-api03-9fQ2mXk7LpZ0aB3cD4eF5gH6iJ7kL8mN9oP0qR1sT2uV3wX4yZ5`,
	`git push https://x-access-token:ghs_16C7e42F292c6912E7710c838347Ae178B4a@github.com/o/r.git`,
	`aws: AKIAIOSFODNN7EXAMPLE aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`,
	"中文字符 日本語のテキスト 한국어 🙂👍🏽👨‍👩‍👧 ∑∫√",
	"invalid \xff\xfe\xc3 bytes and \x1b[31mcoloured\x1b[0m text\x07 and \u202emirrored\u202c",
	strings.Repeat("0123456789", 1000),
	"the last line",
}, "\n")

var hostileSecrets = []string{
	"9fQ2mXk7LpZ0aB3cD4eF5gH6", "ghs_16C7e42F292c6912E7710c838347Ae178B4a",
	"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
}

func TestHostilePane(t *testing.T) {
	for _, a := range []Alert{
		{Kind: Question, Target: "h:s", State: "QUESTION", Time: when, Question: hostile, Options: strings.Split(hostile, "\n")},
		{Kind: Blocked, Target: "h:s", State: "BLOCKED", Time: when, Work: "0", Transition: hostile},
		{Kind: BudgetExhausted, Target: "h:s", State: "STALLED", Time: when, Work: "<b>", Progress: "&amp;", Budget: 5, Transition: hostile},
		{Kind: Failure, Target: "h:s", State: "WORKING", Time: when, FailLine: hostile},
		{Kind: Notice, Target: "<h>:s&", Time: when, Text: hostile},
	} {
		msgs := a.HTML()
		all := strings.Join(msgs, "\n")
		var text strings.Builder
		for i, m := range msgs {
			got, err := telegramText(m)
			if err != nil {
				t.Fatalf("%s message %d: %v\n%s", a.Kind, i+1, err, m)
			}
			text.WriteString(got)
		}
		for _, s := range hostileSecrets {
			if strings.Contains(all, s) {
				t.Errorf("%s: secret %q reached the message", a.Kind, s)
			}
		}
		for _, raw := range []string{"<script", "<a ", "<tg-spoiler", "\x1b", "\u202e", "\xff", "\a"} {
			if strings.Contains(all, raw) {
				t.Errorf("%s: %q reached the message", a.Kind, raw)
			}
		}
		if a.Kind == BudgetExhausted {
			continue
		}
		for _, want := range []string{
			`<script>alert("pwned")</script>`, "&amp; already escaped &lt;b&gt;", "1 < 2 > 0",
			"@everyone /start #deploy", "sk-ant-…[redacted]", "https://[redacted]@github.com/o/r.git",
			"中文字符 日本語のテキスト 한국어 🙂👍🏽👨‍👩‍👧", "invalid \uFFFD bytes and coloured text and mirrored",
			"characters cut]", "the last line",
		} {
			if !strings.Contains(text.String(), want) {
				t.Errorf("%s: the operator does not read %q", a.Kind, want)
			}
		}
	}
}

// TestSplit: a long question becomes several messages, each within the
// limit, each parsing on its own, and nothing beyond MaxMessages.
func TestSplit(t *testing.T) {
	var lines []string
	for i := range 400 {
		lines = append(lines, fmt.Sprintf("line %03d: <%s> & %s", i, strings.Repeat("é", 20), strings.Repeat("🙂", 10)))
	}
	for _, n := range []int{10, 60, 100, 400} {
		a := Alert{Kind: Question, Target: "h:s", Question: strings.Join(lines[:n], "\n"), Options: []string{"1. yes", "2. no"}}
		msgs := a.HTML()
		var text strings.Builder
		for i, m := range msgs {
			got, err := telegramText(m)
			if err != nil {
				t.Fatalf("%d lines, message %d: %v", n, i+1, err)
			}
			if c := utf16Len(got); c > MaxMessageLen {
				t.Errorf("%d lines, message %d: %d UTF-16 units, limit %d", n, i+1, c, MaxMessageLen)
			}
			if i > 0 && !strings.HasPrefix(got, "QUESTION · h:s · continued") {
				t.Errorf("%d lines, message %d does not say it continues: %.60q", n, i+1, got)
			}
			if i < len(msgs)-1 && !strings.HasSuffix(got, "(continued in the next message)") {
				t.Errorf("%d lines, message %d does not say it goes on", n, i+1)
			}
			text.WriteString(got)
		}
		if len(msgs) > MaxMessages {
			t.Errorf("%d lines: %d messages, max %d", n, len(msgs), MaxMessages)
		}
		sent := strings.Count(text.String(), "line ")
		if sent == n {
			if !strings.Contains(text.String(), "2. no") {
				t.Errorf("%d lines: options missing", n)
			}
			continue
		}
		dropped := n - sent + 3 // the heading of the options and the two options
		if want := "[… " + strconv.Itoa(dropped) + " more lines not sent]"; !strings.HasSuffix(text.String(), want) {
			t.Errorf("%d lines, %d sent: does not end with %q", n, sent, want)
		}
		if len(msgs) != MaxMessages {
			t.Errorf("%d lines: lines dropped with only %d messages", n, len(msgs))
		}
	}
}

func TestCutMiddle(t *testing.T) {
	long := strings.Repeat("a", 700) + strings.Repeat("🙂", 400) + strings.Repeat("z", 400)
	got := cutMiddle(long, MaxLineLen)
	if n := utf16Len(got); n > MaxLineLen+40 {
		t.Errorf("cut line is %d UTF-16 units", n)
	}
	if !strings.HasPrefix(got, strings.Repeat("a", 600)+" … [") || !strings.HasSuffix(got, "] … "+strings.Repeat("z", 300)) {
		t.Errorf("cutMiddle kept the wrong ends: %.80q … %.80q", got, got[len(got)-80:])
	}
	if want := "[" + strconv.Itoa(1500-900) + " characters cut]"; !strings.Contains(got, want) {
		t.Errorf("cutMiddle = …%q…, want the marker %q", got[600:640], want)
	}
	if s := "short"; cutMiddle(s, MaxLineLen) != s {
		t.Error("cutMiddle changed a short line")
	}
}

// telegramText parses a message as Telegram's HTML mode does and returns the
// text the operator reads. It fails on what Telegram would refuse: a tag it
// does not know, unbalanced or crossed tags, a bare < or &, an entity it does
// not know, invalid UTF-8, more than 4096 UTF-16 units.
func telegramText(m string) (string, error) {
	if !utf8.ValidString(m) {
		return "", errors.New("invalid UTF-8")
	}
	allowed := map[string]bool{"b": true, "i": true, "u": true, "s": true, "code": true, "pre": true, "blockquote": true}
	var stack []string
	var out strings.Builder
	for i := 0; i < len(m); {
		switch m[i] {
		case '<':
			j := strings.IndexByte(m[i:], '>')
			if j < 0 {
				return "", fmt.Errorf("bare < at %d", i)
			}
			tag := m[i+1 : i+j]
			if name, ok := strings.CutPrefix(tag, "/"); ok {
				if len(stack) == 0 || stack[len(stack)-1] != name {
					return "", fmt.Errorf("</%s> at %d closes %v", name, i, stack)
				}
				stack = stack[:len(stack)-1]
			} else {
				if !allowed[tag] {
					return "", fmt.Errorf("tag <%s> at %d", tag, i)
				}
				stack = append(stack, tag)
			}
			i += j + 1
		case '>':
			return "", fmt.Errorf("bare > at %d", i)
		case '&':
			j := strings.IndexByte(m[i:], ';')
			if j < 0 {
				return "", fmt.Errorf("bare & at %d", i)
			}
			r, ok := map[string]string{"lt": "<", "gt": ">", "amp": "&", "quot": `"`}[m[i+1:i+j]]
			if !ok {
				return "", fmt.Errorf("entity %q at %d", m[i:i+j+1], i)
			}
			out.WriteString(r)
			i += j + 1
		default:
			out.WriteByte(m[i])
			i++
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("unclosed %v", stack)
	}
	text := out.String()
	if n := len(utf16.Encode([]rune(text))); n > 4096 {
		return "", fmt.Errorf("%d UTF-16 units, Telegram takes 4096", n)
	}
	return text, nil
}

// TestQuestionSaysAReplyIsTyped: a question whose free-text option takes a
// reply says so under its options, the option's label from the pane made
// one escaped, redacted line; one without says nothing of replies.
func TestQuestionSaysAReplyIsTyped(t *testing.T) {
	q := Alert{Kind: Question, Target: "agent", State: "QUESTION", Question: "Which format?", Options: []string{"1. JSON", "2. Type something."}}
	for _, m := range q.HTML() {
		if strings.Contains(m, "reply") {
			t.Errorf("a question without Reply speaks of replies:\n%s", m)
		}
	}
	q.Reply, q.ReplyMax = "2. Type <b>something</b>\x1b[2J\nnow sk-ant-api03-"+strings.Repeat("x", 40), 500
	msgs := q.HTML()
	text, err := telegramText(msgs[len(msgs)-1])
	if err != nil {
		t.Fatalf("%v:\n%s", err, msgs[len(msgs)-1])
	}
	want := "✍ A reply to this message is typed as your own words for 2. Type <b>something</b> now "
	if !strings.Contains(text, want) || !strings.Contains(text, ": one line, at most 500 characters.") {
		t.Errorf("the message does not say a reply is typed:\n%s", text)
	}
	if strings.Contains(text, strings.Repeat("x", 40)) || strings.Contains(text, "\x1b") {
		t.Errorf("the reply's label is not cleaned and redacted:\n%q", text)
	}
}
