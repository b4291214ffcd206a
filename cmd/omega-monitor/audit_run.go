package main

// audit run: the auditors through the agents' headless modes, the proof
// that the tree stayed the same, the report, last.json and its delivery;
// --every's scheduled session and audit stop.

import (
	"bytes"
	"context"

	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
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
	"github.com/omega-monitor/omega-monitor/auditrun"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/statedir"
)

// auditFlags are the flags of audit run.
type auditFlags struct {
	agent, bin, name, mux string
	parallel, max         int
	timeout, every        time.Duration
	repeat                time.Duration
	noDeliver             bool
	isolation             string
	keepEnv, codexConfig  cmdline.Strings
}

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
	fs.StringVar(&f.isolation, "isolation", auditrun.IsolateAuto, "what surrounds each auditor besides its copy, home and environment: auto (bubblewrap where it works), bwrap (required), none")
	fs.Var(&f.keepEnv, "keep-env", "hand the environment variable `NAME` to the auditors too (a model provider's key); repeatable")
	fs.Var(&f.codexConfig, "codex-config", "hand a Codex auditor the setting `KEY=VALUE` (its model or provider: your config.toml is not loaded); repeatable")
	fs.StringVar(&f.mux, "mux", "", "multiplexer binary `path` for --every (default $OMEGA_MONITOR_MUX, ~/.local/bin/rmux, tmux)")
	return fs
}

// envName is what --keep-env accepts: a variable's name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

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
	case !slices.Contains(auditrun.Agents, f.agent):
		fmt.Fprintf(stderr, "omega-monitor: audit run: --agent must be claude, codex or gemini; got %q\n", f.agent)
		return 2
	case f.parallel < 1 || f.max < 1 || f.timeout <= 0:
		fmt.Fprintln(stderr, "omega-monitor: audit run: --parallel and --max must be 1 or more, --timeout positive")
		return 2
	case f.every != 0 && f.every < minEvery:
		fmt.Fprintf(stderr, "omega-monitor: audit run: --every must be %v or more; got %v\n", minEvery, f.every)
		return 2
	case !slices.Contains(auditrun.Isolations, f.isolation):
		fmt.Fprintf(stderr, "omega-monitor: audit run: --isolation must be %s; got %q\n", strings.Join(auditrun.Isolations, ", "), f.isolation)
		return 2
	case slices.ContainsFunc(f.keepEnv, func(n string) bool { return !envName.MatchString(n) }):
		fmt.Fprintf(stderr, "omega-monitor: audit run: --keep-env takes variable names (letters, digits, _); got %q\n", f.keepEnv.String())
		return 2
	case auditrun.CheckCodexConfig(f.codexConfig) != nil:
		fmt.Fprintf(stderr, "omega-monitor: audit run: %v\n", auditrun.CheckCodexConfig(f.codexConfig))
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
	home, err := statedir.Home()
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
		case "keep-env", "codex-config":
			for _, v := range fl.Value.(*cmdline.Strings).Values() {
				words = append(words, "--"+fl.Name+"="+v)
			}
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
	base := statedir.AuditDir(home, f.name)
	runDir := filepath.Join(base, "runs", stamp)
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		fmt.Fprintf(stderr, "omega-monitor: audit: %v\n", err)
		return 1
	}
	// The auditors never run in the project: they read a sanitized copy
	// of it, with a throwaway home and a scrubbed environment, inside
	// bubblewrap where the machine has it. What the project could make an
	// agent run (its agent settings, MCP servers, hooks, environment
	// files, git config) is not in the copy.
	sb, err := auditrun.Prepare(auditrun.Config{
		Dir: dir, RunDir: runDir, StateHome: home,
		Agent: f.agent, Bin: f.bin, Environ: os.Environ(), KeepEnv: f.keepEnv, CodexConfig: f.codexConfig,
		Isolation: f.isolation,
	})
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: audit: refusing to run the auditors: %v\n", err)
		return 1
	}
	defer sb.Remove()
	before, err := auditrun.HashTree(sb.Tree, "")
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: audit: cannot read the copy: %v\n", err)
		return 1
	}
	gitBefore, err := auditrun.HashGitControl(dir)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: audit: cannot read the tree: %v\n", err)
		return 1
	}
	outs := runAuditors(sb, runDir, p, f)
	var violations []string
	if after, err := auditrun.HashTree(sb.Tree, ""); err != nil {
		violations = []string{"cannot read the copy after the run: " + err.Error()}
	} else {
		violations = auditrun.TreeChanges(before, after)
	}
	if after, err := auditrun.HashGitControl(dir); err != nil {
		violations = append(violations, "cannot read the tree's git control after the run: "+err.Error())
	} else {
		violations = append(violations, auditrun.TreeChanges(gitBefore, after)...)
	}
	run := audit.Run{Dir: dir, Agent: f.agent, RanAt: ranAt.Format(time.RFC3339), Violations: violations,
		Sandbox: sb.Describe(), LeftOut: auditrun.Brief(sb.LeftOut, 20)}
	s := audit.Synthesize(p, outs, run)
	// The report leaves the machine: mask what it quotes of secrets.
	report := alert.Redact(s.Markdown)
	reportPath := filepath.Join(base, "report-"+stamp+".md")
	if err := writePrivate(reportPath, []byte(report)); err != nil {
		fmt.Fprintf(stderr, "omega-monitor: audit: %v\n", err)
		return 1
	}
	last := statedir.AuditRecord{
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
	if err := writePrivate(filepath.Join(base, statedir.AuditFile), append(b, '\n')); err != nil {
		fmt.Fprintf(stderr, "omega-monitor: audit: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "audit %s: %s\nreport: %s\n", f.name, s.Summary, reportPath)
	return code
}

// runAuditors runs one auditor per dimension, at most f.parallel at once,
// each under its own wall clock, and checks what each reports. Each raw
// report is kept in runDir as ID.md, its standard error as ID.stderr.
func runAuditors(sb *auditrun.Sandbox, runDir string, p audit.Plan, f auditFlags) []audit.Outcome {
	outs := make([]audit.Outcome, len(p.Dimensions))
	slots := make(chan struct{}, f.parallel)
	var wg sync.WaitGroup
	for i, d := range p.Dimensions {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			outs[i] = runAuditor(sb, runDir, d, f)
		})
	}
	wg.Wait()
	return outs
}

func runAuditor(sb *auditrun.Sandbox, runDir string, d audit.Dimension, f auditFlags) audit.Outcome {
	o := audit.Outcome{ID: d.ID}
	out := sb.Run(f.bin, d.Brief, f.timeout)
	writePrivate(filepath.Join(runDir, d.ID+".md"), out.Stdout)
	writePrivate(filepath.Join(runDir, d.ID+".stderr"), out.Stderr)
	report := string(out.Stdout)
	if out.Err != nil {
		o.Failed = fmt.Sprintf("%s auditor: %v after %v", f.agent, out.Err, out.Elapsed.Round(time.Second))
		if strings.TrimSpace(report) == "" {
			return o
		}
	}
	if out.Cut {
		o.Failed = fmt.Sprintf("%s auditor: the report passed %d bytes and was cut", f.agent, auditrun.MaxReport)
	}
	// Citations are checked against the copy the auditor read, which
	// holds no link and nothing but regular files; ProjectFS refuses
	// anything else all the same.
	var kept audit.Report
	var rejected []audit.Rejection
	if pfs, err := auditrun.OpenProject(sb.Tree); err != nil {
		o.Failed = fmt.Sprintf("%s auditor: cannot check the report: %v", f.agent, err)
	} else {
		kept, rejected = audit.Check(audit.Parse(report), []string{d.ID}, pfs)
		pfs.Close()
	}
	o.Rejected = rejected
	if len(kept.Sections) == 1 {
		o.Section = &kept.Sections[0]
	}
	return o
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

// telegramConf is the funnel's config: $OMEGA_TELEGRAM_CONF, else
// ~/.omega/telegram.conf.
func telegramConf() string {
	if p := os.Getenv("OMEGA_TELEGRAM_CONF"); p != "" {
		return p
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".omega", "telegram.conf")
}

// privateChat reports whether the funnel writes to a private chat (a
// positive chat id: the operator and the bot), where the whole report may
// go; a group or a channel gets the summary alone. A config that cannot be
// read is taken as a group: the funnel will say what is wrong with it.
func privateChat() bool {
	b, err := fsutil.ReadCapped(telegramConf(), 64<<10)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "chat_id="); ok {
			v = strings.Trim(strings.TrimSpace(v), `"'`)
			return v != "" && strings.Trim(v, "0123456789") == ""
		}
	}
	return false
}

// deliverReport sends the report as one message: the summary as the
// caption, the whole report as a document, to a private chat. A group chat
// gets the summary and where the report lies, not the report: what an
// auditor read of a hostile repository is for the operator's eyes.
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
	args := []string{"--document", reportPath, caption}
	if !privateChat() {
		args = []string{caption + "\n" + html.EscapeString("The report (not sent to a group chat): "+reportPath)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, funnel, args...)
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
