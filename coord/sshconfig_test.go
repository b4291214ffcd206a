package coord

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSSHConfigAliases(t *testing.T) {
	included := writeConfig(t, "Host inner\n  Port 2200\nHost matrix\n")
	path := writeConfig(t, `# fleet
Host matrix box.lan
    HostName 100.64.0.7
    Port 42820
    User op
    IdentityFile ~/.ssh/id_fleet
Host *.internal !bad
    User nobody
Host gpu? dev*
Match host special
    User m
Host *
    ServerAliveInterval 30
Include `+included+`
Host last
`)
	c, err := LoadSSHConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Err != nil {
		t.Fatalf("parse: %v", c.Err)
	}
	if diff := cmp.Diff([]string{"matrix", "box.lan", "inner", "last"}, c.Aliases()); diff != "" {
		t.Errorf("Aliases (-want +got):\n%s", diff)
	}
	got, err := c.Resolve("matrix")
	if err != nil {
		t.Fatal(err)
	}
	want := Host{Alias: "matrix", HostName: "100.64.0.7", Port: "42820", User: "op", IdentityFiles: []string{"~/.ssh/id_fleet"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Resolve(matrix) (-want +got):\n%s", diff)
	}
	got, err = c.Resolve("last")
	if err != nil {
		t.Fatal(err)
	}
	if got.HostName != "last" || got.Port != "22" {
		t.Errorf("Resolve(last) = %+v, want ssh's defaults (HostName last, Port 22)", got)
	}
}

// TestSSHConfigUnparsable: a config ssh_config cannot read is reported, and
// its Host lines still list.
func TestSSHConfigUnparsable(t *testing.T) {
	path := writeConfig(t, "Host a b*\n  Port 1\nMatch final\n  User x\nHost = c # note\n")
	c, err := LoadSSHConfig(path)
	if err != nil {
		t.Fatalf("LoadSSHConfig: %v (want the parse error reported in Err)", err)
	}
	if c.Err == nil || !strings.HasPrefix(c.Err.Error(), "coord: ssh config") {
		t.Errorf("Err = %v, want a coord: ssh config error", c.Err)
	}
	if diff := cmp.Diff([]string{"a", "c"}, c.Aliases()); diff != "" {
		t.Errorf("Aliases (-want +got):\n%s", diff)
	}
	if _, err := c.Resolve("a"); err == nil {
		t.Error("Resolve on an unparsable config succeeded")
	}
}

func TestSSHConfigMissingIsEmpty(t *testing.T) {
	c, err := LoadSSHConfig(filepath.Join(t.TempDir(), "none"))
	if err != nil || c.Err != nil || len(c.Aliases()) != 0 {
		t.Errorf("LoadSSHConfig(missing) = %v, %v, %v; want an empty config", c.Aliases(), c.Err, err)
	}
}

func FuzzSSHConfigAliases(f *testing.F) {
	f.Add("Host a b\n  Port 22\n")
	f.Add("Host *\nMatch final\nHost = x\n")
	f.Add("Host a*b !c d?\nInclude /nonexistent/*\n")
	f.Add("Match host x\nHost y #c\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		path := filepath.Join(dir, "config")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := LoadSSHConfig(path)
		if err != nil {
			t.Fatalf("LoadSSHConfig: %v", err)
		}
		seen := map[string]bool{}
		for _, a := range c.Aliases() {
			if !isConcrete(a) || strings.ContainsAny(a, " \t\n") {
				t.Fatalf("alias %q is a pattern or holds whitespace", a)
			}
			if seen[a] {
				t.Fatalf("alias %q listed twice", a)
			}
			seen[a] = true
		}
	})
}
