package poll

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
)

func TestShellWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"--nudge-budget 3", []string{"--nudge-budget", "3"}},
		{`--nudge-text 'keep going; it is "fine"'`, []string{"--nudge-text", `keep going; it is "fine"`}},
		{`--nudge-text "say \"hi\" \$x"`, []string{"--nudge-text", `say "hi" $x`}},
		{"a\\ b # a comment\nc", []string{"a b", "c"}},
		{"''", []string{""}},
	}
	for _, tt := range tests {
		got, err := shellWords(tt.in)
		assert.NilError(t, err)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("shellWords(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
	for _, bad := range []string{"'open", `"open`} {
		if _, err := shellWords(bad); err == nil {
			t.Errorf("shellWords(%q) gave no error", bad)
		}
	}
}
