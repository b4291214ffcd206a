package main

// audit run and audit stop: their flags, their checks and the exit status
// of what package auditrun did (the auditors, the proof that the tree stayed
// the same, the report, last.json and its delivery, --every's session).

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/omega-monitor/omega-monitor/audit"
	"github.com/omega-monitor/omega-monitor/auditrun"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
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
	helper                string // omega-monitor-sandbox, unless --isolation none
	keepEnv, codexConfig  cmdline.Strings
}

// settings are the audit's settings from its flags, for dir and the state
// home home.
func (f auditFlags) settings(e *Env, dir, home string) auditrun.Settings {
	return auditrun.Settings{
		Dir: dir, Home: home, Name: f.name, Agent: f.agent, Bin: f.bin,
		Parallel: f.parallel, Max: f.max, Timeout: f.timeout,
		Isolation: f.isolation, KeepEnv: f.keepEnv, CodexConfig: f.codexConfig,
		Environ: e.Environ(), Deliver: !f.noDeliver, Helper: f.helper,
	}
}

func newAuditRunFlags(f *auditFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("audit run", flag.ContinueOnError)
	fs.StringVar(&f.agent, "agent", "", "the agent that audits: claude, codex or gemini")
	fs.StringVar(&f.bin, "bin", "", "the agent's executable `path` (default: its name on PATH)")
	fs.IntVar(&f.parallel, "parallel", 2, "auditors running at once")
	fs.IntVar(&f.max, "max", audit.MaxDimensions, "at most `N` dimensions")
	f.timeout = 20 * time.Minute
	fs.Var((*cmdline.Duration)(&f.timeout), "timeout", "each auditor's wall clock, a `duration`")
	fs.Var((*cmdline.Duration)(&f.every), "every", "run on this schedule in a detached session audit-NAME (10m and up), a `duration`")
	fs.Var((*cmdline.Duration)(&f.repeat), "repeat", "run now and again after each `duration`, in the foreground (what --every's session runs)")
	fs.StringVar(&f.name, "name", "", "the audit's name (default: DIR's base name)")
	fs.BoolVar(&f.noDeliver, "no-deliver", false, "write the report, but send nothing")
	fs.StringVar(&f.isolation, "isolation", auditrun.IsolateAuto, "what surrounds each auditor besides its copy, home and environment: auto (bubblewrap where it works), bwrap (required), none")
	fs.Var(&f.keepEnv, "keep-env", "hand the environment variable `NAME` to the auditors too (a model provider's key); repeatable")
	fs.Var(&f.codexConfig, "codex-config", "hand a Codex auditor the setting `KEY=VALUE` (its model or provider: your config.toml is not loaded); repeatable")
	fs.StringVar(&f.mux, "mux", "", "multiplexer binary `path` for --every (default $OMEGA_MONITOR_MUX, ~/.local/bin/rmux, tmux)")
	return fs
}

func runAuditRun(args []string, e *Env) int {
	var f auditFlags
	fs := newAuditRunFlags(&f)
	positional, code, ok := e.parse(fs, args, auditUsage)
	if !ok {
		return code
	}
	if len(positional) != 1 {
		fmt.Fprintf(e.Stderr, "omega-monitor: audit run takes one DIR, got %d\n", len(positional))
		return 2
	}
	if err := f.settings(e, "", "").Check(); err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor: audit run: %v\n", err)
		return 2
	}
	if err := auditrun.CheckSchedule(f.every, f.repeat); err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor: audit run: %v\n", err)
		return 2
	}
	dir, err := auditrun.ProjectDir(positional[0])
	if err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor: audit run: %v\n", err)
		return 2
	}
	if f.name == "" {
		f.name = auditrun.Name(dir)
	} else if auditrun.Name(f.name) != f.name {
		fmt.Fprintf(e.Stderr, "omega-monitor: audit run: --name may hold only letters, digits, - and _; got %q\n", f.name)
		return 2
	}
	if f.bin, f.helper, err = auditrun.Executables(f.agent, f.bin, f.isolation, e.LookPath); err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor: audit run: %v\n", err)
		return 1
	}
	home, err := statedir.Home(e.Getenv)
	if err != nil {
		return e.fail(1, err)
	}
	if f.every != 0 {
		return startScheduledAudit(dir, home, fs, f, e)
	}
	if f.repeat != 0 {
		// The scheduled session: never exits on error, an error is a line.
		for {
			code := auditOnce(dir, home, f, e)
			fmt.Fprintf(e.Stdout, "audit %s: exit %d; next run in %v\n", f.name, code, f.repeat)
			time.Sleep(f.repeat)
		}
	}
	return auditOnce(dir, home, f, e)
}

// startScheduledAudit starts the detached session audit-NAME that runs the
// audit with --repeat: this binary, with the flags given but those that
// start the session.
func startScheduledAudit(dir, home string, fs *flag.FlagSet, f auditFlags, e *Env) int {
	if err := coord.CheckSession(auditrun.Session(f.name)); err != nil {
		return e.fail(2, err)
	}
	m, err := resolveMux(e, f.mux, "", coord.DefaultTimeout)
	if err != nil {
		return e.fail(1, err)
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor: cannot find this binary: %v\n", err)
		return 1
	}
	argv := auditrun.RepeatArgv(self, dir, f.every, f.name, f.bin, fs)
	session, err := auditrun.Schedule(e.Ctx, m, f.name, home, e.Environ(), argv)
	switch {
	case errors.Is(err, auditrun.ErrScheduled):
		fmt.Fprintf(e.Stderr, "omega-monitor: the audit %s is already scheduled in %s (stop it with: omega-monitor audit stop %s)\n", f.name, session, f.name)
		return 1
	case err != nil:
		fmt.Fprintf(e.Stderr, "omega-monitor: %s\n", auditMessage(err))
		return 1
	}
	fmt.Fprintf(e.Stdout, "auditing %s every %v in %s (stop it with: omega-monitor audit stop %s)\n", dir, f.every, session, f.name)
	return 0
}

func runAuditStop(args []string, e *Env) int {
	fs := flag.NewFlagSet("audit stop", flag.ContinueOnError)
	muxFlag := fs.String("mux", "", "multiplexer binary `path`")
	positional, code, ok := e.parse(fs, args, auditUsage)
	if !ok {
		return code
	}
	if len(positional) != 1 || auditrun.Name(positional[0]) != positional[0] {
		fmt.Fprintln(e.Stderr, "omega-monitor: audit stop takes one audit NAME")
		return 2
	}
	m, err := resolveMux(e, *muxFlag, "", coord.DefaultTimeout)
	if err != nil {
		return e.fail(1, err)
	}
	session, err := auditrun.Stop(e.Ctx, m, positional[0])
	if err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor: %s\n", auditMessage(err))
		return 1
	}
	fmt.Fprintf(e.Stdout, "stopped %s\n", session)
	return 0
}

// auditOnce runs one audit of dir and returns the exit status: 0 when it ran
// and delivered, 1 when the tree changed, no dimension got a verdict, or the
// report could not be written or delivered.
func auditOnce(dir, home string, f auditFlags, e *Env) int {
	last, err := auditrun.Once(f.settings(e, dir, home))
	if last.DeliveryError != "" {
		fmt.Fprintf(e.Stderr, "omega-monitor: audit: the report was not delivered: %s\n", last.DeliveryError)
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor: audit: %s\n", auditMessage(err))
		return 1
	}
	fmt.Fprintf(e.Stdout, "audit %s: %s\nreport: %s\n", f.name, last.Summary, last.Report)
	if len(last.Violations) > 0 || last.Findings+last.Clean == 0 || last.DeliveryError != "" {
		return 1
	}
	return 0
}
