package poll

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The names of groups, causes and members are checked by hand (a tick
// checks one every poll, and compiling these patterns cost every start
// 0.7 ms): each check says what its regular expression says.
var groupNamePatterns = []struct {
	name  string
	check func(string) bool
	re    *regexp.Regexp
}{
	{"groupName", groupName, regexp.MustCompile(`^[a-z-]{1,16}-[0-9a-f]{24}$`)},
	{"causeKind", causeKind, regexp.MustCompile(`^[a-z-]{1,16}$`)},
	{"plainName", plainName, regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)},
}

func TestGroupNamesAsTheirPatterns(t *testing.T) {
	hex := "0123456789abcdef01234567"
	inputs := []string{
		"", "-", "a", "limit", "usage-limit", "usage-limit-" + hex, "limit-" + hex, "-" + hex,
		"limit-" + strings.ToUpper(hex), "limit-" + hex[:23], "limit-" + hex + "0", "limit_" + hex,
		strings.Repeat("a", 16) + "-" + hex, strings.Repeat("a", 17) + "-" + hex, "limit-" + hex + "\n",
		"a-b-c-" + hex, "ab\x00cd", "monitor-agent", "monitor-host-agent_1", "w" + hex, "a b", "a/b",
		"..", "é", strings.Repeat("x", 100), strings.Repeat("x", 101), strings.Repeat("-", 16),
		strings.Repeat("-", 17), "Limit", "limit\n",
	}
	for _, p := range groupNamePatterns {
		var got, want []string
		for _, in := range inputs {
			if p.check(in) {
				got = append(got, in)
			}
			if p.re.MatchString(in) {
				want = append(want, in)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s accepts (-want +got):\n%s", p.name, diff)
		}
	}
}

func FuzzGroupNamesAsTheirPatterns(f *testing.F) {
	f.Add("usage-limit-0123456789abcdef01234567")
	f.Add("monitor-host-agent")
	f.Fuzz(func(t *testing.T, in string) {
		for _, p := range groupNamePatterns {
			if got, want := p.check(in), p.re.MatchString(in); got != want {
				t.Errorf("%s(%q) = %v, its pattern says %v", p.name, in, got, want)
			}
		}
	})
}
