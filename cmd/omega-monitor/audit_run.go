package main

// audit run: the auditors through the agents' headless modes, the proof
// that the tree stayed the same, the report, last.json and its delivery;
// --every's scheduled session and audit stop.

import (
	"bytes"
	"context"

	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/audit"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/digest"
	"github.com/omega-monitor/omega-monitor/internal/statehome"
)

// auditFlags are the flags of audit run.
type auditFlags struct {
	agent, bin, name, mux string
	parallel, max         int
	timeout, every        time.Duration
	repeat                time.Duration
	noDeliver             bool
}

// Agents whose headless modes run auditors.
var auditAgents = []string{"claude", "codex", "gemini"}

// readOnlyTools are the only tools a Claude Code auditor gets; writeTools
// are denied by name as well, in case a setting would allow one.
const (
	readOnlyTools = "Read,Grep,Glob"
	writeTools    = "Bash,Edit,Write,NotebookEdit,WebFetch,WebSearch,Task,Agent,TodoWrite"
)

// agentArgv returns the command line that runs one auditor with brief as its
// prompt, read-only, in the agent's headless mode. Each prints its final
// answer, the report, on standard output.
// policy is the file of geminiPolicy, which only a Gemini auditor reads.
func agentArgv(agent, bin, brief, policy string) []string {
	if bin == "" {
		bin = agent
	}
	switch agent {
	case "claude":
		// -p: headless. --tools offers the model nothing but the three
		// readers; --allowedTools lets them run without a prompt, and
		// --disallowedTools denies the rest by name. dontAsk refuses
		// whatever is not allowed instead of asking nobody. Project and
		// local settings (the audited project's own .claude/, hooks
		// included) are not loaded, nor any MCP server.
		return []string{bin, "-p", brief,
			"--output-format", "text",
			"--tools", readOnlyTools,
			"--allowedTools", readOnlyTools,
			"--disallowedTools", writeTools,
			"--permission-mode", "dontAsk",
			"--setting-sources", "user",
			"--strict-mcp-config",
			"--no-session-persistence",
		}
	case "codex":
		// exec: headless, never asks; the read-only sandbox refuses any
		// write and the network; --ephemeral keeps no session files;
		// --ignore-rules loads no execpolicy rules, the audited project's
		// own included.
		return []string{bin, "exec",
			"--sandbox", "read-only",
			"--skip-git-repo-check",
			"--ephemeral",
			"--ignore-rules",
			"--color", "never",
			"--", brief,
		}
	case "gemini":
		// --prompt: headless. Plan mode is Gemini CLI's read-only mode: no
		// file changes, no shell. In a folder it does not trust, Gemini CLI
		// falls back to its default mode, where a headless run offers no
		// tool that needs a confirmation; the policy denies the writers
		// and the shell by name either way.
		return []string{bin,
			"--prompt", brief,
			"--approval-mode", "plan",
			"--policy", policy,
			"--output-format", "text",
		}
	}
	return nil
}

// geminiPolicy denies a Gemini auditor every tool that writes, runs or
// remembers, above any rule of a lower tier. (Gemini CLI 0.61.0 loads it
// without complaint, and names each field of a malformed one.)
const geminiPolicy = `# omega-monitor audit: auditors read, and nothing else.
[[rule]]
toolName = ["write_file", "replace", "run_shell_command", "save_memory", "web_fetch"]
decision = "deny"
priority = 999
`

// auditName is the name of a project's audits: its directory's base name,
// made safe as a file and session name.
func auditName(dir string) string {
	name := regexp.MustCompile(`[^A-Za-z0-9_-]+`).ReplaceAllString(filepath.Base(dir), "-")
	name = strings.Trim(name, "-")
	if name == "" {
		name = "project"
	}
	return name
}

func newAuditRunFlags(f *auditFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("audit run", flag.ContinueOnError)
	fs.StringVar(&f.agent, "agent", "", "the agent that audits: claude, codex or gemini")
	fs.StringVar(&f.bin, "bin", "", "the agent's executable `path` (default: its name on PATH)")
	fs.IntVar(&f.parallel, "parallel", 2, "auditors running at once")
	fs.IntVar(&f.max, "max", audit.MaxDimensions, "at most `N` dimensions")
	fs.DurationVar(&f.timeout, "timeout", 20*time.Minute, "each auditor's wall clock")
	fs.DurationVar(&f.every, "every", 0, "run on this schedule in a detached session audit-NAME (10m and up)")
	fs.DurationVar(&f.repeat, "repeat", 0, "run now and again after each `DURATION`, in the foreground (what --every's session runs)")
	fs.StringVar(&f.name, "name", "", "the audit's name (default: DIR's base name)")
	fs.BoolVar(&f.noDeliver, "no-deliver", false, "write the report, but send nothing")
	fs.StringVar(&f.mux, "mux", "", "multiplexer binary `path` for --every (default $OMEGA_MONITOR_MUX, ~/.local/bin/rmux, tmux)")
	return fs
}

// minEvery is the shortest schedule: an audit is the expensive layer, run
// rarely; a faster one spends the budget on watching.
const minEvery = 10 * time.Minute

func runAuditRun(args []string, stdout, stderr io.Writer) int {
	var f auditFlags
	fs := newAuditRunFlags(&f)
	positional, code, ok := cmdline.ParseInterspersed(fs, args, auditUsage, stdout, stderr)
	if !ok {
		return code
	}
	switch {
	case len(positional) != 1:
		fmt.Fprintf(stderr, "omega-monitor: audit run takes one DIR, got %d\n", len(positional))
		return 2
	case !slices.Contains(auditAgents, f.agent):
		fmt.Fprintf(stderr, "omega-monitor: audit run: --agent must be claude, codex or gemini; got %q\n", f.agent)
		return 2
	case f.parallel < 1 || f.max < 1 || f.timeout <= 0:
		fmt.Fprintln(stderr, "omega-monitor: audit run: --parallel and --max must be 1 or more, --timeout positive")
		return 2
	case f.every != 0 && f.every < minEvery:
		fmt.Fprintf(stderr, "omega-monitor: audit run: --every must be %v or more; got %v\n", minEvery, f.every)
		return 2
	case f.every != 0 && f.repeat != 0, f.repeat < 0:
		fmt.Fprintln(stderr, "omega-monitor: audit run: --every starts a session that repeats; --repeat is what it runs, not both")
		return 2
	}
	dir, err := projectDir(positional[0])
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: audit run: %v\n", err)
		return 2
	}
	if f.name == "" {
		f.name = auditName(dir)
	} else if auditName(f.name) != f.name {
		fmt.Fprintf(stderr, "omega-monitor: audit run: --name may hold only letters, digits, - and _; got %q\n", f.name)
		return 2
	}
	// The agent is found now, not by each auditor: a missing one is one
	// clear line, and a scheduled session runs the same binary whatever
	// its PATH.
	if f.bin == "" {
		f.bin = f.agent
	}
	if f.bin, err = exec.LookPath(f.bin); err == nil {
		f.bin, err = filepath.Abs(f.bin)
	}
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: audit run: no %s to run (install it, or pass --bin PATH): %v\n", f.agent, err)
		return 1
	}
	home, err := statehome.Dir()
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 1
	}
	if f.every != 0 {
		return startScheduledAudit(dir, home, fs, f, stdout, stderr)
	}
	if f.repeat != 0 {
		// The scheduled session: never exits on error, an error is a line.
		for {
			code := auditOnce(dir, home, f, stdout, stderr)
			fmt.Fprintf(stdout, "audit %s: exit %d; next run in %v\n", f.name, code, f.repeat)
			time.Sleep(f.repeat)
		}
	}
	return auditOnce(dir, home, f, stdout, stderr)
}

// startScheduledAudit starts the detached session audit-NAME that runs the
// audit with --repeat.
func startScheduledAudit(dir, home string, fs *flag.FlagSet, f auditFlags, stdout, stderr io.Writer) int {
	session := "audit-" + f.name
	if err := coord.CheckSession(session); err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 2
	}
	m, err := resolveMux(f.mux, "", coord.DefaultTimeout)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: cannot find this binary: %v\n", err)
		return 1
	}
	words := []string{"env", "OMEGA_MONITOR_HOME=" + home}
	// The session inherits the multiplexer server's environment, not this
	// one: the settings that say where things are go along. Credentials
	// (an agent's API key) do not: a command line is readable by every
	// user; the agent finds its own login as it does in any session.
	for _, name := range []string{"OMEGA_MONITOR_MUX", "OMEGA_MONITOR_ALERT_SEND", "OMEGA_TELEGRAM_CONF", "OMEGA_TELEGRAM_API"} {
		if v := os.Getenv(name); v != "" {
			words = append(words, name+"="+v)
		}
	}
	words = append(words, self, "audit", "run", dir, "--repeat", f.every.String(), "--name", f.name, "--bin", f.bin)
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "every", "name", "mux", "repeat", "bin":
		default:
			words = append(words, "--"+fl.Name+"="+fl.Value.String())
		}
	})
	ctx := context.Background()
	if _, err := m.Run(ctx, "", "new-session", "-d", "-s", session, "exec "+coord.ShellJoin(words...)); err != nil {
		var ce *coord.CallError
		if errors.As(err, &ce) && strings.Contains(ce.Stderr, "duplicate session") {
			fmt.Fprintf(stderr, "omega-monitor: the audit %s is already scheduled in %s (stop it with: omega-monitor audit stop %s)\n", f.name, session, f.name)
			return 1
		}
		fmt.Fprintf(stderr, "omega-monitor: cannot start %s: %v\n", session, err)
		return 1
	}
	fmt.Fprintf(stdout, "auditing %s every %v in %s (stop it with: omega-monitor audit stop %s)\n", dir, f.every, session, f.name)
	return 0
}

func runAuditStop(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("audit stop", flag.ContinueOnError)
	muxFlag := fs.String("mux", "", "multiplexer binary `path`")
	positional, code, ok := cmdline.ParseInterspersed(fs, args, auditUsage, stdout, stderr)
	if !ok {
		return code
	}
	if len(positional) != 1 || auditName(positional[0]) != positional[0] {
		fmt.Fprintln(stderr, "omega-monitor: audit stop takes one audit NAME")
		return 2
	}
	m, err := resolveMux(*muxFlag, "", coord.DefaultTimeout)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 1
	}
	session := "audit-" + positional[0]
	if _, err := m.Run(context.Background(), "", "kill-session", "-t", coord.Exact(session)); err != nil {
		fmt.Fprintf(stderr, "omega-monitor: no scheduled audit %s: %v\n", positional[0], err)
		return 1
	}
	fmt.Fprintf(stdout, "stopped %s\n", session)
	return 0
}

// LastAudit is $OMEGA_MONITOR_HOME/audits/NAME/last.json: what the latest run
// of an audit found, for the board.
type LastAudit struct {
	RanAt      string   `json:"ran_at"`
	Dir        string   `json:"dir"`
	Agent      string   `json:"agent"`
	Dimensions int      `json:"dimensions"`
	Findings   int      `json:"findings"`
	Clean      int      `json:"clean"`
	Rejected   int      `json:"rejected"`
	Failed     int      `json:"failed"`
	Violations []string `json:"violations"`
	Fallback   bool     `json:"fallback"`
	Summary    string   `json:"summary"`
	Report     string   `json:"report"`
	Delivered  bool     `json:"delivered"`
	// DeliveryError says why the report was not delivered ("" when it
	// was, or when --no-deliver said not to).
	DeliveryError string `json:"delivery_error,omitempty"`
}

// auditOnce runs one audit of dir and returns the exit status: 0 when it ran
// and delivered, 1 when the tree changed, no dimension got a verdict, or the
// report could not be written or delivered.
func auditOnce(dir, home string, f auditFlags, stdout, stderr io.Writer) int {
	files, err := ruleFiles(dir)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: audit: %v\n", err)
		return 1
	}
	p := audit.Discover(files, f.max)
	ranAt := time.Now().UTC()
	stamp := ranAt.Format("20060102T150405Z")
	base := filepath.Join(home, "audits", f.name)
	runDir := filepath.Join(base, "runs", stamp)
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		fmt.Fprintf(stderr, "omega-monitor: audit: %v\n", err)
		return 1
	}
	if f.agent == "gemini" {
		if err := writePrivate(filepath.Join(runDir, "gemini-policy.toml"), []byte(geminiPolicy)); err != nil {
			fmt.Fprintf(stderr, "omega-monitor: audit: %v\n", err)
			return 1
		}
	}
	before, err := hashTree(dir, home)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: audit: cannot read the tree: %v\n", err)
		return 1
	}
	outs := runAuditors(dir, runDir, p, f)
	after, err := hashTree(dir, home)
	var violations []string
	if err != nil {
		violations = []string{"cannot read the tree after the run: " + err.Error()}
	} else {
		violations = treeChanges(before, after)
	}
	s := audit.Synthesize(p, outs, audit.Run{Dir: dir, Agent: f.agent, RanAt: ranAt.Format(time.RFC3339), Violations: violations})
	// The report leaves the machine: mask what it quotes of secrets.
	report := alert.Redact(s.Markdown)
	reportPath := filepath.Join(base, "report-"+stamp+".md")
	if err := writePrivate(reportPath, []byte(report)); err != nil {
		fmt.Fprintf(stderr, "omega-monitor: audit: %v\n", err)
		return 1
	}
	last := LastAudit{
		RanAt: ranAt.Format(time.RFC3339), Dir: dir, Agent: f.agent,
		Dimensions: len(p.Dimensions), Findings: s.Findings, Clean: s.Clean,
		Rejected: len(s.Rejected), Failed: len(s.Failed), Violations: violations,
		Fallback: p.Fallback, Summary: s.Summary, Report: reportPath,
	}
	if last.Violations == nil {
		last.Violations = []string{}
	}
	code := 0
	if len(violations) > 0 || s.Findings+s.Clean == 0 {
		code = 1
	}
	if !f.noDeliver {
		if err := deliverReport(f.name, s.Summary, reportPath); err != nil {
			last.DeliveryError = err.Error()
			fmt.Fprintf(stderr, "omega-monitor: audit: the report was not delivered: %v\n", err)
			code = 1
		} else {
			last.Delivered = true
		}
	}
	b, _ := json.MarshalIndent(last, "", "  ")
	if err := writePrivate(filepath.Join(base, "last.json"), append(b, '\n')); err != nil {
		fmt.Fprintf(stderr, "omega-monitor: audit: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "audit %s: %s\nreport: %s\n", f.name, s.Summary, reportPath)
	return code
}

// runAuditors runs one auditor per dimension, at most f.parallel at once,
// each under its own wall clock, and checks what each reports. Each raw
// report is kept in runDir as ID.md, its standard error as ID.stderr.
func runAuditors(dir, runDir string, p audit.Plan, f auditFlags) []audit.Outcome {
	outs := make([]audit.Outcome, len(p.Dimensions))
	slots := make(chan struct{}, f.parallel)
	var wg sync.WaitGroup
	for i, d := range p.Dimensions {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			outs[i] = runAuditor(dir, runDir, d, f)
		})
	}
	wg.Wait()
	return outs
}

func runAuditor(dir, runDir string, d audit.Dimension, f auditFlags) audit.Outcome {
	o := audit.Outcome{ID: d.ID}
	out := runAgent(dir, agentArgv(f.agent, f.bin, d.Brief, filepath.Join(runDir, "gemini-policy.toml")), f.timeout)
	writePrivate(filepath.Join(runDir, d.ID+".md"), out.stdout.buf)
	writePrivate(filepath.Join(runDir, d.ID+".stderr"), out.stderr.buf)
	report := string(out.stdout.buf)
	if out.err != nil {
		o.Failed = fmt.Sprintf("%s auditor: %v after %v", f.agent, out.err, out.elapsed.Round(time.Second))
		if strings.TrimSpace(report) == "" {
			return o
		}
	}
	if out.stdout.cut {
		o.Failed = fmt.Sprintf("%s auditor: the report passed %d bytes and was cut", f.agent, maxReport)
	}
	kept, rejected := audit.Check(audit.Parse(report), []string{d.ID}, os.DirFS(dir))
	o.Rejected = rejected
	if len(kept.Sections) == 1 {
		o.Section = &kept.Sections[0]
	}
	return o
}

// maxReport is the most of an auditor's report that is kept: a report is
// text a person reads, and a runaway agent must not fill the disk.
const maxReport = 1 << 20

// capped keeps the first max bytes written to it and drops the rest, so
// that a chatty process never blocks on a full pipe.
type capped struct {
	buf []byte
	max int
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	keep := min(len(p), c.max-len(c.buf))
	c.buf = append(c.buf, p[:keep]...)
	c.cut = c.cut || keep < len(p)
	return len(p), nil
}

// agentRun is what one auditor's process did.
type agentRun struct {
	stdout, stderr *capped
	elapsed        time.Duration
	err            error // nil when it exited 0 in time
}

// runAgent runs argv in dir with standard input from /dev/null, in a
// process group of its own, under a wall clock of timeout. When the clock
// runs out the whole group is killed, and a grandchild still holding the
// output open is cut off a moment later: nothing it started outlives it.
func runAgent(dir string, argv []string, timeout time.Duration) agentRun {
	r := agentRun{stdout: &capped{max: maxReport}, stderr: &capped{max: 64 << 10}}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = r.stdout, r.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	err := cmd.Run()
	r.elapsed = time.Since(start)
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		r.err = fmt.Errorf("timed out after %v", timeout)
	case errors.As(err, &exit):
		r.err = fmt.Errorf("%v: %s", err, lastLine(string(r.stderr.buf), "no message"))
	default:
		r.err = err
	}
	return r
}

// hashTree returns every entry under dir but .git's insides and the state
// home (when dir holds it: the watchers and this audit write there), each
// with its type, mode and content hash (a link's target): the work tree,
// tracked and untracked, ignored files included.
func hashTree(dir, home string) (map[string]string, error) {
	tree := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && p != dir && (d.Name() == ".git" || p == home) {
			return filepath.SkipDir
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			tree[rel] = "dir " + fi.Mode().Perm().String()
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			tree[rel] = "link " + target
		case d.Type().IsRegular():
			h := digest.New()
			fh, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(h, fh)
			fh.Close()
			if err != nil {
				return err
			}
			tree[rel] = "file " + fi.Mode().Perm().String() + " " + hex.EncodeToString(h.Sum(nil))
		default:
			tree[rel] = "special " + fi.Mode().String()
		}
		return nil
	})
	return tree, err
}

// treeChanges lists what differs between two hashes of a tree, in path
// order.
func treeChanges(before, after map[string]string) []string {
	var out []string
	for p, h := range before {
		switch a, ok := after[p]; {
		case !ok:
			out = append(out, "removed: "+p)
		case a != h:
			out = append(out, "changed: "+p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			out = append(out, "added: "+p)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		_, pa, _ := strings.Cut(a, ": ")
		_, pb, _ := strings.Cut(b, ": ")
		return strings.Compare(pa, pb)
	})
	return out
}

// writePrivate writes a file 0600, whole or not at all.
func writePrivate(path string, b []byte) error { return atomicfile.Write(path, b, 0o600) }

// alertFunnel is the alert funnel script: $OMEGA_MONITOR_ALERT_SEND, else
// ~/.omega/bin/omega-alert-send.sh, as the loop finds it.
func alertFunnel() string {
	if p := os.Getenv("OMEGA_MONITOR_ALERT_SEND"); p != "" {
		return p
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".omega", "bin", "omega-alert-send.sh")
}

// captionMax is what a caption may hold: Telegram's limit is 1024
// characters once the HTML is parsed, and the escaping only adds.
const captionMax = 900

// deliverReport sends the report as one message: the summary as the
// caption, the whole report as a document.
func deliverReport(name, summary, reportPath string) error {
	funnel := alertFunnel()
	if fi, err := os.Stat(funnel); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("no alert funnel installed at %s (install it, or pass --no-deliver)", funnel)
	}
	text := alert.Redact("AUDIT · " + name + "\n" + summary)
	if r := []rune(text); len(r) > captionMax {
		text = string(r[:captionMax]) + "…"
	}
	caption := "<b>" + html.EscapeString(strings.SplitN(text, "\n", 2)[0]) + "</b>"
	if _, rest, ok := strings.Cut(text, "\n"); ok {
		caption += "\n" + html.EscapeString(rest)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, funnel, "--document", reportPath, caption)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %v: %s", funnel, err, lastLine(errb.String(), "no message"))
	}
	return nil
}
