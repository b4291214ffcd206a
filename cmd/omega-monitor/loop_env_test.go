package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// TestLoopEnvAssignments: loop-env's output is bash that parses (bash -n)
// and, evaluated, gives every value back as one word, unchanged; loop.json
// names the process by its id and its start token.
func TestLoopEnvAssignments(t *testing.T) {
	t.Parallel()
	bash := testenv.Need(t, "bash")[0]
	for _, target := range []string{"agent", "box:agent"} {
		t.Run(target, func(t *testing.T) {
			home := t.TempDir()
			env := newTestEnv("OMEGA_MONITOR_HOME="+home, "OMEGA_MONITOR_STATE=", "OMEGA_MONITOR_WATCHER=", "OMEGA_MONITOR_MUX="+"/bin/true")
			text := `-don't stop: "run" it; $HOME ✓`
			var out, errb bytes.Buffer
			pid := os.Getpid()
			args := []string{"loop-env", target, "--interval", "7", "--nudge-text", text, "--work-probe", `ls "$x" | wc -l`, "--human-idle", "90", "--pid", strconv.Itoa(pid)}
			if code := env.run(args, nil, &out, &errb); code != 0 {
				t.Fatalf("loop-env = %d: %s", code, &errb)
			}
			if err := exec.Command(bash, "-n", "-c", out.String()).Run(); err != nil {
				t.Fatalf("bash -n: %v\n%s", err, &out)
			}
			keys := ""
			for _, k := range statedir.Keys {
				keys += ` "${key_` + k + `[@]: -1}"`
			}
			script := out.String() + `
printf '%s\0' "$target" "$state" "$interval" "$work_probe" "${#capture[@]}" "$pastes" "${load_buffer[*]}" "${paste_if[@]: -1}"` +
				keys + ` "${tick[@]}"`
			got, err := exec.Command(bash, "-c", script).Output()
			if err != nil {
				t.Fatal(err)
			}
			words := strings.Split(strings.TrimSuffix(string(got), "\x00"), "\x00")
			state := filepath.Join(home, "monitor-agent")
			if target != "agent" {
				state = filepath.Join(home, "monitor-box-agent")
			}
			want := []string{target, state, "7", `ls "$x" | wc -l`, words[4], filepath.Join(state, "pastes")}
			if diff := cmp.Diff(want, words[:6]); diff != "" {
				t.Errorf("evaluated (-want +got):\n%s", diff)
			}
			// Text goes through a paste buffer, loaded from standard input
			// (over ssh too: no -n), pasted on the look's condition; each
			// key likewise, the multiplexer's command naming the key.
			if load := words[6]; !strings.Contains(load, "load-buffer -b omega-monitor-") && !strings.Contains(load, "'load-buffer' '-b' 'omega-monitor-") ||
				strings.HasPrefix(load, "ssh -n ") {
				t.Errorf("the buffer is loaded by %q", load)
			}
			conditional := func(last, cmd string) {
				t.Helper()
				if target == "agent" {
					if last != cmd {
						t.Errorf("the conditional command is %q, want %q", last, cmd)
					}
					return
				}
				if !strings.Contains(last, "if-shell -F") || !strings.Contains(last, coord.ShellQuote(cmd)) {
					t.Errorf("over ssh, the conditional command is %q, want one that runs %q", last, cmd)
				}
			}
			conditional(words[7], "paste-buffer -d -r -b 'omega-monitor-"+strconv.Itoa(pid)+"' -t '=agent:'")
			for i, k := range statedir.Keys {
				conditional(words[8+i], "send-keys -t '=agent:' "+k)
			}
			tick := words[8+len(statedir.Keys):]
			if diff := cmp.Diff([]string{tick[0], "tick", "--state", state, "--frame"}, tick); diff != "" {
				t.Errorf("the tick's command line is the state directory and the readings only (-want +got):\n%s", diff)
			}
			data, err := os.ReadFile(filepath.Join(state, "loop.json"))
			if err != nil {
				t.Fatal(err)
			}
			var rec statedir.LoopRecord
			if err := json.Unmarshal(data, &rec); err != nil {
				t.Fatal(err)
			}
			tok, _ := board.SystemProcs{}.StartToken(pid)
			if rec.Pid != pid || rec.StartToken == "" || rec.StartToken != tok || rec.IntervalS != 7 || rec.Target != target || rec.Settings["nudge_text"] != text || rec.Settings["human_idle"] != "90" {
				t.Errorf("loop.json = %+v", rec)
			}
			// What each poll reads: the settings, checked once, as plain values.
			wantPoll := &statedir.PollSettings{Target: target, IntervalS: 7, NudgeBudget: 5, NudgeText: text, HumanIdleS: 90, OnChangeTimeoutS: 20}
			if target == "agent" {
				wantPoll.AgentStatusDir = filepath.Join(os.Getenv("HOME"), ".claude", "sessions")
			}
			if diff := cmp.Diff(wantPoll, rec.Poll); diff != "" {
				t.Errorf("loop.json's poll settings (-want +got):\n%s", diff)
			}
			if fi, err := os.Stat(filepath.Join(state, "loop.json")); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("loop.json mode: %v %v", fi.Mode(), err)
			}
		})
	}
}

// TestLoopEnvRefuses: loop-env refuses what watch refuses, with status 2
// and nothing on standard output for the loop to eval.
func TestLoopEnvRefuses(t *testing.T) {
	t.Parallel()
	env := newTestEnv("OMEGA_MONITOR_HOME=" + t.TempDir())
	for _, args := range [][]string{
		{"my.agent", "--pid", "1"}, {"box:a:b", "--pid", "1"}, {"-t", "--pid", "1"},
		{"agent", "--interval", "0", "--pid", "1"}, {"agent", "--nudge-budget", "-1", "--pid", "1"},
		{"agent"}, {"a", "b", "--pid", "1"}, {"agent", "--nudge-text", "two\nlines", "--pid", "1"},
		{"agent", "--human-idle", "-1", "--pid", "1"}, {"agent", "--human-idle", "3601", "--pid", "1"},
	} {
		var out, errb bytes.Buffer
		if code := env.run(append([]string{"loop-env"}, args...), nil, &out, &errb); code != 2 || out.Len() != 0 {
			t.Errorf("loop-env %q = %d, stdout %q; want 2 and nothing", args, code, &out)
		}
	}
}

// TestLoopEnvOffersButtonsOnlyWhereSomeoneCanAnswer: a watcher's ticks
// offer a question's options as buttons only when the chat answers (answers=on)
// and someone may: a private chat, or a group with allow_users. A group
// without it gets the alerts alone.
func TestLoopEnvOffersButtonsOnlyWhereSomeoneCanAnswer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, conf  string
		want, words bool
	}{
		{"private", "bot_token=1:x\nchat_id=42\nanswers=on\n", true, false},
		{"off", "bot_token=1:x\nchat_id=42\n", false, false},
		{"group without allow_users", "bot_token=1:x\nchat_id=-100123\nanswers=on\n", false, false},
		{"group with allow_users", "bot_token=1:x\nchat_id=-100123\nanswers=on\nallow_users=42,43\n", true, false},
		// Free-text replies only where answers are taken at all.
		{"free text", "bot_token=1:x\nchat_id=42\nanswers=on\nfree_text=on\n", true, true},
		{"free text, answers off", "bot_token=1:x\nchat_id=42\nfree_text=on\n", false, false},
		{"free text, group without allow_users", "bot_token=1:x\nchat_id=-100123\nanswers=on\nfree_text=on\n", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			conf := filepath.Join(dir, "telegram.conf")
			if err := os.WriteFile(conf, []byte(c.conf), 0o600); err != nil {
				t.Fatal(err)
			}
			env := newTestEnv("OMEGA_MONITOR_HOME="+filepath.Join(dir, "state"), "OMEGA_TELEGRAM_CONF="+conf,
				"OMEGA_MONITOR_STATE=", "OMEGA_MONITOR_WATCHER=", "OMEGA_MONITOR_MUX=/bin/true")
			var out, errb bytes.Buffer
			if code := env.run([]string{"loop-env", "agent", "--pid", strconv.Itoa(os.Getpid())}, nil, &out, &errb); code != 0 {
				t.Fatalf("loop-env = %d: %s", code, &errb)
			}
			var rec statedir.LoopRecord
			if err := statedir.Dir(filepath.Join(dir, "state", "monitor-agent")).ReadRecord(statedir.Loop, &rec); err != nil || rec.Poll == nil {
				t.Fatalf("loop.json: %+v %v", rec, err)
			}
			if got := rec.Poll.Answers; got != c.want {
				t.Errorf("buttons offered = %v, want %v", got, c.want)
			}
			if got := rec.Poll.FreeText; got != c.words {
				t.Errorf("replies taken = %v, want %v", got, c.words)
			}
		})
	}
}
