package claudecode_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/expect"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// panesDir holds the corpus classify's TestGolden reads; the screens of a
// first run go there, since Claude Code writes no status file before its
// input box (nothing to label them by, as golden/real's are).
const panesDir = "../../golden/panes"

// A startupScreen is one screen of a first run: what shows it, the keys a
// human would press to go on, and why it is a QUESTION.
type startupScreen struct {
	name string
	says string   // a line of the screen's own words, to know it is drawn
	keys []string // what the test presses to go on, as a human would
	why  string
}

// firstRun is every screen Claude Code draws before its input box on a new
// machine, in the order it draws them, with a key and a new folder, in
// bypass mode (the warning comes last).
var firstRun = []startupScreen{
	{"theme", "Choose the text style", []string{"Enter"},
		"its onboarding's first screen, the text style picker under the Welcome banner: an unnumbered list with the ❯ cursor, no footer, no input box"},
	{"api-key", "Do you want to use this API key?", []string{"Up", "Enter"},
		"its onboarding asks whether to use the key found in the environment"},
	{"security-notes", "Security notes:", []string{"Enter"},
		"its onboarding's security notes, numbered, over Press Enter to continue"},
	{"trust", "Quick safety check", []string{"Down", "Enter"},
		"the folder trust dialog: trusting lets the folder's settings act"},
	{"bypass-warning", "WARNING: Claude Code running in Bypass", []string{"Down", "Enter"},
		"the warning before bypass mode, whose Yes lets every command run unasked"},
}

// noKeyRun is what a first run with no key draws after the text style.
var noKeyRun = []startupScreen{
	{"", "Choose the text style", []string{"Enter"}, ""},
	{"login-method", "Select login method:", nil,
		"its onboarding asks how to log in (a subscription, the Console, a cloud platform): a sign-in here"},
}

// TestCaptureStartup drives the real Claude Code through a first run, with
// a key and without, at two widths, and writes each screen it draws before
// its input box into golden/panes as a QUESTION: a human must answer it at
// the terminal. The internet its onboarding checks first is a
// fakeapi.Hello. It runs only with -capture; classify's TestGolden -update
// then fills in each case's rule, question and options, to be read in the
// diff.
func TestCaptureStartup(t *testing.T) {
	if !*termagent.CaptureFlag {
		t.Skip("captures only with -capture")
	}
	bin := claudecode.Binary(t)
	version, err := claudecode.BinaryVersion(t.Context(), bin)
	if err != nil {
		t.Fatal(err)
	}
	short := version[strings.LastIndex(version, ".")+1:]
	for _, width := range []int{60, 100} {
		for _, run := range []struct {
			name   string
			noKey  bool
			mode   claudecode.Mode
			screen []startupScreen
		}{
			{"key", false, claudecode.Bypass, firstRun},
			{"no-key", true, claudecode.Manual, noKeyRun},
		} {
			t.Run(fmt.Sprintf("%s-%d", run.name, width), func(t *testing.T) {
				t.Parallel()
				hello := fakeapi.NewHello(t)
				api := fakeapi.New(t)
				s := claudecode.Start(t, testenv.Tmux(t), claudecode.Config{
					Binary: bin, API: api.URL, Mode: run.mode, Width: width, Height: 40,
					FirstRun: true, NoKey: run.noKey, Env: hello.Env(),
				})
				for _, sc := range run.screen {
					snap := s.Settle(t, claudecode.StartupTimeout, sc.says, func(screen string) bool {
						return strings.Contains(screen, sc.says)
					})
					if sc.name != "" {
						writeStartup(t, fmt.Sprintf("claude-%s-%d-startup-%s", short, width, sc.name), version, width, sc, snap)
					}
					for _, k := range sc.keys {
						s.Keys(t, k)
						time.Sleep(300 * time.Millisecond)
					}
				}
				t.Logf("the proxy served %q", hello.Served())
			})
		}
	}
}

func writeStartup(t *testing.T, base, version string, width int, sc startupScreen, snap termagent.Snapshot) {
	t.Helper()
	for _, c := range []struct {
		suffix, pane, how string
	}{
		{"", snap.Plain, "capture-pane -p -J"},
		{".e", snap.Escapes, "capture-pane -p -e -J"},
	} {
		w := expect.Want{
			State:   "QUESTION",
			Agent:   "Claude Code",
			Version: version,
			Why: fmt.Sprintf("real Claude Code %s, first run, %d columns, %s: %s; a QUESTION relayed, never typed into from the chat (issue 35)",
				version, width, c.how, sc.why),
		}
		name := base + c.suffix
		if err := os.WriteFile(filepath.Join(panesDir, name+".pane"), []byte(c.pane), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(panesDir, name+".want"), []byte(w.Format()), 0o644); err != nil {
			t.Fatal(err)
		}
		r := classify.Classify(classify.ParseScreen([]byte(c.pane)), classify.Options{})
		t.Logf("captured %s: the classifier says %s (%s)", name, r.State, r.Agent)
	}
}
