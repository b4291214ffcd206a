package treeread

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gotest.tools/v3/assert"
)

// call connects a client to the server of dir and calls tool with args; it
// returns the answer's text and whether it is an error.
func call(t *testing.T, dir, tool string, args map[string]any) (string, bool) {
	t.Helper()
	s, err := NewServer(dir)
	assert.NilError(t, err)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Connect(ctx, st, nil)
	assert.NilError(t, err)
	defer ss.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
	cs, err := c.Connect(ctx, ct, nil)
	assert.NilError(t, err)
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	assert.NilError(t, err)
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n"), res.IsError
}

// TestTreeRead: the tools list, read and search the tree, and nothing
// outside it: neither .. nor an absolute path nor a link leads out.
func TestTreeRead(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "auth.json")
	assert.NilError(t, os.WriteFile(outside, []byte(`{"OPENAI_API_KEY":"sk-outside"}`), 0o600))
	assert.NilError(t, os.MkdirAll(filepath.Join(dir, "pkg"), 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc Run() {}\n"), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "pkg", "a.go"), []byte("package pkg\n// Run runs.\nfunc Run() {}\n"), 0o644))
	assert.NilError(t, os.Symlink(outside, filepath.Join(dir, "link.json")))

	tests := []struct {
		tool    string
		args    map[string]any
		want    string
		isError bool
	}{
		{"list_directory", nil, "link.json\t(not a regular file)\nmain.go\t28 bytes\npkg/\n", false},
		{"read_file", map[string]any{"path": "main.go"}, "     1\tpackage main\n     2\t\n     3\tfunc Run() {}\n", false},
		{"read_file", map[string]any{"path": "/pkg/a.go", "offset": 2, "limit": 1}, "     2\t// Run runs.\n(cut before line 3: read on with offset 3)\n", false},
		{"search", map[string]any{"pattern": `func \w+\(`}, "main.go:3: func Run() {}\npkg/a.go:3: func Run() {}\n", false},
		{"search", map[string]any{"pattern": "Run", "path": "pkg", "name": "*.go"}, "pkg/a.go:2: // Run runs.\npkg/a.go:3: func Run() {}\n", false},
		{"search", map[string]any{"pattern": "nothing like it"}, "(no match)", false},
		// The root is the top: .. and an absolute path stay in it.
		{"read_file", map[string]any{"path": "../../../../" + outside}, "", true},
		{"read_file", map[string]any{"path": outside}, "", true},
		{"read_file", map[string]any{"path": "link.json"}, "", true},
		{"search", map[string]any{"pattern": "sk-outside"}, "(no match)", false},
		{"search", map[string]any{"pattern": "("}, "", true},
	}
	for _, tt := range tests {
		got, isError := call(t, dir, tt.tool, tt.args)
		assert.Equal(t, isError, tt.isError, "%s %v: %s", tt.tool, tt.args, got)
		assert.Assert(t, !strings.Contains(got, "sk-outside"), "%s %v: %s", tt.tool, tt.args, got)
		if !tt.isError {
			assert.Equal(t, got, tt.want, "%s %v", tt.tool, tt.args)
		}
	}
}
