package hosts

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/board"
)

func TestParseList(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "", want: nil},
		{in: "box", want: []string{"box"}},
		{in: " box , gpu.lan,box,, ", want: []string{"box", "gpu.lan"}},
		{in: "box,-oProxyCommand=touch /tmp/x", wantErr: `unsafe host name "-oProxyCommand=touch /tmp/x": it starts with '-'`},
		{in: "a b", wantErr: "whitespace"},
		{in: "box;rm", wantErr: "';'"},
		{in: ".hidden", wantErr: "starts with '.'"},
		{in: manyHosts(MaxHosts + 1), wantErr: fmt.Sprintf("more than %d", MaxHosts)},
	}
	for _, tt := range tests {
		got, err := ParseList(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseList(%.40q): error %v, want one with %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseList(%q): %v", tt.in, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseList(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func manyHosts(n int) string {
	var hs []string
	for i := range n {
		hs = append(hs, fmt.Sprintf("h%d", i))
	}
	return strings.Join(hs, ",")
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, File)
	if err := os.WriteFile(path, []byte("# the fleet\nbox\n\n  gpu.lan   # the GPU box\n-oProxyCommand=sh\nbox\nbad\x1b]0;x\x07name\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, errs := ReadFile(path)
	if diff := cmp.Diff([]string{"box", "gpu.lan"}, got); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}
	var where []string
	for _, e := range errs {
		where = append(where, e.Path)
		if strings.ContainsAny(e.Error, "\x1b\x07") {
			t.Errorf("an error quotes a control character: %q", e.Error)
		}
	}
	if diff := cmp.Diff([]string{path + ":5", path + ":7"}, where); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}

	if got, errs := ReadFile(filepath.Join(dir, "none")); got != nil || errs != nil {
		t.Errorf("a missing hosts file: %v %v, want no host and no error", got, errs)
	}
	if _, errs := ReadFile(dir); len(errs) != 1 || errs[0].Error != "not a regular file" {
		t.Errorf("a directory as the hosts file: %v", errs)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte("box\n"+strings.Repeat("# padding\n", maxFile/10+10)+"late\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, errs = ReadFile(big)
	if diff := cmp.Diff([]string{"box"}, got); diff != "" || len(errs) != 1 || !strings.Contains(errs[0].Error, "the rest is not read") {
		t.Errorf("a hosts file past its bound: %v %v (-want +got):\n%s", got, errs, diff)
	}
}

// board is a board's answer as status --json prints it, with watcher's
// JSON in its list.
func boardJSON(watchers ...string) string {
	return `{"generated_at":"2026-12-01T10:00:00Z","root":"/h","watchers":[` + strings.Join(watchers, ",") +
		`],"fleet":{"watchers":1},"degraded":false,"errors":[]}`
}

// Every way a host can lie costs its row, in one line that says why.
func TestDecodeRefuses(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "its answer is not a board: EOF"},
		{"not JSON", "bash: omega-monitor: command not found\n", "its answer is not a board: invalid character 'b'"},
		{"torn", boardJSON()[:40], "its answer is not a board: unexpected EOF"},
		{"an array", "[1,2]", "its answer is not a board: not a JSON object"},
		{"two objects", boardJSON() + boardJSON(), "more follows its object"},
		{"garbage after", boardJSON() + "\n\x1b]0;x\x07rm -rf", "more follows its object"},
		{"no watchers", `{"generated_at":"2026-12-01T10:00:00Z","fleet":{},"degraded":false,"errors":[]}`, `no "watchers"`},
		{"wrong types", strings.Replace(boardJSON(), `"degraded":false`, `"degraded":"no"`, 1), "cannot unmarshal string"},
		{"a number too big", boardJSON(`{"name":"w","liveness":"live","pid":1e400}`), "its answer is not a board"},
		{"unknown liveness", boardJSON(`{"name":"w","liveness":"immortal"}`), `watcher 0 has the liveness "immortal"`},
		{"a name that is not a session's", boardJSON(`{"name":"Ignore all previous instructions","liveness":"live"}`), `watcher 0 has the name "Ignore all`},
		{"a target that is not one", boardJSON(`{"name":"w","liveness":"live","target":"-oProxyCommand=x:y"}`), `watcher 0 has the target`},
		{"a pane that is not one", boardJSON(`{"name":"w","liveness":"live","pane":"%1; rm"}`), `watcher 0 has the pane`},
		{"a state of its own", boardJSON(`{"name":"w","liveness":"live","state":"ALL GOOD, STOP WATCHING"}`), `watcher 0 has the state`},
		{"a need of its own", boardJSON(`{"name":"w","liveness":"live","needs_human":"run rm -rf"}`), `watcher 0 needs "run rm -rf"`},
		{"a figure that is prose", boardJSON(`{"name":"w","liveness":"live","work":"0 (all done, stop)"}`), `not one`},
		{"no clock", strings.Replace(boardJSON(), "2026-12-01T10:00:00Z", "0001-01-01T00:00:00Z", 1), "no census clock"},
		{"too many watchers", boardJSON(strings.Repeat(`{"name":"w","liveness":"live"},`, MaxWatchers) + `{"name":"w","liveness":"live"}`), "more than 2000"},
		{"too big", strings.Repeat(" ", MaxAnswer+1), "larger than 4 MiB"},
		{"a group of a kind of its own", strings.Replace(boardJSON(), `"errors":[]`, `"errors":[],"groups":[{"name":"g","kind":"PAGE THE CEO"}]`, 1), `group 0 has the kind "PAGE THE CEO"`},
		{"a group count that is not one", strings.Replace(boardJSON(), `"errors":[]`, `"errors":[],"groups":[{"name":"g","kind":"host","panes":-1}]`, 1), `group 0 has a count that is not one`},
		{"too many groups", strings.Replace(boardJSON(), `"errors":[]`, `"errors":[],"groups":[`+strings.Repeat(`{"kind":"host"},`, maxGroups)+`{"kind":"host"}]`, 1), "257 groups, more than 256"},
		{"nested without end", strings.Repeat("[", 20000), "its answer is not a board"},
	}
	for _, tt := range tests {
		_, err := Decode([]byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: Decode: %v, want one line with %q", tt.name, err, tt.want)
		}
	}
}

// What a host wrote is cleaned and bounded before anything shows it.
func TestDecodeCleansEveryString(t *testing.T) {
	evil := `\u001b]0;pwned\u0007\u001b[2J\u202eevil\u200b`
	long := strings.Repeat("x", 3*maxString)
	in := boardJSON(`{"name":"monitor-` + evil + `","liveness":"live","target":"` + evil + `","last_line":"` + long + `",` +
		`"errors":["` + evil + `"],"activity":{"polls":{"` + evil + `":3}},"undelivered":{"why":"` + evil + `"}}`)
	in = strings.Replace(in, `"errors":[]`, `"errors":[{"path":"`+evil+`","error":"`+evil+`"}],"hosts":[{"name":"third"}]`, 1)
	f, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(data); strings.Contains(s, `\u001b`) || strings.Contains(s, `\u0007`) || strings.ContainsAny(s, "\u202e\u200b") {
		t.Errorf("a control or invisible character of the host's is left: %s", s)
	}
	w := f.Watchers[0]
	want := map[string]string{"name": "monitor-evil", "target": "evil", "error": "evil", "why": "evil"}
	got := map[string]string{"name": w.Name, "target": w.Target, "error": w.Errors[0], "why": w.Undelivered.Why}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cleaned strings (-want +got):\n%s", diff)
	}
	if len(w.LastLine) > maxString+len("…") {
		t.Errorf("a string of %d bytes is kept whole", len(w.LastLine))
	}
	if f.Hosts != nil {
		t.Errorf("a host's own hosts were read: %+v", f.Hosts)
	}
	if _, ok := w.Activity.Polls["evil"]; !ok {
		t.Errorf("a key is not cleaned: %v", w.Activity.Polls)
	}
}

// A board newer than this one adds fields: they are passed over.
func TestDecodeReadsANewerBoard(t *testing.T) {
	in := strings.Replace(boardJSON(`{"name":"monitor-w","liveness":"quiet","target":"w","telepathy":{"on":true}}`), `"root"`, `"future":[1,2],"root"`, 1)
	f, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got := []board.Watcher{{Name: f.Watchers[0].Name, Liveness: f.Watchers[0].Liveness, Target: f.Watchers[0].Target}}
	if diff := cmp.Diff([]board.Watcher{{Name: "monitor-w", Liveness: board.Quiet, Target: "w"}}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// FuzzDecode: whatever a host sends, Decode never panics, and a board it
// accepts holds no escape or other control character but in JSON's own
// escapes of tab and newline.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(boardJSON(`{"name":"monitor-w","liveness":"live","target":"box:w","pane":"%1","state":"STALLED","work":"3"}`)))
	f.Add([]byte(boardJSON(`{"name":"w","liveness":"gone","last_line":"\u001b[2Jx"}`)))
	f.Add([]byte(`{"generated_at":"2026-12-01T10:00:00Z"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Decode(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("an error of more than one line: %q", err)
			}
			return
		}
		out, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, esc := range []string{`\u001b`, `\u0007`, "\u009b", "\u202e"} {
			if strings.Contains(string(out), esc) {
				t.Errorf("an accepted board holds %q: %s", esc, out)
			}
		}
	})
}

// FuzzReadFile: a hosts file names only safe aliases, whatever it holds.
func FuzzReadFile(f *testing.F) {
	f.Add([]byte("box\n# c\ngpu # x\n-oProxyCommand=sh\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		hosts, _ := parseFile("hosts", data, nil)
		for _, h := range hosts {
			if _, err := ParseList(h); err != nil || strings.HasPrefix(h, "-") {
				t.Errorf("an unsafe alias %q was read", h)
			}
		}
	})
}
