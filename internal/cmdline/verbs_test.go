package cmdline

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// verbsOutside are the places outside cmd/ allowed what verbsInLibraries
// refuses, each with why.
var verbsOutside = map[string]string{
	// The commands' own parser, which the verbs call: the code it
	// returns is theirs to return (0 after --help, 2 after a usage error).
	"internal/cmdline/cmdline.go: ParseInterspersed returns an exit code": "the verbs' shared parser",
	// A recorded session's flags section: tick's settings as the file
	// gives them, not a command line.
	"internal/poll/replay.go: Replay parses a flag set": "a replay file's flags section",
}

// exitDoc is how a doc comment says a function returns an exit status.
var exitDoc = regexp.MustCompile(`(?i)\bexit (status|code)`)

// verbsInLibraries lists what, under root but outside cmd/, is a verb's
// work: an exported function that returns an int named as an exit code
// (code, status, exit...) or whose doc comment speaks of an exit status
// while it returns an int; a flag set parsed (Parse on a flag set made in
// the same function by flag.NewFlagSet or by a FlagSet method); the verbs'
// interspersed parser called. A verb's flags are bound by a type of the
// library (a FlagSet method, as watcher.MuxWakeFlags), and parsed, checked
// into exit codes and said by the command.
func verbsInLibraries(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch d.Name() {
			case "cmd", "testdata", "golden", "scripts", "docs":
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			for _, what := range verbWork(fn) {
				found = append(found, rel+": "+fn.Name.Name+" "+what)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(found)
	return found
}

// verbWork says what of a verb's work fn does (verbsInLibraries).
func verbWork(fn *ast.FuncDecl) []string {
	var work []string
	if fn.Name.IsExported() && fn.Type.Results != nil {
		ints := false
		for _, r := range fn.Type.Results.List {
			if id, ok := r.Type.(*ast.Ident); !ok || id.Name != "int" {
				continue
			}
			ints = true
			for _, n := range r.Names {
				if l := strings.ToLower(n.Name); l == "code" || l == "status" || strings.Contains(l, "exit") {
					work = append(work, "returns an exit code")
				}
			}
		}
		if ints && fn.Doc != nil && exitDoc.MatchString(fn.Doc.Text()) && len(work) == 0 {
			work = append(work, "returns an exit code")
		}
	}
	if fn.Body == nil {
		return work
	}
	flagSets := map[string]bool{}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, rhs := range n.Rhs {
				if i < len(n.Lhs) && makesFlagSet(rhs) {
					if id, ok := n.Lhs[i].(*ast.Ident); ok {
						flagSets[id.Name] = true
					}
				}
			}
		case *ast.ValueSpec:
			for i, v := range n.Values {
				if i < len(n.Names) && makesFlagSet(v) {
					flagSets[n.Names[i].Name] = true
				}
			}
		case *ast.CallExpr:
			sel, ok := n.Fun.(*ast.SelectorExpr)
			if !ok {
				break
			}
			if id, ok := sel.X.(*ast.Ident); ok && sel.Sel.Name == "Parse" && flagSets[id.Name] {
				work = append(work, "parses a flag set")
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "cmdline" && sel.Sel.Name == "ParseInterspersed" {
				work = append(work, "parses a command line")
			}
		}
		return true
	})
	return work
}

// makesFlagSet says whether e makes a flag set: flag.NewFlagSet, or a
// FlagSet method of a library's flags type.
func makesFlagSet(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "flag" && sel.Sel.Name == "NewFlagSet" || sel.Sel.Name == "FlagSet"
}

// TestVerbsLiveInTheCommand: outside cmd/, no exported function returns an
// exit code and nothing parses a command's flags; the places allowed are
// verbsOutside's, each still there.
func TestVerbsLiveInTheCommand(t *testing.T) {
	t.Parallel()
	found := verbsInLibraries(t, filepath.Join("..", ".."))
	var got []string
	for _, w := range found {
		if _, ok := verbsOutside[w]; !ok {
			got = append(got, w)
		}
	}
	if len(got) > 0 {
		t.Errorf("a verb's work outside cmd/ (its flags parsed, its exit code returned: move them to the command):\n%s", strings.Join(got, "\n"))
	}
	for w := range verbsOutside {
		if !slices.Contains(found, w) {
			t.Errorf("allowed, and no longer there (take it off verbsOutside): %s", w)
		}
	}
}

// TestVerbsInLibrariesFound: the check finds a verb in a library, as
// read-watcher and wake --mux were before they moved to the command, and
// passes their moved forms.
func TestVerbsInLibrariesFound(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("internal/hosts/serve.go", `package hosts

// ServeWatcher is omega-monitor read-watcher, and returns the exit status.
func ServeWatcher(args []string) int {
	fs := flag.NewFlagSet("read-watcher", flag.ContinueOnError)
	positional, code, ok := cmdline.ParseInterspersed(fs, args, "", nil, nil)
	return 0
}

// Width is the width of s.
func Width(s string) int { return len(s) }
`)
	write("internal/watcher/wakemux.go", `package watcher

func MuxWake(args []string) error {
	var fs *flag.FlagSet
	fs = flag.NewFlagSet("wake --mux", flag.ContinueOnError)
	return fs.Parse(args)
}

func Run(args []string) (code int) { return 0 }

func (f *MuxWakeFlags) Check(args []string) error { return nil }
`)
	write("internal/watcher/other.go", `package watcher

func parse(f *Flags, args []string) error {
	fs := f.FlagSet()
	return fs.Parse(args)
}
`)
	write("cmd/omega-monitor/wake.go", `package main

func runWakeMux(e *Env, args []string) (code int) {
	fs := flag.NewFlagSet("wake --mux", flag.ContinueOnError)
	fs.Parse(args)
	return 2
}
`)
	want := []string{
		"internal/hosts/serve.go: ServeWatcher parses a command line",
		"internal/hosts/serve.go: ServeWatcher returns an exit code",
		"internal/watcher/other.go: parse parses a flag set",
		"internal/watcher/wakemux.go: MuxWake parses a flag set",
		"internal/watcher/wakemux.go: Run returns an exit code",
	}
	if diff := cmp.Diff(want, verbsInLibraries(t, root)); diff != "" {
		t.Errorf("found (-want +got):\n%s", diff)
	}
}
