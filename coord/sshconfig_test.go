package coord

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kevinburke/ssh_config"
)

// TestSSHConfigAliases reads configs as ssh would, each in a directory of
// its own that is also the home directory: "$DIR" in a file's text is that
// directory, and the config read is the file named "config".
func TestSSHConfigAliases(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		dirs  []string // directories made where a glob finds them
		want  []string
	}{{
		name: "host with several patterns",
		files: map[string]string{"config": `# fleet
Host matrix box.lan
    HostName 100.64.0.7
    Port 42820
    User op
    IdentityFile ~/.ssh/id_fleet
Host last
`},
		want: []string{"matrix", "box.lan", "last"},
	}, {
		name: "wildcards and negation are not aliases",
		files: map[string]string{"config": `Host *.internal !bad
Host gpu? dev*
Host *
Host ok !except
`},
		want: []string{"ok"},
	}, {
		name:  "each alias once",
		files: map[string]string{"config": "Host a b\nHost b a c\n"},
		want:  []string{"a", "b", "c"},
	}, {
		name: "key=value",
		files: map[string]string{"config": `Host=a
Host = b # note
host =c
HOST	d
`},
		want: []string{"a", "b", "c", "d"},
	}, {
		name:  "tabs between patterns",
		files: map[string]string{"config": "Host\ta\t\tb\n\tHost c\n"},
		want:  []string{"a", "b", "c"},
	}, {
		name: "quoting",
		files: map[string]string{"config": `Host "with space" e
Host f "g" ""
  HostName "unclosed
  IdentityFile "/a b/key"
Host h
`},
		want: []string{"e", "f", "g", "h"},
	}, {
		name:  "crlf",
		files: map[string]string{"config": "Host a\r\n  Port 22\r\nHost b\r\n"},
		want:  []string{"a", "b"},
	}, {
		name:  "comments and blank lines only",
		files: map[string]string{"config": "# Host a\n\n   \n"},
	}, {
		// Match names no alias, whether ssh_config knows its criterion or
		// refuses it; a refused line costs that line only, and an Include
		// in a Match block is followed whatever the condition.
		name: "match blocks",
		files: map[string]string{
			"config": `Host before
Match host m1,m2 user x
  User x
Match all
Match final
  Include $DIR/inc.conf
Match exec "test -e /"
Match user root
Match originalhost o
Match canonical
Match
Host after
`,
			"inc.conf": "Host inmatch\n",
		},
		want: []string{"before", "inmatch", "after"},
	}, {
		name: "include absolute, where it stands",
		files: map[string]string{
			"config":   "Host a\nInclude $DIR/one.conf # note\nHost b\n",
			"one.conf": "Host one\n  Port 2200\nHost a\n",
		},
		want: []string{"a", "one", "b"},
	}, {
		name: "include glob and several arguments",
		files: map[string]string{
			"config":            "Include $DIR/fleet/*.conf $DIR/last.conf\n",
			"fleet/a.conf":      "Host fa\n",
			"fleet/b.conf":      "HOST fb fa\n",
			"fleet/c.conf.save": "Host notincluded\n",
			"last.conf":         "Host last\n",
		},
		want: []string{"fa", "fb", "last"},
	}, {
		name: "include=",
		files: map[string]string{
			"config":   "Include=$DIR/one.conf\ninclude = $DIR/two.conf\nINCLUDE\t$DIR/three.conf\n",
			"one.conf": "Host one\n", "two.conf": "Host two\n", "three.conf": "Host three\n",
		},
		want: []string{"one", "two", "three"},
	}, {
		name: "include relative to ~/.ssh and ~/",
		files: map[string]string{
			"config":             "Include conf.d/*\nInclude ~/tilde.conf\n",
			".ssh/conf.d/a.conf": "Host rel\n",
			"tilde.conf":         "Host tilde\n",
		},
		want: []string{"rel", "tilde"},
	}, {
		name: "include nested and looped",
		files: map[string]string{
			"config":      "Include $DIR/self.conf\nHost end\n",
			"self.conf":   "Host looped\nInclude $DIR/self.conf\nInclude $DIR/deeper.conf\n",
			"deeper.conf": "Host deeper\n",
		},
		want: []string{"looped", "deeper", "end"},
	}, {
		// ssh would read a.conf 3^16 times.
		name: "each file read once",
		files: map[string]string{
			"config": "Include $DIR/*.conf\n",
			"a.conf": "Host a\nInclude $DIR/*.conf $DIR/*.conf $DIR/*.conf\n",
			"b.conf": "Host b\n",
		},
		want: []string{"a", "b"},
	}, {
		name: "unreadable include skipped",
		files: map[string]string{
			"config":     "Include $DIR/inc/* /nonexistent/*\nInclude\nHost after\n",
			"inc/a.conf": "Host a\n",
			"inc/c.conf": "Host c\n",
		},
		dirs: []string{"inc/b.conf"},
		want: []string{"a", "c", "after"},
	}, {
		name: "devices and files too large skipped",
		files: map[string]string{
			"config":   "Include /dev/zero /dev/null $DIR/big.conf\nInclude\r\r /dev/full\nHost after\n",
			"big.conf": "Host big\n" + strings.Repeat("#", maxConfigSize),
		},
		want: []string{"after"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, d := range tt.dirs {
				if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			for name, text := range tt.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				text = strings.ReplaceAll(text, "$DIR", dir)
				if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			c, err := loadSSHConfig(filepath.Join(dir, "config"), dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, c.Aliases()); diff != "" {
				t.Errorf("Aliases (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoadSSHConfig: what is an error, through the exported entry point.
func TestLoadSSHConfig(t *testing.T) {
	dir := t.TempDir()
	inc := filepath.Join(dir, "inc.conf")
	config := filepath.Join(dir, "config")
	big := filepath.Join(dir, "big")
	for name, text := range map[string]string{
		inc:    "Host inner\n",
		config: "Host outer\nInclude " + inc + "\n",
		big:    "Host big\n" + strings.Repeat("#", maxConfigSize),
	} {
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		path    string
		want    []string
		wantErr bool
	}{
		{name: "file", path: config, want: []string{"outer", "inner"}},
		{name: "missing file is empty", path: filepath.Join(dir, "none")},
		// Tests run as root, who reads a file whatever its mode: a
		// directory is what cannot be read.
		{name: "unreadable", path: dir, wantErr: true},
		{name: "too large", path: big, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := LoadSSHConfig(tt.path)
			if tt.wantErr {
				if err == nil || !strings.HasPrefix(err.Error(), "coord: ssh config: ") || errors.Unwrap(err) == nil {
					t.Errorf("LoadSSHConfig(%s) = %v, want a wrapped coord: ssh config error", tt.path, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Path != tt.path {
				t.Errorf("Path = %q, want %q", c.Path, tt.path)
			}
			if diff := cmp.Diff(tt.want, c.Aliases()); diff != "" {
				t.Errorf("Aliases (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSSHConfigLibraryMatch holds ssh_config to the Match criteria the
// SSHConfig comment says it knows: if an upgrade changes them, the comment
// (and what configAliases skips) is to be read again.
func TestSSHConfigLibraryMatch(t *testing.T) {
	lines := []string{
		"Match all",
		"Match host a,b",
		"Match host a user b",
		"Match exec \"true\"",
		"Match final",
		"Match canonical",
		"Match user root",
		"Match localuser root",
		"Match originalhost a",
		"Match tagged t",
		"Match",
	}
	want := map[string]bool{
		"Match all":           true,
		"Match host a,b":      true,
		"Match host a user b": true,
	}
	got := map[string]bool{}
	for _, line := range lines {
		if _, err := ssh_config.DecodeBytes([]byte(line + "\n")); err == nil {
			got[line] = true
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Match lines ssh_config accepts (-want +got):\n%s", diff)
	}
}

// FuzzSSHConfigAliases reads configs in a home of the test's own, where
// ~/.ssh holds the config and a file it may include. A text with a "/" in
// it is skipped: an Include is to reach that home, not the machine's /proc
// or /dev (the table tests name /dev themselves).
func FuzzSSHConfigAliases(f *testing.F) {
	f.Add("Host a b\n  Port 22\n")
	f.Add("Host *\nMatch final\nHost = x\n")
	f.Add("Host a*b !c d?\nInclude nonexistent*\n")
	f.Add("Match host x\nHost y #c\n")
	f.Add("Host \"a b\" \"c\"\tx\r\n")
	f.Add("Include config config *\nHost x y*\n")
	f.Add("Include\r\r other\nHost x\n")
	home := f.TempDir()
	ssh := filepath.Join(home, ".ssh")
	if err := os.Mkdir(ssh, 0o700); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ssh, "other"), []byte("Host other\nInclude config *\n"), 0o600); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if strings.Contains(text, "/") {
			t.Skip()
		}
		path := filepath.Join(ssh, "config")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := loadSSHConfig(path, home)
		if err != nil {
			t.Fatalf("loadSSHConfig: %v", err)
		}
		seen := map[string]bool{}
		for _, a := range c.Aliases() {
			if !isConcrete(a) || strings.ContainsAny(a, " \t\r\n") {
				t.Fatalf("alias %q is a pattern or holds whitespace", a)
			}
			if seen[a] {
				t.Fatalf("alias %q listed twice", a)
			}
			seen[a] = true
		}
	})
}
