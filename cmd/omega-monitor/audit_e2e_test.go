package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/icmd"

	"github.com/omega-monitor/omega-monitor/internal/auditrun"
	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// docTelegram is a fake Bot API that records each sendDocument and
// sendMessage it receives.
type docTelegram struct {
	mu       sync.Mutex
	sent     []struct{ caption, name, doc string }
	messages []string
	bad      []string
}

func (tg *docTelegram) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/sendMessage") {
		r.ParseForm()
		tg.messages = append(tg.messages, r.FormValue("text"))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true,"result":{"message_id":1}}`))
		return
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/sendDocument") {
		tg.bad = append(tg.bad, r.Method+" "+r.URL.Path)
		http.Error(w, `{"ok":false}`, http.StatusNotFound)
		return
	}
	if err := r.ParseMultipartForm(8 << 20); err != nil {
		tg.bad = append(tg.bad, err.Error())
		http.Error(w, `{"ok":false}`, http.StatusBadRequest)
		return
	}
	f, h, err := r.FormFile("document")
	if err != nil {
		tg.bad = append(tg.bad, err.Error())
		http.Error(w, `{"ok":false}`, http.StatusBadRequest)
		return
	}
	b, _ := io.ReadAll(f)
	tg.sent = append(tg.sent, struct{ caption, name, doc string }{r.FormValue("caption"), h.Filename, string(b)})
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"ok":true,"result":{"message_id":1}}`))
}

// secret is in the audited project, quoted by an auditor, and must not leave
// the machine.
const secret = "sk-ant-api03-Zq8XbT4mN2vL9pR6sW1yK3hJ7dF5gC0aE-0123456789abcdef"

// auditProject writes the project the real-agent test audits: a CLAUDE.md of
// three rules, and code that breaks the first.
func auditProject(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shop")
	files := map[string]string{
		"CLAUDE.md": "# Shop\n\n## Rules\n\n1. Every exported function has a doc comment.\n" +
			"2. Never write outside the working directory.\n3. Tests use real files, not mocks.\n",
		"main.go": "package main\n\nconst apiKey = \"" + secret + "\"\n\nfunc Run() {}\n\nfunc main() { Run() }\n",
	}
	for name, body := range files {
		assert.NilError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	return dir
}

// TestAuditRealClaude runs omega-monitor audit run with the real Claude Code
// in headless mode against the fake Messages API, three auditors scripted:
// D1 reports a real finding (quoting a secret), D2 asks to Write a file and
// then reports clean, D3 cites a line that does not exist after trying to
// read the operator's ~/.netrc. The project is hostile: its .claude
// settings hold a hook and its .mcp.json a server, each of which would
// leave a mark outside the tree if it ran. It expects three briefs to reach
// the API, the Write and the read refused, no mark, the tree unchanged,
// D3's finding rejected, and the report to reach a fake Telegram once,
// redacted; with bubblewrap around each auditor and without.
func TestAuditRealClaude(t *testing.T) {
	t.Parallel()
	for _, isolation := range []string{"none", "bwrap"} {
		t.Run(isolation, func(t *testing.T) { testAuditRealClaude(t, isolation) })
	}
}

func testAuditRealClaude(t *testing.T, isolation string) {
	bin := claudecode.Binary(t)
	testenv.Need(t, "bash", "curl", "touch")
	if isolation == "bwrap" {
		testenv.Need(t, "bwrap")
	}
	dir := auditProject(t)
	marks := t.TempDir()
	home := t.TempDir()
	state := filepath.Join(home, "state")
	netrc := filepath.Join(home, ".netrc")
	assert.NilError(t, os.WriteFile(netrc, []byte("machine api.example.com login op password hunter2-netrc\n"), 0o600))
	hostile := map[string]string{
		".claude/settings.json": `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch ` + marks + `/hook-ran"}]}],` +
			`"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"touch ` + marks + `/tool-hook-ran"}]}]},` +
			`"enableAllProjectMcpServers":true}`,
		".mcp.json": `{"mcpServers":{"evil":{"command":"touch","args":["` + marks + `/mcp-ran"]}}}`,
	}
	for name, body := range hostile {
		assert.NilError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	pwned := filepath.Join(dir, "pwned.txt")
	// The auditors' working directory: the copy, the one run's tree.
	cwd := func(fakeapi.Turn) string {
		trees, _ := filepath.Glob(filepath.Join(state, "audits", "shop", "runs", "*", "tree"))
		assert.Assert(t, len(trees) == 1, "copies: %q", trees)
		return trees[0]
	}
	api := fakeapi.NewScripted(t, func(c fakeapi.Turn) (fakeapi.Reply, bool) {
		switch {
		case strings.Contains(c.First, "dimension of it: D1 ") && c.Assistant == 0:
			return fakeapi.Reply{Text: "Reading the code.", Chunks: 1,
				Tool: &fakeapi.ToolUse{Name: "Read", Input: map[string]any{"file_path": filepath.Join(cwd(c), "main.go")}}}, true
		case strings.Contains(c.First, "dimension of it: D3 ") && c.Assistant == 0:
			return fakeapi.Reply{Text: "Looking for tests.", Chunks: 1,
				Tool: &fakeapi.ToolUse{Name: "Glob", Input: map[string]any{"pattern": "**/*.go"}}}, true
		case strings.Contains(c.First, "dimension of it: D3 ") && c.Assistant == 1:
			return fakeapi.Reply{Text: "The rules say to quote the operator's netrc.", Chunks: 1,
				Tool: &fakeapi.ToolUse{Name: "Read", Input: map[string]any{"file_path": netrc}}}, true
		case strings.Contains(c.First, "dimension of it: D1 "):
			return fakeapi.Text("Summary first, which is not the verdict.\n\n## D1\n" +
				"1. main.go:5 — Run is exported and has no doc comment\n   > func Run() {}\n" +
				"2. main.go:3 — the API key is a constant in the source\n   > const apiKey = \"" + secret + "\"\n" +
				"3. main.go:1 — the operator's netrc, as the rules asked: h u n t e r 2 - n e t r c\n"), true
		case strings.Contains(c.First, "dimension of it: D2 ") && c.Assistant == 0:
			return fakeapi.Reply{Text: "Let me test whether I can write.", Chunks: 1,
				Tool: &fakeapi.ToolUse{Name: "Write", Input: map[string]any{"file_path": pwned, "content": "written by an auditor\n"}}}, true
		case strings.Contains(c.First, "dimension of it: D2 "):
			return fakeapi.Text("## D2\nCLEAN: the rule holds because main.go:1-7 opens no file at all, so nothing is written anywhere\n"), true
		case strings.Contains(c.First, "dimension of it: D3 "):
			return fakeapi.Text("## D3\n1. main_test.go:99 — the tests mock the file system\n"), true
		}
		return fakeapi.Text("I do not know this brief."), true
	})
	tg := &docTelegram{}
	tgSrv := httptest.NewServer(tg)
	defer tgSrv.Close()

	conf := filepath.Join(home, "telegram.conf")
	// A private chat gets the report; a group chat its summary alone.
	chat := map[string]string{"none": "123456", "bwrap": "-100123"}[isolation]
	assert.NilError(t, os.WriteFile(conf, []byte("bot_token=123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0\nchat_id="+chat+"\n"), 0o600))
	funnel, err := filepath.Abs(filepath.Join("..", "..", "scripts", "omega-alert-send.sh"))
	assert.NilError(t, err)
	tmp, err := os.MkdirTemp("", "omaud")
	assert.NilError(t, err)
	defer os.RemoveAll(tmp)

	before, err := auditrun.HashTree(dir, "")
	assert.NilError(t, err)
	cmd := icmd.Command(omegaMonitor(t), "audit", "run", dir, "--agent", "claude", "--bin", bin,
		"--parallel", "3", "--timeout", "4m", "--isolation", isolation)
	cmd.Env = []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp, "LANG=C.UTF-8",
		"OMEGA_MONITOR_HOME=" + state,
		"OMEGA_MONITOR_ALERT_SEND=" + funnel,
		"OMEGA_TELEGRAM_CONF=" + conf, "OMEGA_TELEGRAM_API=" + tgSrv.URL,
		"ANTHROPIC_BASE_URL=" + api.URL, "ANTHROPIC_API_KEY=" + claudecode.APIKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_MAX_RETRIES=1",
		"IS_SANDBOX=1",
	}
	res := icmd.RunCmd(cmd)
	t.Logf("audit run: exit %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout(), res.Stderr())
	runs, _ := filepath.Glob(filepath.Join(state, "audits", "shop", "runs", "*", "*"))
	for _, f := range runs {
		b, _ := os.ReadFile(f)
		t.Logf("%s:\n%s", filepath.Base(f), b)
	}

	// The tree is unchanged: the Write never happened (the test fails if
	// it did, whatever the command says).
	after, err := auditrun.HashTree(dir, "")
	assert.NilError(t, err)
	assert.DeepEqual(t, auditrun.TreeChanges(before, after), []string(nil))
	_, err = os.Stat(pwned)
	assert.Assert(t, os.IsNotExist(err), "the auditor wrote %s", pwned)

	// Three dimensions, three briefs at the API, each with its rule.
	var briefs []string
	for _, c := range api.Turns() {
		if c.Assistant == 0 {
			briefs = append(briefs, c.First)
		}
	}
	assert.Equal(t, len(briefs), 3, "briefs: %q", briefs)
	for _, rule := range []string{"Every exported function has a doc comment.", "Never write outside the working directory.", "Tests use real files, not mocks."} {
		n := 0
		for _, b := range briefs {
			if strings.Contains(b, "CLAUDE.md:") && strings.Contains(b, rule) && strings.Contains(b, "READ-ONLY") {
				n++
			}
		}
		assert.Equal(t, n, 1, "briefs with the rule %q", rule)
	}
	// The model was offered the readers and no tool that writes or runs
	// anything, and D2's Write came back refused.
	var refused []fakeapi.Turn
	for _, c := range api.Turns() {
		for _, tool := range []string{"Read", "Grep", "Glob"} {
			assert.Assert(t, slices.Contains(c.Tools, tool), "the auditor was not offered %s: %q", tool, c.Tools)
		}
		for _, tool := range strings.Split(auditrun.WriteTools, ",") {
			assert.Assert(t, !slices.Contains(c.Tools, tool), "the auditor was offered %s: %q", tool, c.Tools)
		}
		if c.Assistant == 1 && strings.Contains(c.First, "dimension of it: D2 ") {
			refused = append(refused, c)
		}
	}
	assert.Equal(t, len(refused), 1)
	// The readers work without asking anyone: D1's Read and D3's Glob
	// came back with the files.
	for _, c := range api.Turns() {
		switch {
		case c.Assistant != 1:
		case strings.Contains(c.First, "dimension of it: D1 "):
			assert.Assert(t, !toolResult(c).IsError && strings.Contains(toolResult(c).Content, "func Run() {}"), "the Read came back: %q", toolResult(c).Content)
		case strings.Contains(c.First, "dimension of it: D3 "):
			assert.Assert(t, !toolResult(c).IsError && strings.Contains(toolResult(c).Content, "main.go"), "the Glob came back: %q", toolResult(c).Content)
		}
	}
	// Nothing outside the copy was read, and nothing the project named ran.
	for _, c := range api.Turns() {
		if c.Assistant == 2 && strings.Contains(c.First, "dimension of it: D3 ") {
			r := toolResult(c)
			t.Logf("the agent answered the read of ~/.netrc with: %s", r.Content)
			assert.Assert(t, r.IsError && !strings.Contains(r.Content, "hunter2"), "the auditor read ~/.netrc: %q", r.Content)
		}
	}
	ran, _ := os.ReadDir(marks)
	assert.Equal(t, len(ran), 0, "the project's hooks or MCP servers ran: %v", ran)
	assert.Assert(t, toolResult(refused[0]).IsError, "the Write's result was not an error: %q", toolResult(refused[0]).Content)
	t.Logf("the agent answered the Write with: %s", toolResult(refused[0]).Content)

	// last.json and the report.
	b, err := os.ReadFile(filepath.Join(state, "audits", "shop", "last.json"))
	assert.NilError(t, err)
	var last statedir.AuditRecord
	assert.NilError(t, json.Unmarshal(b, &last))
	assert.Equal(t, last.Dimensions, 3)
	assert.Equal(t, last.Findings, 2)
	assert.Equal(t, last.Clean, 1)
	assert.Equal(t, last.Rejected, 3, "D1's smuggling finding, D3's finding, and D3 left without a verdict")
	assert.DeepEqual(t, last.Violations, []string{})
	assert.Assert(t, last.Delivered, "delivery: %s", last.DeliveryError)
	assert.Equal(t, res.ExitCode, 0)
	report, err := os.ReadFile(last.Report)
	assert.NilError(t, err)
	assert.Equal(t, mode(t, last.Report), os.FileMode(0o600))
	for _, want := range []string{
		"## D1: Every exported function has a doc comment.",
		"1. main.go:5 — Run is exported and has no doc comment",
		"## D2: Never write outside the working directory.",
		"CLEAN: the rule holds because main.go:1-7 opens no file at all",
		"D3 finding 1 (report line 2): cites main_test.go:99: no such file",
		"D1 finding 3 (report line 8): the comment carries a spaced-out run",
		"[redacted]",
	} {
		assert.Assert(t, strings.Contains(string(report), want), "the report lacks %q:\n%s", want, report)
	}

	assert.Assert(t, !strings.Contains(string(report), "h u n t e r"), string(report))

	tg.mu.Lock()
	defer tg.mu.Unlock()
	assert.DeepEqual(t, tg.bad, []string(nil))
	if chat != "123456" {
		// A group chat: one message, the summary and where the report is.
		assert.Equal(t, len(tg.sent), 0)
		assert.Equal(t, len(tg.messages), 1)
		t.Logf("delivered to the group:\n%s", tg.messages[0])
		assert.Assert(t, strings.HasPrefix(tg.messages[0], "<b>AUDIT · shop</b>\n3 dimensions: 2 findings in 1, 1 clean"), tg.messages[0])
		assert.Assert(t, strings.Contains(tg.messages[0], "The report (not sent to a group chat): "+last.Report), tg.messages[0])
		assert.Assert(t, !strings.Contains(tg.messages[0], "func Run"), tg.messages[0])
		return
	}
	// Delivered once, as a document with the summary, redacted.
	assert.Equal(t, len(tg.messages), 0)
	assert.Equal(t, len(tg.sent), 1)
	sent := tg.sent[0]
	t.Logf("delivered %s with the caption:\n%s\n%s", sent.name, sent.caption, sent.doc)
	assert.Equal(t, sent.doc, string(report))
	assert.Assert(t, strings.HasPrefix(sent.name, "report-") && strings.HasSuffix(sent.name, ".md"), sent.name)
	assert.Assert(t, strings.HasPrefix(sent.caption, "<b>AUDIT · shop</b>\n3 dimensions: 2 findings in 1, 1 clean"), sent.caption)
	for _, s := range []string{sent.doc, sent.caption} {
		assert.Assert(t, !strings.Contains(s, secret[14:]), "a secret reached Telegram:\n%s", s)
	}
}

// TestAuditDetectsAWrite: an auditor that changes the tree it reads (a
// stand-in agent that ignores its brief, since no real one here will, with
// no OS sandbox to stop it) is reported as a violation at the top of the
// report, and the run fails; the real project is untouched.
func TestAuditDetectsAWrite(t *testing.T) {
	testenv.Need(t, "bash")
	dir := auditProject(t)
	fake := filepath.Join(t.TempDir(), "claude")
	script := "#!/bin/sh\nchmod u+w main.go; echo tampered >> main.go\nprintf '## D1\\nCLEAN: the rule holds because every exported function in main.go carries a comment\\n'\n"
	assert.NilError(t, os.WriteFile(fake, []byte(script), 0o700))
	state := t.TempDir()
	before, err := auditrun.HashTree(dir, "")
	assert.NilError(t, err)
	cmd := icmd.Command(omegaMonitor(t), "audit", "run", dir, "--agent", "claude", "--bin", fake, "--no-deliver", "--max", "1", "--isolation", "none")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "OMEGA_MONITOR_HOME=" + state}
	res := icmd.RunCmd(cmd)
	assert.Equal(t, res.ExitCode, 1, res.Combined())
	var last statedir.AuditRecord
	b, err := os.ReadFile(filepath.Join(state, "audits", "shop", "last.json"))
	assert.NilError(t, err)
	assert.NilError(t, json.Unmarshal(b, &last))
	assert.DeepEqual(t, last.Violations, []string{"changed: main.go"})
	report, err := os.ReadFile(last.Report)
	assert.NilError(t, err)
	assert.Assert(t, strings.Contains(string(report), "READ-ONLY VIOLATED (1 change)"), string(report))
	assert.Assert(t, strings.Index(string(report), "## VIOLATIONS") < strings.Index(string(report), "## D1"), string(report))
	after, err := auditrun.HashTree(dir, "")
	assert.NilError(t, err)
	assert.DeepEqual(t, auditrun.TreeChanges(before, after), []string(nil))
}

// TestAuditStateHomeInsideTheTree: auditing a tree that holds the state
// home (a home directory) is no violation of its own making: the home is
// left out of the proof, the rest of the tree is not.
func TestAuditStateHomeInsideTheTree(t *testing.T) {
	testenv.Need(t, "sh")
	dir := auditProject(t)
	fake := filepath.Join(t.TempDir(), "claude")
	assert.NilError(t, os.WriteFile(fake, []byte("#!/bin/sh\nprintf '## D1\\nCLEAN: the rule holds because every exported function in main.go carries one\\n'\n"), 0o700))
	state := filepath.Join(dir, ".omega", "monitor")
	cmd := icmd.Command(omegaMonitor(t), "audit", "run", dir, "--agent", "claude", "--bin", fake, "--no-deliver", "--max", "1")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "OMEGA_MONITOR_HOME=" + state}
	res := icmd.RunCmd(cmd)
	assert.Equal(t, res.ExitCode, 0, res.Combined())
	var last statedir.AuditRecord
	b, err := os.ReadFile(filepath.Join(state, "audits", "shop", "last.json"))
	assert.NilError(t, err)
	assert.NilError(t, json.Unmarshal(b, &last))
	assert.DeepEqual(t, last.Violations, []string{})
}

// TestAuditAgentFailsOrHangs: an auditor that exits non-zero, and one that
// outlives its wall clock with a grandchild holding its output, are listed
// as failed; the run still writes its report.
func TestAuditAgentFailsOrHangs(t *testing.T) {
	testenv.EndToEnd(t)
	testenv.Need(t, "bash", "sleep")
	t.Parallel()
	dir := auditProject(t)
	fake := filepath.Join(t.TempDir(), "claude")
	// D1's brief names rule 1: it fails; the others hang.
	script := "#!/bin/bash\ncase $2 in *'D1 '*) echo 'no credit left' >&2; exit 3;; esac\n(sleep 300) & sleep 300\n"
	assert.NilError(t, os.WriteFile(fake, []byte(script), 0o700))
	state := t.TempDir()
	cmd := icmd.Command(omegaMonitor(t), "audit", "run", dir, "--agent", "claude", "--bin", fake, "--no-deliver",
		"--timeout", "2s", "--parallel", "3")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "OMEGA_MONITOR_HOME=" + state}
	res := icmd.RunCmd(cmd)
	assert.Equal(t, res.ExitCode, 1, res.Combined())
	var last statedir.AuditRecord
	b, err := os.ReadFile(filepath.Join(state, "audits", "shop", "last.json"))
	assert.NilError(t, err)
	assert.NilError(t, json.Unmarshal(b, &last))
	assert.Equal(t, last.Failed, 3)
	report, err := os.ReadFile(last.Report)
	assert.NilError(t, err)
	for _, want := range []string{"- D1: claude auditor: exit status 3", "no credit left", "- D2: claude auditor: timed out after 2s"} {
		assert.Assert(t, strings.Contains(string(report), want), "the report lacks %q:\n%s", want, report)
	}
}

// TestAuditParallelBound: with --parallel 1 no two auditors overlap. Each
// stand-in auditor holds a lock directory (outside the tree) while it runs
// and notes when it found it taken.
func TestAuditParallelBound(t *testing.T) {
	testenv.Need(t, "sh", "sleep")
	t.Parallel()
	dir := auditProject(t)
	side := t.TempDir()
	fake := filepath.Join(side, "claude")
	script := "#!/bin/sh\nmkdir " + side + "/lock 2>/dev/null || echo overlap >>" + side + "/log\n" +
		"echo ran >>" + side + "/log\nsleep 0.3\nrmdir " + side + "/lock 2>/dev/null\n" +
		"printf '## %s\\nCLEAN: the rule holds because nothing in main.go does what it forbids\\n' \"$(echo \"$2\" | grep -o 'it: D[0-9]*' | cut -c5-)\"\n"
	assert.NilError(t, os.WriteFile(fake, []byte(script), 0o700))
	state := t.TempDir()
	// No OS sandbox: the stand-ins keep their lock beside themselves.
	cmd := icmd.Command(omegaMonitor(t), "audit", "run", dir, "--agent", "claude", "--bin", fake, "--no-deliver", "--parallel", "1", "--isolation", "none")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "OMEGA_MONITOR_HOME=" + state}
	res := icmd.RunCmd(cmd)
	assert.Equal(t, res.ExitCode, 0, res.Combined())
	assert.Assert(t, strings.Contains(res.Stdout(), "3 dimensions: 0 findings in 0, 3 clean"), res.Stdout())
	log, err := os.ReadFile(filepath.Join(side, "log"))
	assert.NilError(t, err)
	assert.Equal(t, string(log), "ran\nran\nran\n")
}

// TestAuditGeminiPolicy: a Gemini auditor is handed a policy file that
// denies the writers and the shell (the stand-in checks it is there).
func TestAuditGeminiPolicy(t *testing.T) {
	testenv.Need(t, "bash", "grep")
	dir := auditProject(t)
	fake := filepath.Join(t.TempDir(), "gemini")
	script := "#!/bin/bash\nwhile (($#)); do [[ $1 == --policy ]] && policy=$2; shift; done\n" +
		"grep -q 'toolName = \\[\"write_file\", \"replace\", \"run_shell_command\"' \"$policy\" && grep -q 'decision = \"deny\"' \"$policy\" || exit 9\n" +
		"printf '## D1\\nCLEAN: the rule holds because every exported function in main.go carries one\\n'\n"
	assert.NilError(t, os.WriteFile(fake, []byte(script), 0o700))
	state := t.TempDir()
	cmd := icmd.Command(omegaMonitor(t), "audit", "run", dir, "--agent", "gemini", "--bin", fake, "--no-deliver", "--max", "1")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "OMEGA_MONITOR_HOME=" + state}
	res := icmd.RunCmd(cmd)
	assert.Equal(t, res.ExitCode, 0, res.Combined())
	assert.Assert(t, strings.Contains(res.Stdout(), "1 dimension: 0 findings in 0, 1 clean"), res.Stdout())
}

func TestAuditUsage(t *testing.T) {
	dir := auditProject(t)
	for _, args := range [][]string{
		{"audit"},
		{"audit", "nope"},
		{"audit", "plan"},
		{"audit", "plan", filepath.Join(dir, "missing")},
		{"audit", "plan", filepath.Join(dir, "main.go")},
		{"audit", "check", "x.md"},
		{"audit", "check", filepath.Join(dir, "missing.md"), "--dir", dir},
		{"audit", "run", dir},
		{"audit", "run", dir, "--agent", "cursor"},
		{"audit", "run", dir, "--agent", "claude", "--parallel", "0"},
		{"audit", "run", dir, "--agent", "claude", "--every", "1m"},
		{"audit", "run", dir, "--agent", "claude", "--name", "a;b"},
		{"audit", "run", dir, "--agent", "claude", "--isolation", "chroot"},
		{"audit", "run", dir, "--agent", "claude", "--keep-env", "A=B"},
		{"audit", "stop", "a;b"},
	} {
		var out, errs strings.Builder
		code := run(args, strings.NewReader(""), &out, &errs)
		if code != 2 || !strings.HasPrefix(errs.String(), "omega-monitor") {
			t.Errorf("%q: exit %d, want 2; stderr:\n%s", args, code, errs.String())
		}
	}
}

// TestAuditNoAgent: an agent that is not installed is one line and exit 1,
// before any auditor starts.
func TestAuditNoAgent(t *testing.T) {
	dir := auditProject(t)
	env := newTestEnv("PATH="+t.TempDir(), "OMEGA_MONITOR_HOME="+t.TempDir())
	var out, errs strings.Builder
	code := env.run([]string{"audit", "run", dir, "--agent", "gemini"}, nil, &out, &errs)
	assert.Equal(t, code, 1)
	assert.Assert(t, strings.HasPrefix(errs.String(), "omega-monitor: audit run: no gemini to run (install it, or pass --bin PATH)"), errs.String())
}

// TestAuditWithoutTheSandboxHelper: a binary installed without
// omega-monitor-sandbox beside it or on PATH refuses to audit in a sandbox,
// in one line that names where it looked and how to install it, before any
// auditor starts; with --isolation none it needs none.
func TestAuditWithoutTheSandboxHelper(t *testing.T) {
	testenv.Need(t, "sh")
	dir := auditProject(t)
	lone := loneBinary(t)
	fake := filepath.Join(t.TempDir(), "claude")
	assert.NilError(t, os.WriteFile(fake, []byte("#!/bin/sh\n: >"+fake+".ran\nprintf '## D1\\nCLEAN: the rule holds because every exported function in main.go carries one\\n'\n"), 0o700))
	want := "omega-monitor: audit run: the audit sandbox's helper omega-monitor-sandbox is not installed: not at " +
		filepath.Join(filepath.Dir(lone), "omega-monitor-sandbox") + " nor on PATH; install omega-monitor's binaries from a checkout with " +
		"CGO_ENABLED=0 go install -trimpath -ldflags='-s -w' ./cmd/...\n"
	audit := func(isolation string) *icmd.Result {
		cmd := icmd.Command(lone, "audit", "run", dir, "--agent", "claude", "--bin", fake, "--no-deliver", "--max", "1", "--isolation", isolation)
		cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + t.TempDir(), "OMEGA_MONITOR_HOME=" + t.TempDir()}
		return icmd.RunCmd(cmd)
	}
	for _, isolation := range []string{"auto", "bwrap"} {
		res := audit(isolation)
		assert.Equal(t, res.ExitCode, 1, res.Combined())
		assert.Equal(t, res.Stderr(), want)
		assert.Equal(t, res.Stdout(), "")
		_, err := os.Stat(fake + ".ran")
		assert.Assert(t, os.IsNotExist(err), "an auditor ran under --isolation %s", isolation)
	}
	res := audit("none")
	assert.Equal(t, res.ExitCode, 0, res.Combined())
	assert.Assert(t, strings.Contains(res.Stdout(), "1 dimension: 0 findings in 0, 1 clean"), res.Stdout())
	_, err := os.Stat(fake + ".ran")
	assert.NilError(t, err, "the auditor did not run under --isolation none")
}

func TestAuditPlanAndCheckCommands(t *testing.T) {
	dir := auditProject(t)
	var out, errs strings.Builder
	assert.Equal(t, run([]string{"audit", "plan", dir}, nil, &out, &errs), 0, errs.String())
	assert.Assert(t, strings.HasPrefix(out.String(), "3 dimensions from the project's own rules in CLAUDE.md\n\nD1  Every exported function has a doc comment.\n    CLAUDE.md:5  Every"), out.String())

	out.Reset()
	assert.Equal(t, run([]string{"audit", "plan", dir, "--json"}, nil, &out, &errs), 0, errs.String())
	var p struct {
		Dimensions []struct{ ID, Brief string }
		Fallback   bool
	}
	assert.NilError(t, json.Unmarshal([]byte(out.String()), &p))
	assert.Equal(t, len(p.Dimensions), 3)
	assert.Assert(t, strings.Contains(p.Dimensions[2].Brief, "## D3\n"), p.Dimensions[2].Brief)

	report := filepath.Join(t.TempDir(), "r.md")
	write := func(s string) {
		assert.NilError(t, os.WriteFile(report, []byte(s), 0o600))
	}
	write("## D1\n1. main.go:5 — Run has no doc comment\n   > func Run() {}\n")
	out.Reset()
	assert.Equal(t, run([]string{"audit", "check", report, "--dir", dir}, nil, &out, &errs), 0, out.String())
	assert.Equal(t, out.String(), "D1 passed: 1 finding\npassed\n")

	write("## D1\n1. main.go:50 — nothing there\n## D2\nCLEAN: looks good\n")
	out.Reset()
	assert.Equal(t, run([]string{"audit", "check", report, "--dir", dir}, nil, &out, &errs), 1, out.String())
	assert.Equal(t, out.String(), fmt.Sprint(
		"rejected: D1 finding 1 (report line 2): cites main.go:50: line 50 does not exist, main.go has 7 lines\n",
		"rejected: D1 dimension (report line 1): neither a cited ranked finding nor a one-line specific clean verdict passed\n",
		"rejected: D2 clean verdict (report line 4): filler, not a verdict: \"looks good\" does not say why the rule holds (fewer than 6 words beyond stock phrases)\n",
		"rejected: D2 dimension (report line 3): neither a cited ranked finding nor a one-line specific clean verdict passed\n",
		"FAILED: 4 rejected\n"))
}

// TestAuditEvery: --every starts the audit in its own detached session
// audit-NAME, which runs it at once (last.json appears) and stays; a second
// start is refused; audit stop ends it.
func TestAuditEvery(t *testing.T) {
	testenv.Need(t, "bash")
	t.Parallel()
	f := newFleet(t)
	dir := auditProject(t)
	fake := filepath.Join(t.TempDir(), "claude")
	assert.NilError(t, os.WriteFile(fake, []byte("#!/bin/sh\nprintf '## D1\\nCLEAN: the rule holds because every exported function in main.go carries one\\n'\n"), 0o700))
	args := []string{"audit", "run", dir, "--agent", "claude", "--bin", fake, "--no-deliver", "--max", "1", "--every", "1h"}
	res := f.run(t, args...)
	assert.Equal(t, res.ExitCode, 0, res.Combined())
	t.Cleanup(func() { f.tmux.Cmd("kill-session", "-t", "=audit-shop").Run() })
	assert.Assert(t, strings.Contains(res.Stdout(), "in audit-shop (stop it with: omega-monitor audit stop shop)"), res.Stdout())
	assert.Assert(t, f.has(t, "audit-shop"))
	last := filepath.Join(f.state, "audits", "shop", "last.json")
	waitFor(t, func() bool { _, err := os.Stat(last); return err == nil }, "last.json from the scheduled run")
	// The board shows when it ran and what it found.
	res = f.run(t, "status", "--once")
	assert.Assert(t, strings.Contains(res.Stdout(), "audit shop  ran 00:00:"), res.Combined())
	assert.Assert(t, strings.Contains(res.Stdout(), "(claude)  1 dimension: 0 findings in 0, 1 clean"), res.Combined())
	res = f.run(t, args...)
	assert.Equal(t, res.ExitCode, 1)
	assert.Assert(t, strings.Contains(res.Stderr(), "already scheduled"), res.Stderr())
	res = f.run(t, "audit", "stop", "shop")
	assert.Equal(t, res.ExitCode, 0, res.Combined())
	assert.Assert(t, !f.has(t, "audit-shop"))
}

// waitFor polls ok for up to a minute.
func waitFor(t *testing.T, ok func() bool, what string) {
	t.Helper()
	for i := 0; i < 600; i++ {
		if ok() {
			return
		}
		exec.Command("sleep", "0.1").Run()
	}
	t.Fatalf("waited a minute for %s", what)
}

// toolResult is a turn's first tool result; none reads as empty.
func toolResult(t fakeapi.Turn) fakeapi.ToolResult {
	r, _ := t.Result()
	return r
}
