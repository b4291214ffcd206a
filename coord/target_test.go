package coord

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestCoordParseTarget(t *testing.T) {
	tests := []struct {
		in   string
		want Target
	}{
		{"agent", Target{Session: "agent"}},
		{"my-agent_2", Target{Session: "my-agent_2"}},
		{"matrix:MoonBaseCapital", Target{Host: "matrix", Session: "MoonBaseCapital"}},
		{"box.lan:agent", Target{Host: "box.lan", Session: "agent"}},
		{"a-b:c-d", Target{Host: "a-b", Session: "c-d"}},
		{"list", Target{Session: "list"}},
		{strings.Repeat("x", MaxNameLen), Target{Session: strings.Repeat("x", MaxNameLen)}},
	}
	for _, tt := range tests {
		got, err := ParseTarget(tt.in)
		if err != nil {
			t.Errorf("ParseTarget(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseTarget(%q) (-want +got):\n%s", tt.in, diff)
		}
		if got.String() != tt.in {
			t.Errorf("ParseTarget(%q).String() = %q", tt.in, got.String())
		}
	}
}

// hostileTargets are coordinates that must never reach a shell or a
// multiplexer. Other packages' tests use the same list (see cmd).
var hostileTargets = []string{
	"",
	":",
	":agent",
	"host:",
	"a.b",
	"a:b:c",
	"host:a.b",
	"-t",
	"-oProxyCommand=touch /tmp/pwned:agent",
	"host:-n",
	".hidden:agent",
	"a b",
	"a\tb",
	"a\nb",
	"a\rb",
	"a\x00b",
	"a\x1bb",
	"'quoted'",
	`"dq"`,
	"$(touch pwned)",
	"${HOME}",
	"`id`",
	"a;id",
	"a&&id",
	"a|id",
	"a#S",
	"#{session_name}",
	"a\\b",
	"a/b",
	"a*",
	"a?",
	"a[1]",
	"~root",
	"a>b",
	"a<b",
	"a(b)",
	"a{b}",
	"a!b",
	"a@b",
	"a%b",
	"a=b",
	"a,b",
	"a+b",
	"héllo",
	"a\u00a0b",
	"a\u202eb",
	"\xff",
	strings.Repeat("x", MaxNameLen+1),
	"host:" + strings.Repeat("x", MaxNameLen+1),
	"ho st:agent",
	"$h:agent",
	"h;id:agent",
}

func TestCoordHostileTargetsRefused(t *testing.T) {
	if len(hostileTargets) < 30 {
		t.Fatalf("only %d hostile targets; keep at least 30", len(hostileTargets))
	}
	for _, in := range hostileTargets {
		got, err := ParseTarget(in)
		if err == nil {
			t.Errorf("ParseTarget(%q) = %+v, want an error", in, got)
			continue
		}
		var unsafe *UnsafeError
		if !errors.As(err, &unsafe) || unsafe.Reason == "" {
			t.Errorf("ParseTarget(%q) error %v carries no reason", in, err)
		}
		if !strings.HasPrefix(err.Error(), "coord: ") {
			t.Errorf("ParseTarget(%q) error %q lacks the package prefix", in, err)
		}
	}
}

func TestCoordUnsafeReasons(t *testing.T) {
	tests := []struct {
		name, in, reason string
	}{
		{"empty", "", "empty"},
		{"dot", "a.b", "rewrites"},
		{"colon", "host:a:b", "rewrites"},
		{"flag", "-x", "flag"},
		{"space", "a b", "whitespace"},
		{"dollar", "a$b", "expands"},
		{"semicolon", "a;b", "ends a shell"},
		{"hash", "a#b", "comment"},
		{"control", "a\x07b", "control"},
		{"long", strings.Repeat("a", MaxNameLen+1), "longer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTarget(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("ParseTarget(%q) = %v, want a reason mentioning %q", tt.in, err, tt.reason)
			}
		})
	}
}

// shellSpecial holds every byte that means something to a POSIX shell or to
// a multiplexer target.
const shellSpecial = " \t\n\r'\"$`;&|#\\*?[]~<>(){}!%=,+@.:/\x00"

func FuzzCoordParseTarget(f *testing.F) {
	for _, s := range append([]string{"agent", "box:agent", "box.lan:my-agent"}, hostileTargets...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseTarget(in)
		if err != nil {
			return
		}
		if got.String() != in {
			t.Fatalf("ParseTarget(%q).String() = %q", in, got.String())
		}
		if got.Session == "" || strings.ContainsAny(got.Session, shellSpecial) || got.Session[0] == '-' {
			t.Fatalf("ParseTarget(%q) accepted session %q", in, got.Session)
		}
		if strings.ContainsAny(got.Host, strings.ReplaceAll(shellSpecial, ".", "")) || strings.HasPrefix(got.Host, "-") {
			t.Fatalf("ParseTarget(%q) accepted host %q", in, got.Host)
		}
		for _, r := range in {
			if r >= utf8.RuneSelf {
				t.Fatalf("ParseTarget(%q) accepted a non-ASCII rune", in)
			}
		}
		if len(got.Session) > MaxNameLen || len(got.Host) > MaxNameLen {
			t.Fatalf("ParseTarget(%q) accepted an over-long name", in)
		}
	})
}
