package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/icmd"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// ternScript is an agent the project does not ship, Tern: an input box
// open on its right (what is typed runs on) with a » prompt, a braille spinner while it works, and a y/n/a prompt
// when TERN_MODE=question, where any key is logged as KEY IN DIALOG. What
// it reads at its prompt is appended to TERN_LOG, and starts a turn of
// TERN_WORK seconds. With TERN_MODE=waiting it shows its idle screen
// while its turn is open (waiting for its model's first word), and says
// so in its events log, $TERN_HOME/logs/<pid>/session.events: a line
// naming its directory, then an "ask" every second. With TERN_MODE=hooked
// it shows its idle screen until $TERN_HOME/go exists, then its y/n/a
// prompt, and runs its hooks: each command its settings file,
// $TERN_HOME/conf/settings.json, holds.
const ternScript = `log=${TERN_LOG:?}
work=${TERN_WORK:-2}
edge=──────────────────────────────
screen() { printf '\033[H\033[2J'; printf '%s\n' "$@"; }
idle() {
	screen 'Tern v0.3 · ~/proj' '' '» fix the flaky test in ingest' '  The test raced on the clock; it now takes one.' '  ✓ done in 40s' '' \
		"┌${edge}" '│ » ' "└${edge}" '  tern · model m-1 · /help'
	printf '\033[8;5H'
}
if [ "${TERN_MODE:-}" = waiting ]; then
	events=${TERN_HOME:?}/logs/$$/session.events
	mkdir -p "${events%/*}"
	printf '{"kind":"hello","at":"%s","session":{"dir":"%s"}}\n' "$(date -u +%FT%TZ)" "$(pwd -P)" >"$events"
	idle
	while :; do
		printf '{"kind":"ask","at":"%s"}\n' "$(date -u +%FT%TZ)" >>"$events"
		IFS= read -r -t 1 line && printf '%s\n' "$line" >>"$log"
	done
fi
if [ "${TERN_MODE:-}" = hooked ]; then
	idle
	while [ ! -e "${TERN_HOME:?}/go" ]; do sleep 0.1; done
	screen 'Tern v0.3 · ~/proj' '' '» clean the build' '  Allow tern to run rm -rf build?' '  [y] yes   [n] no   [a] always' '  y/n/a · esc to cancel'
	# Its hooks, as it reads them: each command of its settings, run by sh.
	grep -o '"command": *"[^"]*"' "$TERN_HOME/conf/settings.json" | sed 's/^"command": *"//; s/"$//' |
		while IFS= read -r c; do sh -c "$c" </dev/null >/dev/null 2>&1 & done
	while IFS= read -r -s -n 1 key; do printf 'KEY IN DIALOG %s\n' "$key" >>"$log"; done
	exit 0
fi
if [ "${TERN_MODE:-}" = question ]; then
	screen 'Tern v0.3 · ~/proj' '' '» clean the build' '  Allow tern to run rm -rf build?' '  [y] yes   [n] no   [a] always' '  y/n/a · esc to cancel'
	while IFS= read -r -s -n 1 key; do printf 'KEY IN DIALOG %s\n' "$key" >>"$log"; done
	exit 0
fi
while :; do
	idle
	IFS= read -r line || exit 0
	printf '%s\n' "$line" >>"$log"
	for ((s = 1; s <= work; s++)); do
		screen 'Tern v0.3 · ~/proj' '' "» $line" '  ◆ Running go test ./ingest/...' "  ⠋ thinking · ${s}s · ctrl+c to stop" '' \
			"┌${edge}" '│ » ' "└${edge}" '  tern · model m-1 · /help'
		sleep 1
	done
done
`

// ternRules describes Tern for the watchers, in their rules file: its
// screen, and its events log as its witness.
const ternRules = `{"agents": [
  {"name": "Tern",
   "box": {"top": "^┌─+$", "prompt": "^│ » ?(.*)$", "bottom": "^└─+$"},
   "marks": ["tern · model "],
   "programs": ["tern"],
   "hooks": {"events": ["Asked"], "settings": {"home": "TERN_HOME", "default": ".tern", "file": "conf/settings.json"}, "timeout": 5},
   "witness": "events",
   "events": {"home": "TERN_HOME", "default": ".tern", "path": "logs/*/*.events", "type": "kind", "time": "at", "dir": "session.dir",
     "busy": ["ask"], "idle": ["done"], "quiet": ["hello"]}}
],
"rules": [
  {"agent": "tern", "name": "Tern's spinner", "region": "above",
   "pattern": "^  [⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] .* · \\d+s · ctrl\\+c to stop$", "verdict": "working"},
  {"agent": "tern", "name": "Tern's y/n/a prompt", "region": "dialog", "lines": 1,
   "pattern": "^  y/n/a · esc to cancel$", "verdict": "question"}
]}
`

// startTern starts Tern in a session of s, and returns the file of what it
// read; and a state home whose rules file describes it.
func startTern(t *testing.T, s *testenv.TmuxServer, mode string) (log, home string) {
	return startTernIn(t, s, mode, t.TempDir())
}

// startTernIn is startTern with Tern's home, TERN_HOME, in ternHome.
func startTernIn(t *testing.T, s *testenv.TmuxServer, mode, ternHome string) (log, home string) {
	dir := t.TempDir()
	script := filepath.Join(dir, "tern")
	log = filepath.Join(dir, "received")
	home = filepath.Join(dir, "home")
	if err := os.WriteFile(script, []byte(ternScript), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "rules.json"), []byte(ternRules), 0o600); err != nil {
		t.Fatal(err)
	}
	s.NewSession(t, "tern", "exec "+coord.ShellJoin("env", "LANG=C.UTF-8", "TERN_LOG="+log, "TERN_MODE="+mode, "TERN_HOME="+ternHome, bashPath(t), script))
	return log, home
}

// TestLoopReadsADescribedAgent: an agent described by hand in the
// watchers' rules file, and no build, is watched as the built-in ones are:
// a stop nudged within the budget, the nudge typed into its box and taken;
// its turn read as work while its spinner shows; its question relayed and
// never typed into; its own events log, in a format of its own, heard
// over its idle screen: a turn it says is open is not nudged; its hooks,
// written by install --hooks --agent where its description says, wake the
// watcher at its question.
func TestLoopReadsADescribedAgent(t *testing.T) {
	t.Parallel()
	t.Run("stalled", func(t *testing.T) {
		t.Parallel()
		s := testenv.Tmux(t)
		log, home := startTern(t, s, "")
		r := startLoop(t, loopOptions{target: "tern", home: home, flags: []string{
			"--mux", s.Mux, "--interval", "1", "--nudge-budget", "2", "--work-probe", "echo 5"}})
		lines := r.waitLine("nudge budget spent", 90*time.Second)
		r.stop()
		text := "continue with the next step; if you are waiting on something, say what"
		if got := received(t, log); strings.Join(got, "\n") != text+"\n"+text {
			t.Errorf("Tern read %q, want exactly the budget of 2 nudges", got)
		}
		var sawWork, sawStop bool
		for _, l := range lines {
			sawWork = sawWork || strings.Contains(l, " · WORKING · ")
			sawStop = sawStop || strings.Contains(l, " · STALLED · ")
		}
		if !sawWork || !sawStop {
			t.Errorf("want Tern read stopped, and at work after a nudge; lines:\n%s", strings.Join(lines, "\n"))
		}
	})
	t.Run("question", func(t *testing.T) {
		t.Parallel()
		s := testenv.Tmux(t)
		log, home := startTern(t, s, "question")
		r := startLoop(t, loopOptions{target: "tern", home: home, flags: []string{"--mux", s.Mux, "--interval", "1", "--work-probe", "echo 5"}})
		questionGetsNothing(t, r, log, "y/n/a")
	})
	t.Run("its events log", func(t *testing.T) {
		t.Parallel()
		s := testenv.Tmux(t)
		ternHome := t.TempDir()
		log, home := startTernIn(t, s, "waiting", ternHome)
		r := startLoop(t, loopOptions{target: "tern", home: home, env: []string{"TERN_HOME=" + ternHome},
			flags: []string{"--mux", s.Mux, "--interval", "1", "--nudge-budget", "2", "--work-probe", "echo 5"}})
		lines := r.waitLine("not nudged: the agent's own status says busy, though the screen reads STALLED", 90*time.Second)
		lines = r.waitLines(len(lines)+3, 90*time.Second)
		r.stop()
		if got := received(t, log); len(got) > 0 {
			t.Errorf("Tern read %q while its log said its turn was open; want nothing\n%s", got, strings.Join(lines, "\n"))
		}
	})
	t.Run("its hooks", func(t *testing.T) {
		t.Parallel()
		s := testenv.Tmux(t)
		ternHome := t.TempDir()
		log, home := startTernIn(t, s, "hooked", ternHome)
		res := icmd.RunCmd(icmd.Command(omegaMonitor(t), "install", "--hooks", "--agent", "tern"),
			icmd.WithEnv("PATH="+os.Getenv("PATH"), "HOME="+t.TempDir(), "OMEGA_MONITOR_HOME="+home, "TERN_HOME="+ternHome))
		res.Assert(t, icmd.Expected{Out: "tern hooks: wrote our hook for Asked into " + filepath.Join(ternHome, "conf", "settings.json")})
		r := startLoop(t, loopOptions{target: "tern", home: home, env: []string{"TERN_HOME=" + ternHome},
			flags: []string{"--mux", s.Mux, "--interval", "60", "--nudge-budget", "0", "--work-probe", "echo 5"}})
		n := len(r.waitLines(1, 90*time.Second))
		time.Sleep(2 * time.Second)
		if err := os.WriteFile(filepath.Join(ternHome, "go"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		asked := drawnAt(t, func(tb testing.TB) string { return s.Run(tb, "capture-pane", "-p", "-t", "tern") }, "Tern's question", func(screen string) bool {
			return strings.Contains(screen, "y/n/a · esc to cancel")
		})
		woken(t, r, n, asked, "Tern's question", "QUESTION · escalated to the operator")
		r.stop()
		if got := received(t, log); len(got) > 0 {
			t.Errorf("keys reached Tern's question: %q", got)
		}
	})
}
