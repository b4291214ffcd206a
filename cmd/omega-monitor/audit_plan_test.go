package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/golden"
)

// TestAuditPlanOfThisRepository: the audit of this very checkout plans one
// dimension for each invariant of its RULES.md, and nothing of the docs that
// only name the marker words. A change to the repository's rules or docs
// that changes the plan shows here (go test ./cmd/omega-monitor -run
// TestAuditPlanOfThisRepository -update rewrites it; read the diff).
func TestAuditPlanOfThisRepository(t *testing.T) {
	var out, errs strings.Builder
	code := run([]string{"audit", "plan", filepath.Join("..", "..")}, nil, &out, &errs)
	assert.Equal(t, code, 0, errs.String())
	golden.Assert(t, out.String(), "audit-plan-self.golden")
}

// TestAuditPlanNoRules: a project whose docs only describe the marker
// words (this repository's README and its page on the audit, which once made
// a dimension of a sentence cut at a line's end) states no rules: the plan is
// the four generic dimensions, and says in plain words what was looked for,
// where, and what to write.
func TestAuditPlanNoRules(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"README.md", "docs/audit.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", f))
		assert.NilError(t, err)
		assert.NilError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o700))
		assert.NilError(t, os.WriteFile(filepath.Join(dir, f), b, 0o600))
	}
	var out, errs strings.Builder
	code := run([]string{"audit", "plan", dir}, nil, &out, &errs)
	assert.Equal(t, code, 0, errs.String())
	golden.Assert(t, out.String(), "audit-plan-norules.golden")
}
