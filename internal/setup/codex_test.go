package setup

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/mirror"
)

const testBin = "/opt/omega/omega-monitor"

// ourTableText is the table install writes for testBin, with no env.
var ourTableText = codexMarker + "\n[mcp_servers.omega-monitor]\ncommand = \"/opt/omega/omega-monitor\"\nargs = [\"mcp\"]\n"

func TestEditCodexConfig(t *testing.T) {
	t.Parallel()
	server := &codexServer{Command: testBin, Args: []string{"mcp"}}
	userContent := "# my settings\nmodel = \"o3\" # the one I like\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\" # keep\nargs = [\n  \"--port\", # a comment in an array\n  \"9\",\n]\n\n# trailing words of mine\n"
	for _, tc := range []struct {
		name    string
		in      string
		want    *codexServer // nil: uninstall
		out     string       // "" with changed false: unchanged
		changed bool
		err     string // a part of the error
	}{
		{name: "empty file", in: "", want: server, out: ourTableText, changed: true},
		{name: "user content and comments kept, table after them", in: userContent, want: server,
			out: userContent + "\n" + ourTableText, changed: true},
		{name: "a file without its last newline", in: "model = \"o3\"", want: server,
			out: "model = \"o3\"\n\n" + ourTableText, changed: true},
		{name: "second install changes nothing", in: userContent + "\n" + ourTableText, want: server},
		{name: "an older binary's table is replaced in place",
			in:   "a = 1\n\n" + strings.Replace(ourTableText, "/opt/omega/omega-monitor", "/usr/local/bin/omega-monitor", 1) + "\n[later]\nb = 2\n",
			want: server, out: "a = 1\n\n" + ourTableText + "\n[later]\nb = 2\n", changed: true},
		{name: "a table of ours without the marker, with the user's comment below kept",
			in:   "[mcp_servers.omega-monitor]\ncommand = \"omega-monitor\"\nargs = [\"mcp\"]\n\n# about the next one\n[mcp_servers.x]\ncommand = \"x\"\n",
			want: server, out: ourTableText + "\n# about the next one\n[mcp_servers.x]\ncommand = \"x\"\n", changed: true},
		{name: "env written when a state home is set", in: "",
			want: &codexServer{Command: testBin, Args: []string{"mcp"}, Env: map[string]string{"OMEGA_MONITOR_HOME": "/srv/a \"b\""}},
			out:  ourTableText + "env = { \"OMEGA_MONITOR_HOME\" = \"/srv/a \\\"b\\\"\" }\n", changed: true},
		{name: "[mcp_servers] with other servers, as a header of its own", in: "[mcp_servers]\n\n[mcp_servers.a]\ncommand = \"a\"\n",
			want: server, out: "[mcp_servers]\n\n[mcp_servers.a]\ncommand = \"a\"\n\n" + ourTableText, changed: true},
		{name: "a file ending in blank lines", in: "a = 1\n\n", want: server, out: "a = 1\n\n\n" + ourTableText, changed: true},
		{name: "a header in a multi-line string is not a table", in: "note = \"\"\"\n[mcp_servers.omega-monitor]\n\"\"\"\n",
			want: server, out: "note = \"\"\"\n[mcp_servers.omega-monitor]\n\"\"\"\n\n" + ourTableText, changed: true},
		{name: "uninstall takes out exactly what install added", in: userContent + "\n" + ourTableText, out: userContent, changed: true},
		{name: "uninstall of a table in the middle keeps what is around it",
			in:  "a = 1\n\n" + ourTableText + "[mcp_servers.omega-monitor.env]\nOMEGA_MONITOR_HOME = \"/x\"\n\n# mine\n[b]\nc = 2\n",
			out: "a = 1\n\n\n# mine\n[b]\nc = 2\n", changed: true},
		{name: "uninstall with nothing of ours changes nothing", in: userContent},
		{name: "uninstall leaves a server of the user's under our name", in: "[mcp_servers.omega-monitor]\ncommand = \"npx\"\nargs = [\"their-server\"]\n"},
		{name: "malformed file, named by its line", in: "model = \"o3\"\n[mcp_servers.docs\ncommand = \"x\"\n", want: server,
			err: "config.toml is not TOML that install can read, left as it is: line 2:"},
		{name: "malformed file on uninstall", in: "a = = 1\n", err: "line 1:"},
		{name: "a server of the user's under our name", in: "[mcp_servers.omega-monitor]\ncommand = \"npx\"\nargs = [\"their-server\"]\n", want: server,
			err: "the MCP server omega-monitor in config.toml is not ours"},
		{name: "ours as dotted keys is refused, not duplicated",
			in: "mcp_servers.omega-monitor.command = \"omega-monitor\"\nmcp_servers.omega-monitor.args = [\"mcp\"]\n", want: server,
			err: "sets mcp_servers as keys at its top"},
		{name: "mcp_servers as an inline table cannot take ours", in: "mcp_servers = { docs = { command = \"d\" } }\n", want: server,
			err: "sets mcp_servers as keys at its top"},
		{name: "ours in mcp_servers' inline table", in: "mcp_servers = { omega-monitor = { command = \"omega-monitor\", args = [\"mcp\"] } }\n", want: server,
			err: "sets mcp_servers as keys at its top"},
		{name: "a file too big to edit", in: "# " + strings.Repeat("x", maxCodexConfig) + "\n", want: server, err: "more than a config install edits"},
		{name: "mcp_servers not a table", in: "mcp_servers = 3\n", want: server, err: "sets mcp_servers as keys at its top (mcp_servers = { ... } or mcp_servers.NAME...) or in [mcp_servers] (line 1)"},
		{name: "a header with blanks and quotes is ours all the same",
			in:   "a = 1\n[ mcp_servers . \"omega-monitor\" ] # mine\ncommand = 'omega-monitor'\nargs = [ \"mcp\", ]\n\n[b]\n",
			want: server, out: "a = 1\n" + ourTableText + "\n[b]\n", changed: true},
		{name: "a header in a multi-line literal string, and one after it", in: "s = '''\n[mcp_servers.omega-monitor]\n'''\n['mcp_servers'.\"omega-monitor\"]\ncommand = \"omega-monitor\"\nargs = [\"mcp\"]\n",
			want: server, out: "s = '''\n[mcp_servers.omega-monitor]\n'''\n" + ourTableText, changed: true},
		{name: "a header in an array is not a table", in: "a = [\n[1, 2],\n[mcp_servers.x]\n]\n", want: server,
			out: "a = [\n[1, 2],\n[mcp_servers.x]\n]\n\n" + ourTableText, changed: true},
		{name: "quotes and brackets in comments and strings", in: "a = \"[\\\"#\" # ] \"\"\"\n[b] # [\nc = '\\' # '''\n", want: server,
			out: "a = \"[\\\"#\" # ] \"\"\"\n[b] # [\nc = '\\' # '''\n\n" + ourTableText, changed: true},
		{name: "CRLF lines kept", in: "a = 1\r\n[b]\r\nc = 2\r\n", want: server, out: "a = 1\r\n[b]\r\nc = 2\r\n\n" + ourTableText, changed: true},
		{name: "an unterminated multi-line string, named by the line it begins", in: "a = 1\nnote = \"\"\"\n[x]\n", want: server,
			err: "config.toml is not TOML that install can read, left as it is: line 2: a multi-line string begun here is not closed"},
		{name: "an unterminated multi-line literal string on uninstall", in: "note = '''\n" + ourTableText, err: "line 1: a multi-line string begun here is not closed"},
		{name: "an array not closed", in: "a = [\n1,\n[b]\n", want: server, err: "line 1: an array or inline table begun here is not closed"},
		{name: "a bracket that closes nothing", in: "a = 1]\n", want: server, err: "line 1: a ']' that closes nothing open"},
		{name: "a string not closed on its line", in: "a = \"x\n[b]\n", want: server, err: "line 1: a string not closed on its line"},
		{name: "a header with words after it", in: "[a] b = 1\n", want: server, err: "line 1: a table header install cannot read"},
		{name: "an array header not closed as one", in: "[[a]\n", want: server, err: "line 1: a table header install cannot read"},
		{name: "a key with an escape TOML does not know", in: "\"a\\q\" = 1\n", want: server, err: "line 1: neither a table header nor key = value"},
		{name: "a line that is neither", in: "[a]\njust words\n", want: server, err: "line 2: neither a table header nor key = value"},
		{name: "a bare [mcp_servers] with dotted keys", in: "[mcp_servers]\ndocs.command = \"d\"\n", want: server,
			err: "or in [mcp_servers] (line 2)"},
		{name: "mcp_servers by a quoted dotted key at the top", in: "\"mcp_servers\" . docs = { command = \"d\" }\n[a]\n", want: server,
			err: "sets mcp_servers as keys at its top"},
		{name: "mcp_servers as an array of tables", in: "[[mcp_servers]]\nname = \"d\"\n", want: server, err: "makes mcp_servers an array of tables ([[...]], line 1)"},
		{name: "our table twice", in: ourTableText + "[mcp_servers.\"omega-monitor\"]\n", want: server, err: "has the table [mcp_servers.omega-monitor] twice (lines 2 and 5)"},
		{name: "a table under ours apart from it", in: ourTableText + "[x]\n[mcp_servers.omega-monitor.env]\n", err: "apart from it (line 6)"},
		{name: "a table under our name with no server of ours", in: "[mcp_servers.omega-monitor.env]\nA = \"1\"\n", want: server, err: "is not ours"},
		{name: "ours with args over lines is not sure to be ours", in: "[mcp_servers.omega-monitor]\ncommand = \"omega-monitor\"\nargs = [\n\"mcp\"]\n", want: server, err: "is not ours"},
		{name: "ours with an escaped name is ours", in: "[mcp_servers.\"omega\\u002dmonitor\"]\ncommand = \"omega\\u002Dmonitor\"\nargs = [\"mcp\"]\n",
			want: server, out: ourTableText, changed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, changed, err := editCodexConfig("config.toml", []byte(tc.in), tc.want, testBin)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if changed != tc.changed {
				t.Errorf("changed %v, want %v", changed, tc.changed)
			}
			if !tc.changed {
				return
			}
			if diff := cmp.Diff(tc.out, string(out)); diff != "" {
				t.Errorf("config.toml (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEditCodexConfigRoundTrip: install then uninstall gives the file back
// byte for byte, whatever it held.
func TestEditCodexConfigRoundTrip(t *testing.T) {
	t.Parallel()
	server := &codexServer{Command: testBin, Args: []string{"mcp"}, Env: map[string]string{"OMEGA_MONITOR_HOME": "/s"}}
	for _, in := range []string{
		"",
		"model = \"o3\"\n",
		"# only a comment\n",
		"[projects.\"/w\"]\ntrust_level = \"trusted\"\n\n[mcp_servers.a]\ncommand = \"a\"\n\n",
		"s = '''\n[x]\n'''\n[tbl]\nk = \"v\" # c\n",
	} {
		added, _, err := editCodexConfig("config.toml", []byte(in), server, testBin)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		again, changed, err := editCodexConfig("config.toml", added, server, testBin)
		if err != nil || changed {
			t.Errorf("%q: a second install changed it (%v):\n%s", in, err, again)
		}
		back, _, err := editCodexConfig("config.toml", added, nil, testBin)
		if err != nil {
			t.Fatalf("%q: uninstall: %v", in, err)
		}
		if diff := cmp.Diff(in, string(back)); diff != "" {
			t.Errorf("install then uninstall (-before +after):\n%s", diff)
		}
	}
}

func TestInstallCodex(t *testing.T) {
	t.Parallel()
	env := testEnv(t, nil)
	codexHome := filepath.Join(env.Home, "elsewhere", "codex")
	env.Getenv = func(name string) string {
		if name == "CODEX_HOME" {
			return codexHome
		}
		return ""
	}
	config := filepath.Join(codexHome, "config.toml")
	skill := filepath.Join(codexHome, "skills", "monitor", "SKILL.md")
	mine := "# mine\nmodel = \"o3\"\n"
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := install(t, env, Options{Codex: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"codex: wrote " + skill, "registered the MCP server omega-monitor (" + testBin + " mcp) in " + config,
		"the file before is kept as " + config + codexBackupSuffix} {
		if !strings.Contains(out, want) {
			t.Errorf("install said %q, want it to say %q", out, want)
		}
	}
	got, _ := os.ReadFile(config)
	if diff := cmp.Diff(mine+"\n"+ourTableText, string(got)); diff != "" {
		t.Errorf("config.toml (-want +got):\n%s", diff)
	}
	if b, _ := os.ReadFile(config + codexBackupSuffix); string(b) != mine {
		t.Errorf("backup holds %q, want %q", b, mine)
	}
	text, _ := os.ReadFile(skill)
	prompt, _ := mirror.MonitorAgentPrompt(mirror.ModeFleet, "")
	for _, want := range []string{"name: monitor\n", codexSkillMarker, prompt, mirror.NoticeSpawned, mirror.NoticeNoSpawn, testBin} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the skill lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(string(text), "@") && strings.Contains(string(text), "@PROMPT@") {
		t.Errorf("the skill holds a placeholder:\n%s", text)
	}

	out, err = install(t, env, Options{Codex: true})
	if err != nil || !strings.Contains(out, "codex: up to date") {
		t.Errorf("a second install: %v\n%s", err, out)
	}

	out, err = install(t, env, Options{Codex: true, Uninstall: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got, _ := os.ReadFile(config); string(got) != mine {
		t.Errorf("after uninstall config.toml holds %q, want %q", got, mine)
	}
	for _, gone := range []string{skill, filepath.Dir(skill), filepath.Dir(filepath.Dir(skill)), config + codexBackupSuffix} {
		if _, err := os.Lstat(gone); !os.IsNotExist(err) {
			t.Errorf("%s is still there after uninstall (%v)\n%s", gone, err, out)
		}
	}
}

// TestInstallCodexIntoNothing: with no Codex home at all, install makes it,
// and uninstall leaves no trace of it.
func TestInstallCodexIntoNothing(t *testing.T) {
	t.Parallel()
	env := testEnv(t, nil)
	if out, err := install(t, env, Options{Codex: true}); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	codexHome := filepath.Join(env.Home, ".codex")
	got, _ := os.ReadFile(filepath.Join(codexHome, "config.toml"))
	if diff := cmp.Diff(ourTableText, string(got)); diff != "" {
		t.Errorf("config.toml (-want +got):\n%s", diff)
	}
	out, err := install(t, env, Options{Codex: true, Uninstall: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := os.Lstat(codexHome); !os.IsNotExist(err) {
		entries, _ := os.ReadDir(codexHome)
		t.Errorf("%s is still there after uninstall: %v\n%s", codexHome, entries, out)
	}
}

// TestInstallCodexRefuses: a skill of the user's under our name, and a
// config.toml install cannot read, are left as they are, and said.
func TestInstallCodexRefuses(t *testing.T) {
	t.Parallel()
	env := testEnv(t, nil)
	skill := filepath.Join(env.Home, ".codex", "skills", "monitor", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(skill), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(skill, []byte("---\nname: monitor\n---\nmine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := install(t, env, Options{Codex: true}); err == nil || !strings.Contains(err.Error(), "is not ours") {
		t.Errorf("install over the user's skill: %v", err)
	}
	if _, err := install(t, env, Options{Codex: true, Uninstall: true}); err == nil || !strings.Contains(err.Error(), "left in place") {
		t.Errorf("uninstall of the user's skill: %v", err)
	}
	if b, _ := os.ReadFile(skill); string(b) != "---\nname: monitor\n---\nmine\n" {
		t.Errorf("the user's skill changed: %q", b)
	}
	os.Remove(skill)
	config := filepath.Join(env.Home, ".codex", "config.toml")
	bad := "model = \"o3\"\n\n[tui\n"
	if err := os.WriteFile(config, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := install(t, env, Options{Codex: true})
	if err == nil || !strings.Contains(err.Error(), config+" is not TOML that install can read, left as it is: line 3") {
		t.Errorf("install into a malformed config.toml: %v", err)
	}
	if b, _ := os.ReadFile(config); string(b) != bad {
		t.Errorf("the malformed config.toml changed: %q", b)
	}
}

// TestInstallCodexWithoutTheServer: without omega-monitor-mcp, --codex
// installs nothing into Codex.
func TestInstallCodexWithoutTheServer(t *testing.T) {
	t.Parallel()
	env := testEnv(t, nil)
	env.FindMCPServer = func() (string, error) { return "", errors.New("no omega-monitor-mcp beside omega-monitor or on PATH") }
	_, err := install(t, env, Options{Codex: true})
	var step *StepError
	if !errors.As(err, &step) || step.Step != "codex" {
		t.Fatalf("install --codex without the server: %v", err)
	}
	if _, err := os.Stat(filepath.Join(env.Home, ".codex")); !os.IsNotExist(err) {
		t.Errorf("install --codex without the server made %s", filepath.Join(env.Home, ".codex"))
	}
}

// TestDoctorSaysAStaleSkill: a $monitor skill of another release, or for
// another binary, is a FIX; this release's is ok; none says nothing.
func TestDoctorSaysAStaleSkill(t *testing.T) {
	t.Parallel()
	env := testEnv(t, nil)
	if _, ok := codexSkillCheck(env); ok {
		t.Errorf("doctor spoke of a skill that is not there")
	}
	if out, err := install(t, env, Options{Codex: true}); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if c, ok := codexSkillCheck(env); !ok || !c.OK {
		t.Errorf("the skill just installed: %v, %v", c, ok)
	}
	skill := filepath.Join(env.Home, ".codex", "skills", "monitor", "SKILL.md")
	b, _ := os.ReadFile(skill)
	if err := os.WriteFile(skill, []byte(strings.Replace(string(b), "Hard boundaries", "Boundaries", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, ok := codexSkillCheck(env); !ok || c.OK || !strings.Contains(c.Fix, "install --codex") {
		t.Errorf("a skill of another release: %v, %v", c, ok)
	}
}

// FuzzEditCodexConfig: whatever config.toml holds, the edit never panics;
// what install writes holds our table once, with every line of the file
// before kept in order; a second install changes nothing; and for a file
// without a server of our name, ending in a newline, uninstall gives it
// back byte for byte.
func FuzzEditCodexConfig(f *testing.F) {
	for _, seed := range []string{"", "a = 1\n", "[mcp_servers.x]\ncommand = \"x\"\n", "s = \"\"\"\n[t]\n\"\"\"\n",
		"a = [\n  1, # c\n  2,\n]\n[b]\nc = { d = 1 }\n", "[\"mcp_servers\".\"omega-monitor\"]\ncommand = \"omega-monitor\"\nargs = [\"mcp\"]\n",
		"x = '''\n'''\n[[arr]]\nk = 1\n", "[ mcp_servers . 'omega-monitor' ]\ncommand = 'omega-monitor'\nargs = ['mcp']\n[mcp_servers.omega-monitor.env]\nA = \"1\"\n# c\n",
		"a = \"\"\"\\\"\"\"\" # \"\"\"\n[b]\r\n"} {
		f.Add(seed)
	}
	server := &codexServer{Command: testBin, Args: []string{"mcp"}, Env: map[string]string{"OMEGA_MONITOR_HOME": "/s"}}
	f.Fuzz(func(t *testing.T, in string) {
		added, _, err := editCodexConfig("config.toml", []byte(in), server, testBin)
		if err != nil {
			return
		}
		if n := strings.Count(string(added), server.text()); n != 1 {
			t.Fatalf("install wrote our table %d times:\n%s", n, added)
		}
		kinds, err := scanTOML(splitKeep(added))
		if err != nil {
			t.Fatalf("install wrote what it cannot read again: %v\n%s", err, added)
		}
		headers := 0
		for _, k := range kinds {
			if k.header && isOurKey(k.key) {
				headers++
			}
		}
		if headers != 1 {
			t.Fatalf("install wrote %d headers of ours:\n%s", headers, added)
		}
		// Every line of the file before is kept: all of them, with our
		// table after them, when it names no server of ours; else those
		// before the first line that names it.
		if !strings.Contains(in, MCPServerName) {
			want := in
			if want != "" && !strings.HasSuffix(want, "\n") {
				want += "\n"
			}
			if want != "" {
				want += "\n"
			}
			if diff := cmp.Diff(want+server.text(), string(added)); diff != "" {
				t.Fatalf("install changed more than it added (-want +got):\n%s", diff)
			}
		} else if !keptBefore(splitKeep([]byte(in)), splitKeep(added), MCPServerName) {
			t.Fatalf("install lost a line of the file:\n%s\n---\n%s", in, added)
		}
		if again, changed, err := editCodexConfig("config.toml", added, server, testBin); err != nil || changed {
			t.Fatalf("a second install changed it (%v):\n%s\n---\n%s", err, added, again)
		}
		back, _, err := editCodexConfig("config.toml", added, nil, testBin)
		if err != nil {
			t.Fatalf("uninstall: %v", err)
		}
		if !strings.Contains(in, MCPServerName) && (in == "" || strings.HasSuffix(in, "\n")) && string(back) != in {
			t.Fatalf("install then uninstall (-before +after):\n%s", cmp.Diff(in, string(back)))
		}
	})
}

// keptBefore says whether the lines of in before the first that names
// ours (or its marker line) are the first lines of out, their line
// endings aside.
func keptBefore(in, out []string, ours string) bool {
	for i, line := range in {
		if strings.Contains(line, ours) {
			return true
		}
		if i >= len(out) || strings.TrimRight(line, "\n") != strings.TrimRight(out[i], "\n") {
			return false
		}
	}
	return true
}
