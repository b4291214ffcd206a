package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"gotest.tools/v3/assert"
	"gotest.tools/v3/icmd"
	"gotest.tools/v3/poll"
)

// TestOneLimitManyWatchersOnePage: the real loops of four watchers in one
// state home, each watching a pane the same usage limit stopped: the
// operator gets one page naming the four and the reset, whichever watcher's
// deliverer sends it, and once the reset has come and each pane is nudged
// once, one notice naming them all.
func TestOneLimitManyWatchersOnePage(t *testing.T) {
	testenv.EndToEnd(t)
	t.Parallel()
	s := testenv.Tmux(t)
	home := t.TempDir()
	userHome, status := agentHome(t)
	limit, shown := claudeLimit(70 * time.Second)
	var loops []*loopRun
	var names []string
	for i := range 4 {
		name := fmt.Sprintf("agent-%d", i+1)
		names = append(names, name)
		startAgent(t, s, name, "AGENT_MODE=limit", "AGENT_LIMIT="+limit, "AGENT_WORK=1", status)
		loops = append(loops, startLoop(t, loopOptions{target: name, home: home, name: "monitor-" + name, userHome: userHome,
			flags: []string{"--mux", s.Mux, "--interval", "1", "--work-probe", "echo 3", "--nudge-budget", "1", "--nudge-text", agentNudge}}))
	}
	for _, r := range loops {
		r.waitLine("not nudged: usage limit, resets", 60*time.Second)
	}
	pages := func(word string) []string {
		var found []string
		for _, r := range loops {
			for _, a := range r.alertsNow() {
				if strings.Contains(a, word) {
					found = append(found, a)
				}
			}
		}
		return found
	}
	waitPages := func(word string, within time.Duration) []string {
		t.Helper()
		deadline := time.Now().Add(within)
		for len(pages(word)) == 0 && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
		}
		loops[0].alerts() // every group's page made and delivered
		return pages(word)
	}
	paged := waitPages("USAGE LIMIT", 60*time.Second)
	if len(paged) != 1 {
		t.Fatalf("usage-limit pages %q, want one", paged)
	}
	for _, name := range names {
		if !strings.Contains(paged[0], "<code>"+name+"</code>") {
			t.Errorf("%s not named on the page:\n%s", name, paged[0])
		}
	}
	if !strings.Contains(paged[0], "4 panes") || !strings.Contains(paged[0], shown) {
		t.Errorf("the page does not say four panes and the reset %s:\n%s", shown, paged[0])
	}
	// The reset: each resumed once, one notice.
	for _, r := range loops {
		r.waitNudged("1/1", 3*time.Minute)
	}
	told := waitPages("LIMIT RESET", 60*time.Second)
	if len(told) != 1 || !strings.Contains(told[0], "4 panes") {
		t.Errorf("reset notices %q, want one naming four panes", told)
	}
	if n := len(pages("USAGE LIMIT")) + len(pages("usage limit has reset")); n != 1 {
		t.Errorf("%d more usage-limit messages, each pane's own", n-1)
	}
}

// TestTwoAccountsOneLimitTwoPages: four watchers' panes stopped by limits
// worded alike and resetting in the same minute, two panes signed in with
// one account and two with another (each agent's own CLAUDE_CONFIG_DIR, as
// an operator keeps two accounts on one machine): two pages, each naming
// its account's two panes, never one page that hides that two accounts
// are out.
func TestTwoAccountsOneLimitTwoPages(t *testing.T) {
	testenv.EndToEnd(t)
	t.Parallel()
	limit, _ := claudeLimit(10 * time.Minute)
	accounts := claudeAccounts(t, "ann", "bob")
	s := testenv.Tmux(t)
	home := t.TempDir()
	userHome, status := agentHome(t)
	var loops []*loopRun
	for i, who := range []string{"ann", "ann", "bob", "bob"} {
		name := fmt.Sprintf("%s-%d", who, i+1)
		startAgent(t, s, name, "AGENT_MODE=limit", "AGENT_LIMIT="+limit, "AGENT_WORK=1", status, "CLAUDE_CONFIG_DIR="+accounts[who])
		loops = append(loops, startLoop(t, loopOptions{target: name, home: home, name: "monitor-" + name, userHome: userHome,
			flags: []string{"--mux", s.Mux, "--interval", "1", "--work-probe", "echo 3", "--nudge-budget", "1", "--nudge-text", agentNudge}}))
	}
	for _, r := range loops {
		r.waitLine("not nudged: usage limit, resets", 60*time.Second)
	}
	checkAccountPages(t, usagePages(loops, 2), []string{"ann-1", "ann-2"}, []string{"bob-3", "bob-4"})
}

// TestOneAccountTwoHostsOnePage: the panes of one account on two ssh
// hosts (two real sshd through their config aliases, tmux only there),
// each agent's account in its own CLAUDE_CONFIG_DIR, stopped by one limit:
// the account is read on each host from the agent's own process, and the
// operator gets one page naming both panes, on one account; a pane of
// another account on one of those hosts, stopped in the same minute, is a
// page of its own.
func TestOneAccountTwoHostsOnePage(t *testing.T) {
	testenv.EndToEnd(t)
	t.Parallel()
	limit, _ := claudeLimit(10 * time.Minute)
	accounts := claudeAccounts(t, "ann", "bob")
	cfg := testenv.NewSSHConfig(t)
	home := t.TempDir()
	userHome, status := agentHome(t)
	servers := map[string]*testenv.TmuxServer{}
	for _, host := range []string{"box1", "box2"} {
		servers[host] = testenv.Tmux(t)
		testenv.SSHD(t, cfg, host, "HOME="+userHome, "OMEGA_MONITOR_MUX="+servers[host].Mux, "LANG=C.UTF-8")
	}
	var loops []*loopRun
	for _, pane := range []struct{ host, name, who string }{{"box1", "ann-1", "ann"}, {"box2", "ann-2", "ann"}, {"box1", "bob-3", "bob"}} {
		startAgent(t, servers[pane.host], pane.name, "AGENT_MODE=limit", "AGENT_LIMIT="+limit, "AGENT_WORK=1", status, "CLAUDE_CONFIG_DIR="+accounts[pane.who])
		loops = append(loops, startLoop(t, loopOptions{target: pane.host + ":" + pane.name, home: home, name: "monitor-" + pane.name, userHome: userHome,
			flags: []string{"--ssh-config", cfg.Path, "--interval", "1", "--work-probe", "echo 3", "--nudge-budget", "1", "--nudge-text", agentNudge}}))
	}
	for _, r := range loops {
		r.waitLine("not nudged: usage limit, resets", 90*time.Second)
	}
	checkAccountPages(t, usagePages(loops, 2), []string{"ann-1", "ann-2"}, []string{"bob-3"})
}

// TestHostileHostAccountRead: a host that answers the read of an agent's
// account with a reply that never ends, or with an account of its own
// choosing, costs the page nothing: the loop keeps no more of the reply
// than a frame may be (a cut reply is a failed read), and the usage limit
// is paged all the same, once, with no id of the host's in it.
func TestHostileHostAccountRead(t *testing.T) {
	testenv.EndToEnd(t)
	t.Parallel()
	for _, tc := range []struct{ name, answer string }{
		{"endless", "exec yes 0123456789abcdef0123456789abcdef0123456789abcdef\n"},
		{"forged", `pid=$(printf '%s' "$SSH_ORIGINAL_COMMAND" | sed -n "s/.*omega-monitor' '\([0-9]*\)'.*/\1/p"); printf 'account %s\n{"oauthAccount": {"accountUuid": "uuid-of-the-host"}}\n' "$pid"` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			limit, _ := claudeLimit(10 * time.Minute)
			config := t.TempDir()
			assert.NilError(t, os.WriteFile(filepath.Join(config, ".claude.json"), []byte(`{"oauthAccount": {"accountUuid": "uuid-of-ann"}}`), 0o600))
			s := testenv.Tmux(t)
			cfg := testenv.NewSSHConfig(t)
			userHome, status := agentHome(t)
			host := testenv.HostileSSHD(t, cfg, "box", "HOME="+userHome, "OMEGA_MONITOR_MUX="+s.Mux, "LANG=C.UTF-8")
			host.Answer(t, "account %s", tc.answer)
			startAgent(t, s, "agent", "AGENT_MODE=limit", "AGENT_LIMIT="+limit, "AGENT_WORK=1", status, "CLAUDE_CONFIG_DIR="+config)
			r := startLoop(t, loopOptions{target: "box:agent", userHome: userHome, timeout: 5,
				flags: []string{"--ssh-config", cfg.Path, "--interval", "1", "--work-probe", "echo 3", "--nudge-budget", "1", "--nudge-text", agentNudge}})
			r.waitLine("operator told", 90*time.Second)
			var asked bool
			for _, c := range host.Commands(t) {
				asked = asked || strings.Contains(c, "account %s")
			}
			if !asked {
				t.Fatal("the account was never read on the host")
			}
			if fi, err := os.Stat(filepath.Join(r.state, "poll", "diff.out")); err == nil && fi.Size() > capture.MaxFrame+1 {
				t.Errorf("the loop kept %d bytes of the host's reply", fi.Size())
			}
			var paged []string
			for _, a := range r.alerts() {
				if strings.Contains(strings.ToLower(a), "limit") {
					paged = append(paged, a)
				}
			}
			if len(paged) != 1 || strings.Contains(paged[0], "uuid-of-") {
				t.Errorf("usage-limit pages %q, want one, with no account's id", paged)
			}
		})
	}
}

// claudeAccounts makes a CLAUDE_CONFIG_DIR for each name, its
// .claude.json naming the account uuid-of-NAME.
func claudeAccounts(t *testing.T, names ...string) map[string]string {
	accounts := map[string]string{}
	for _, who := range names {
		dir := filepath.Join(t.TempDir(), who)
		assert.NilError(t, os.MkdirAll(dir, 0o700))
		assert.NilError(t, os.WriteFile(filepath.Join(dir, ".claude.json"), []byte(`{"oauthAccount": {"accountUuid": "uuid-of-`+who+`"}}`), 0o600))
		accounts[who] = dir
	}
	return accounts
}

// usagePages waits up to a minute for n usage-limit pages among what the
// loops sent, then for every group to settle, and returns those pages.
func usagePages(loops []*loopRun, n int) []string {
	var paged []string
	for deadline := time.Now().Add(60 * time.Second); len(paged) < n && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		paged = nil
		for _, r := range loops {
			for _, a := range r.alertsNow() {
				if strings.Contains(a, "USAGE LIMIT") {
					paged = append(paged, a)
				}
			}
		}
	}
	loops[0].alerts()
	return paged
}

// checkAccountPages checks that the usage-limit pages are one for each
// account, each naming the panes given for it (sorted; a remote pane as
// host:name) and, for more than one, as panes of one account, and that no
// page holds an account's id.
func checkAccountPages(t *testing.T, pages []string, accounts ...[]string) {
	t.Helper()
	var got [][]string
	for _, page := range pages {
		if strings.Contains(page, "uuid-of-") {
			t.Errorf("a page holds an account's id:\n%s", page)
		}
		var named []string
		for _, panes := range accounts {
			for _, name := range panes {
				if strings.Contains(page, "<code>"+name+"</code>") || strings.Contains(page, ":"+name+"</code>") {
					named = append(named, name)
				}
			}
		}
		slices.Sort(named)
		if n := len(named); n > 1 && (!strings.Contains(page, fmt.Sprintf("%d panes", n)) || !strings.Contains(page, "on one account")) {
			t.Errorf("a page of %d panes does not say so, or that they are of one account:\n%s", n, page)
		}
		got = append(got, named)
	}
	slices.SortFunc(got, slices.Compare)
	if diff := cmp.Diff(accounts, got); diff != "" {
		t.Errorf("the panes each usage-limit page names (-want +got):\n%s", diff)
	}
}

// claudeLimit is a usage limit as Claude Code words it, its reset in
// from now, and the reset as the line shows it.
func claudeLimit(in time.Duration) (limit, shown string) {
	shown = strings.ToLower(time.Now().UTC().Add(in).Format("3:04PM")) + " (UTC)"
	return "You've hit your 5-hour limit · resets " + shown, shown
}

// TestLoneMemberStoppedMidWindow: the real loop of the one watcher a
// usage limit stopped, stopped while its group gathers (a 30 s window):
// its page is made as the loop ends and delivered by a deliverer that
// outlives it, exactly once.
func TestLoneMemberStoppedMidWindow(t *testing.T) {
	testenv.EndToEnd(t)
	t.Parallel()
	s := testenv.Tmux(t)
	home := t.TempDir()
	userHome, status := agentHome(t)
	reset := time.Now().UTC().Add(time.Hour)
	limit := "You've hit your 5-hour limit · resets " + strings.ToLower(reset.Format("3:04PM")) + " (UTC)"
	startAgent(t, s, "lone", "AGENT_MODE=limit", "AGENT_LIMIT="+limit, "AGENT_WORK=1", status)
	r := startLoop(t, loopOptions{target: "lone", home: home, name: "monitor-lone", userHome: userHome,
		flags: []string{"--mux", s.Mux, "--interval", "30", "--work-probe", "echo 3", "--nudge-budget", "1", "--nudge-text", agentNudge}})
	// The limit seen twice: the operator is told, through the group.
	r.waitLine("operator told", 3*time.Minute)
	if sent := r.alertsNow(); len(sent) != 0 {
		t.Fatalf("a page before the stop, within the window: %q", sent)
	}
	r.stop()
	deadline := time.Now().Add(60 * time.Second)
	for len(r.alertsNow()) == 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	sent := r.alerts() // the group settled: its page made and delivered
	if len(sent) != 1 || !strings.Contains(sent[0], "lone") {
		log, _ := os.ReadFile(filepath.Join(r.state, "watcher.log"))
		tree, _ := exec.Command("find", filepath.Join(home, statedir.Groups), r.state).CombinedOutput()
		t.Fatalf("pages after the stop: %q, want exactly one naming lone\nwatcher.log:\n%s\n%s", sent, log, tree)
	}
}

// TestStopLoneMemberPages: omega-monitor stop of the one watcher a usage
// limit stopped, while its group gathers: the stop (its session ended,
// its loop's exit) makes the page, and it is delivered, exactly once.
func TestStopLoneMemberPages(t *testing.T) {
	testenv.EndToEnd(t)
	t.Parallel()
	f := newFleet(t)
	userHome, status := agentHome(t)
	reset := time.Now().UTC().Add(time.Hour)
	limit := "You've hit your 5-hour limit · resets " + strings.ToLower(reset.Format("3:04PM")) + " (UTC)"
	startAgent(t, f.tmux, "lone", "AGENT_MODE=limit", "AGENT_LIMIT="+limit, "AGENT_WORK=1", status)
	sent := filepath.Join(t.TempDir(), "sent")
	funnel := filepath.Join(t.TempDir(), "funnel")
	script := "#!/bin/sh\n[ \"$*\" = --stdin ] || exit 2\n{ cat; printf '\\n\\036\\n'; } >>" + coord.ShellQuote(sent) + "\n"
	assert.NilError(t, os.WriteFile(funnel, []byte(script), 0o700))
	env := []string{"HOME=" + userHome, "OMEGA_MONITOR_ALERT_SEND=" + funnel}
	f.runEnv(t, env, "lone", "--interval", "30", "--work-probe", "echo 3", "--nudge-budget", "1").Assert(t, icmd.Success)
	t.Cleanup(func() { f.runEnv(t, env, "stop", "lone") })
	pages := func() []string {
		data, _ := os.ReadFile(sent)
		var msgs []string
		for m := range strings.SplitSeq(string(data), "\n\036\n") {
			if m != "" {
				msgs = append(msgs, m)
			}
		}
		return msgs
	}
	log := filepath.Join(f.state, "monitor-lone", statedir.Log)
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		data, _ := os.ReadFile(log)
		if strings.Contains(string(data), "operator told") {
			return poll.Success()
		}
		return poll.Continue("no limit told yet:\n%s", data)
	}, poll.WithTimeout(3*time.Minute), poll.WithDelay(200*time.Millisecond))
	assert.Equal(t, len(pages()), 0, "a page before the stop, within the window")
	f.runEnv(t, env, "stop", "lone").Assert(t, icmd.Success)
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if len(pages()) > 0 && groupsSettled(f.state) {
			return poll.Success()
		}
		return poll.Continue("pages after the stop: %q", pages())
	}, poll.WithTimeout(time.Minute), poll.WithDelay(200*time.Millisecond))
	got := pages()
	assert.Assert(t, len(got) == 1 && strings.Contains(got[0], "lone"), "pages after the stop: %q, want exactly one naming lone", got)
}
