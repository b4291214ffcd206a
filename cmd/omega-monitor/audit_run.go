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

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/audit"
	"github.com/omega-monitor/omega-monitor/internal/auditrun"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// auditFlags are the flags of audit run: the audit's settings, and how
// it is run.
type auditFlags struct {
	auditrun.Settings
	every, repeat time.Duration
	noDeliver     bool
	mux           string
}

func newAuditRunFlags(f *auditFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("audit run", flag.ContinueOnError)
	fs.StringVar(&f.Agent, "agent", "", "the agent that audits: claude, codex or gemini")
	fs.StringVar(&f.Bin, "bin", "", "the agent's executable `path` (default: its name on PATH)")
	fs.IntVar(&f.Parallel, "parallel", 2, "auditors running at once")
	fs.IntVar(&f.Max, "max", audit.MaxDimensions, "at most `N` dimensions")
	f.Timeout = 20 * time.Minute
	fs.Var((*cmdline.Duration)(&f.Timeout), "timeout", "each auditor's wall clock, a `duration`")
	fs.Var((*cmdline.Duration)(&f.every), "every", "run on this schedule in a detached session audit-NAME (10m and up), a `duration`")
	fs.Var((*cmdline.Duration)(&f.repeat), "repeat", "run now and again after each `duration`, in the foreground (what --every's session runs)")
	fs.StringVar(&f.Name, "name", "", "the audit's name (default: DIR's base name)")
	fs.BoolVar(&f.noDeliver, "no-deliver", false, "write the report, but send nothing")
	fs.StringVar(&f.Isolation, "isolation", auditrun.IsolateAuto, "what surrounds each auditor besides its copy, home and environment: auto (bubblewrap where it works), bwrap (required), none")
	fs.Var((*cmdline.Strings)(&f.KeepEnv), "keep-env", "hand the environment variable `NAME` to the auditors too; in bubblewrap none whose name says key, token, secret, password, credential or auth (a provider's key reaches its API through the sandbox's proxy); repeatable")
	fs.Var((*cmdline.Strings)(&f.CodexConfig), "codex-config", "hand a Codex auditor the setting `KEY=VALUE` (its model or provider: your config.toml is not loaded); repeatable")
	fs.StringVar(&f.mux, "mux", "", "multiplexer binary `path` for --every (default $OMEGA_MONITOR_MUX, ~/.local/bin/rmux, tmux)")
	return fs
}

func runAuditRun(args []string, e *Env) int {
	var f auditFlags
	fs := newAuditRunFlags(&f)
	positional, code, ok := e.parse(fs, args, auditSubUsage(fs))
	if !ok {
		return code
	}
	if len(positional) != 1 {
		return e.exitf(2, "omega-monitor: audit run takes one DIR, got %d", len(positional))
	}
	err := auditrun.CheckSchedule(f.every, f.repeat)
	if err == nil {
		err = f.Prepare(positional[0])
	}
	if err != nil {
		return e.exitf(2, "omega-monitor: audit run: %v", err)
	}
	if f.Bin, f.Helper, err = auditrun.Executables(f.Agent, f.Bin, f.Isolation, e.LookPath); err != nil {
		return e.exitf(1, "omega-monitor: audit run: %v", err)
	}
	if f.Home, err = statedir.Home(e.Getenv); err != nil {
		return e.fail(1, err)
	}
	f.Environ, f.Deliver = e.Environ(), !f.noDeliver
	if f.every != 0 {
		return startScheduledAudit(fs, f, e)
	}
	if f.repeat != 0 {
		// The scheduled session: never exits on error, an error is a line.
		for {
			code := auditOnce(f, e)
			fmt.Fprintf(e.Stdout, "audit %s: exit %d; next run in %v\n", f.Name, code, f.repeat)
			time.Sleep(f.repeat)
		}
	}
	return auditOnce(f, e)
}

// startScheduledAudit starts the detached session audit-NAME that runs the
// audit with --repeat: this binary, with the flags given but those that
// start the session.
func startScheduledAudit(fs *flag.FlagSet, f auditFlags, e *Env) int {
	if err := coord.CheckSession(auditrun.Session(f.Name)); err != nil {
		return e.fail(2, err)
	}
	m, err := resolveMux(e, f.mux, "", coord.DefaultTimeout)
	if err != nil {
		return e.fail(1, err)
	}
	self, err := os.Executable()
	if err != nil {
		return e.exitf(1, "omega-monitor: cannot find this binary: %v", err)
	}
	argv := auditrun.RepeatArgv(self, f.Dir, f.every, f.Name, f.Bin, fs)
	session, err := auditrun.Schedule(e.Ctx, m, f.Name, f.Home, f.Environ, argv)
	switch {
	case errors.Is(err, auditrun.ErrScheduled):
		return e.exitf(1, "omega-monitor: the audit %s is already scheduled in %s (stop it with: omega-monitor audit stop %s)", f.Name, session, f.Name)
	case err != nil:
		return e.exitf(1, "omega-monitor: %s", auditMessage(err))
	}
	fmt.Fprintf(e.Stdout, "auditing %s every %v in %s (stop it with: omega-monitor audit stop %s)\n", f.Dir, f.every, session, f.Name)
	return 0
}

func runAuditStop(args []string, e *Env) int {
	fs := flag.NewFlagSet("audit stop", flag.ContinueOnError)
	muxFlag := fs.String("mux", "", "multiplexer binary `path`")
	positional, code, ok := e.parse(fs, args, auditSubUsage(fs))
	if !ok {
		return code
	}
	if len(positional) != 1 || auditrun.Name(positional[0]) != positional[0] {
		return e.exitf(2, "omega-monitor: audit stop takes one audit NAME")
	}
	m, err := resolveMux(e, *muxFlag, "", coord.DefaultTimeout)
	if err != nil {
		return e.fail(1, err)
	}
	session, err := auditrun.Stop(e.Ctx, m, positional[0])
	if err != nil {
		return e.exitf(1, "omega-monitor: %s", auditMessage(err))
	}
	fmt.Fprintf(e.Stdout, "stopped %s\n", session)
	return 0
}

// auditOnce runs one audit of dir and returns the exit status: 0 when it ran
// and delivered, 1 when the tree changed, no dimension got a verdict, or the
// report could not be written or delivered.
func auditOnce(f auditFlags, e *Env) int {
	last, err := auditrun.Once(f.Settings)
	if last.DeliveryError != "" {
		fmt.Fprintf(e.Stderr, "omega-monitor: audit: the report was not delivered: %s\n", last.DeliveryError)
	}
	if err != nil {
		return e.exitf(1, "omega-monitor: audit: %s", auditMessage(err))
	}
	fmt.Fprintf(e.Stdout, "audit %s: %s\nreport: %s\n", f.Name, last.Summary, last.Report)
	if len(last.Violations) > 0 || last.Findings+last.Clean == 0 || last.DeliveryError != "" {
		return 1
	}
	return 0
}
