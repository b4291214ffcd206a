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
	if diff := cmp.Diff([]string{"matrix", "box.lan", "inner", "last"}, c.Aliases()); diff != "" {
		t.Errorf("Aliases (-want +got):\n%s", diff)
	}
}

// TestSSHConfigLines: the keywords and forms ssh accepts, whether or not a
// config library knows them, and Include as ssh follows it.
func TestSSHConfigLines(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("fleet-a.conf", "Host fa\n")
	write("fleet-b.conf", "HOST fb fa\n")
	self := filepath.Join(dir, "self.conf")
	write("self.conf", "Host looped\nInclude "+self+"\n")
	main := write("config", `Host a b*
  Port 1
Match final
  User x
  Include `+filepath.Join(dir, "fleet-*.conf")+`
Host = c # note
host=d
Host "with space" e
Host f "g"
  HostName "unclosed
Include /nonexistent/* `+self+`
Match host h
Host	i
`)
	c, err := LoadSSHConfig(main)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a", "fa", "fb", "c", "d", "e", "f", "g", "looped", "i"}
	if diff := cmp.Diff(want, c.Aliases()); diff != "" {
		t.Errorf("Aliases (-want +got):\n%s", diff)
	}
}

func TestSSHConfigUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		// root reads a file whatever its mode: a directory stands in.
		_, err := LoadSSHConfig(t.TempDir())
		if err == nil || !strings.HasPrefix(err.Error(), "coord: ssh config") {
			t.Errorf("LoadSSHConfig(a directory) = %v, want a coord: ssh config error", err)
		}
		return
	}
	path := writeConfig(t, "Host a\n")
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSSHConfig(path); err == nil || !strings.HasPrefix(err.Error(), "coord: ssh config") {
		t.Errorf("LoadSSHConfig(unreadable) = %v, want a coord: ssh config error", err)
	}
}

func TestSSHConfigMissingIsEmpty(t *testing.T) {
	c, err := LoadSSHConfig(filepath.Join(t.TempDir(), "none"))
	if err != nil || len(c.Aliases()) != 0 {
		t.Errorf("LoadSSHConfig(missing) = %v, %v; want an empty config", c.Aliases(), err)
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
