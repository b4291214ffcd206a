package auditrun

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
	"gotest.tools/v3/fs"
)

// hostileProject is a project that carries everything an agent would run
// or load from the directory it audits, and things a copy must not follow.
func hostileProject(t *testing.T) (dir, outside string) {
	t.Helper()
	outside = fs.NewDir(t, "outside", fs.WithFile("secret", "machine example.com password hunter2\n")).Path()
	dir = fs.NewDir(t, "shop",
		fs.WithFile("CLAUDE.md", "# Rules\n\n1. Be nice.\n"),
		fs.WithFile("main.go", "package main\n"),
		fs.WithFile(".mcp.json", `{"mcpServers":{"x":{"command":"id"}}}`),
		fs.WithFile(".env", "NODE_OPTIONS=--require ./evil.js\n"),
		fs.WithFile(".env.local", "TOKEN=x\n"),
		fs.WithDir(".gemini", fs.WithFile("settings.json", `{"mcpServers":{"x":{"command":"id"}}}`)),
		fs.WithDir(".codex", fs.WithFile("config.toml", "[mcp_servers.x]\ncommand = \"id\"\n")),
		fs.WithDir(".claude", fs.WithFile("settings.json", `{"hooks":{}}`)),
		fs.WithDir(".agents", fs.WithDir("skills")),
		fs.WithDir(".git", fs.WithFile("config", "[filter \"x\"]\n\tclean = id\n")),
		fs.WithDir("sub",
			fs.WithFile("code.go", "package sub\n"),
			fs.WithDir(".git", fs.WithFile("config", "[core]\n\tfsmonitor = id\n")),
			fs.WithDir(".gemini", fs.WithFile(".env", "X=1\n"))),
		fs.WithSymlink("passwd", "/etc/passwd"),
		fs.WithSymlink("leak", filepath.Join(outside, "secret")),
		fs.WithSymlink("inside", "main.go"),
		fs.WithSymlink("up", ".."),
		fs.WithDir(".omega", fs.WithDir("monitor", fs.WithFile("state.json", "{}"))),
	).Path()
	assert.NilError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	big := make([]byte, MaxFile+1)
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o644))
	return dir, outside
}

func TestCopyTreeLeavesOutWhatAnAgentWouldRun(t *testing.T) {
	dir, _ := hostileProject(t)
	dst := filepath.Join(t.TempDir(), "tree")
	left, err := copyTree(dir, dst, filepath.Join(dir, ".omega", "monitor"), MaxTree)
	assert.NilError(t, err)
	defer removeTree(dst)

	want := []LeftOut{
		{".agents", "agent skills"},
		{".claude", "agent settings"},
		{".codex", "agent settings"},
		{".env", "environment file"},
		{".env.local", "environment file"},
		{".gemini", "agent settings"},
		{".git", "git metadata (its config runs commands)"},
		{".mcp.json", "agent MCP servers"},
		{"big.bin", "over 4 MiB"},
		{"fifo", "not a regular file"},
		{"inside", "symbolic link"},
		{"leak", "symbolic link"},
		{"passwd", "symbolic link"},
		{"sub/.gemini", "agent settings"},
		{"sub/.git", "git metadata (its config runs commands)"},
		{"up", "symbolic link"},
	}
	slices.SortFunc(left, func(a, b LeftOut) int { return strings.Compare(a.Path, b.Path) })
	if d := cmp.Diff(want, left); d != "" {
		t.Errorf("left out (-want +got):\n%s", d)
	}
	var got []string
	filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
		assert.NilError(t, err)
		rel, _ := filepath.Rel(dst, p)
		fi, _ := d.Info()
		got = append(got, rel+" "+fi.Mode().String())
		return nil
	})
	wantTree := []string{". dr-x------", ".omega dr-x------", "CLAUDE.md -r--------", "main.go -r--------",
		"sub dr-x------", "sub/code.go -r--------"}
	if d := cmp.Diff(wantTree, got); d != "" {
		t.Errorf("the copy (-want +got):\n%s", d)
	}
	b, err := os.ReadFile(filepath.Join(dst, "main.go"))
	assert.NilError(t, err)
	assert.Equal(t, string(b), "package main\n")
	assert.NilError(t, removeTree(dst))
	_, err = os.Stat(dst)
	assert.Assert(t, os.IsNotExist(err))
}

func TestCopyTreeRefusesATooLargeTreeAndTheRoot(t *testing.T) {
	_, err := Prepare(Config{Dir: "/", RunDir: t.TempDir(), Agent: "claude"})
	assert.ErrorContains(t, err, "refusing to audit the whole file system")
	dir, _ := hostileProject(t)
	_, err = copyTree(dir, filepath.Join(t.TempDir(), "tree"), "", 10)
	assert.ErrorContains(t, err, "the project holds more than 0 MiB of files to copy")
}

// TestProjectFSStaysInside: a citation that leaves the project through a
// link, names a device or a FIFO, or climbs with .., reads nothing.
func TestProjectFSStaysInside(t *testing.T) {
	dir, _ := hostileProject(t)
	assert.NilError(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero")))
	assert.NilError(t, os.Symlink("sub", filepath.Join(dir, "subdir")))
	pfs, err := OpenProject(dir)
	assert.NilError(t, err)
	defer pfs.Close()
	b, err := pfs.ReadFile("main.go")
	assert.NilError(t, err)
	assert.Equal(t, string(b), "package main\n")
	// A relative link to a directory inside the project is followed.
	b, err = pfs.ReadFile("subdir/code.go")
	assert.NilError(t, err)
	assert.Equal(t, string(b), "package sub\n")
	for _, name := range []string{"leak", "passwd", "up/outside/secret", "../x", "zero", "fifo", "big.bin", "inside", "sub"} {
		if _, err := pfs.ReadFile(name); err == nil {
			t.Errorf("ReadFile(%q) read something", name)
		}
	}
}

// TestProjectFSIsBounded: a report that cites many large files cannot make
// a check read without end: past its budget, or its deadline, every further
// file is refused, and what was read before stays read.
func TestProjectFSIsBounded(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("x", 1<<20)
	for _, name := range []string{"a", "b", "c"} {
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name), []byte(big), 0o600))
	}
	pfs, err := OpenProject(dir)
	assert.NilError(t, err)
	defer pfs.Close()
	pfs.budget = 2 << 20
	for _, name := range []string{"a", "b"} {
		_, err := pfs.ReadFile(name)
		assert.NilError(t, err, name)
	}
	_, err = pfs.ReadFile("c")
	assert.ErrorContains(t, err, "the check has read its 2 MiB")

	pfs.budget, pfs.deadline = MaxRead, time.Now().Add(-time.Second)
	_, err = pfs.ReadFile("a")
	assert.ErrorContains(t, err, "are over")
}
