package main

// audit plan and audit check: the dimensions of a project's own rules, and
// a report's citations checked against its files. audit run and audit stop
// are in audit_run.go; package auditrun does the work of all but check.

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/omega-monitor/omega-monitor/internal/audit"
	"github.com/omega-monitor/omega-monitor/internal/auditrun"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
)

const auditUsage = `usage: omega-monitor audit plan DIR [--json] [--max N]
       omega-monitor audit check REPORT --dir DIR
       omega-monitor audit run DIR --agent claude|codex|gemini [--parallel N] [--every DURATION]
       omega-monitor audit stop NAME

The deep audit: one read-only, adversarial auditor per dimension of the
project's own rules (CLAUDE.md, AGENTS.md, GEMINI.md, RULES.md,
CONTRIBUTING.md, .cursorrules, .cursor/rules/, rules/, and the rules and
invariants its docs state), each citing file:line, every citation checked.

  plan    prints the dimensions, where each came from, and (--json) each brief
  check   checks a report: exit 0 when all of it passed, 1 when anything was
          rejected (each rejection is listed), 2 on a usage error; it reads
          regular files beneath DIR only, 4 MiB each, 256 MiB and 2 minutes
          in all (a citation past either is rejected)
  run     runs the auditors through the agent's headless mode, checks their
          reports, writes one report under $OMEGA_MONITOR_HOME/audits/NAME/,
          and delivers it through the alert funnel; --every starts it on a
          schedule in its own detached session audit-NAME instead
  stop    ends the scheduled audit NAME (its session audit-NAME)
`

func runAudit(e *Env, args []string) int {
	if len(args) == 0 {
		return e.usageError("audit", "plan, check, run or stop?")
	}
	switch args[0] {
	case "plan":
		return runAuditPlan(args[1:], e)
	case "check":
		return runAuditCheck(args[1:], e)
	case "run":
		return runAuditRun(args[1:], e)
	case "stop":
		return runAuditStop(args[1:], e)
	case "-h", "-help", "--help", "help":
		io.WriteString(e.Stdout, auditUsage)
		return 0
	}
	return e.usageError("audit", fmt.Sprintf("unknown subcommand %q (plan, check, run or stop)", args[0]))
}

// auditSubUsage is an audit subcommand's usage: the audit's, then the
// subcommand's own flags, listed.
func auditSubUsage(fs *flag.FlagSet) string {
	return auditUsage + "\nflags of " + fs.Name() + ":\n"
}

// auditMessage is err as the audit commands print it after their own name:
// an auditrun.Error without the package's, so that the lines read as they
// did before the package ran the audit.
func auditMessage(err error) string {
	if e, ok := errors.AsType[*auditrun.Error](err); ok {
		return e.Message()
	}
	return err.Error()
}

func runAuditPlan(args []string, e *Env) int {
	fs := flag.NewFlagSet("audit plan", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the plan as JSON, each dimension's brief included")
	max := fs.Int("max", audit.MaxDimensions, "at most `N` dimensions")
	positional, code, ok := e.parse(fs, args, auditSubUsage(fs))
	if !ok {
		return code
	}
	if len(positional) != 1 || *max < 1 {
		return e.exitf(2, "omega-monitor: audit plan takes one DIR (and --max 1 or more)")
	}
	dir, err := auditrun.ProjectDir(positional[0])
	if err != nil {
		return e.exitf(2, "omega-monitor: audit plan: %v", err)
	}
	p, err := auditrun.Plan(dir, *max)
	if err != nil {
		return e.exitf(2, "omega-monitor: audit plan: %s", auditMessage(err))
	}
	if *asJSON {
		enc := json.NewEncoder(e.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false) // the briefs hold <, > and & as they are
		enc.Encode(p)
		return 0
	}
	io.WriteString(e.Stdout, p.Text())
	return 0
}

func runAuditCheck(args []string, e *Env) int {
	fs := flag.NewFlagSet("audit check", flag.ContinueOnError)
	dir := fs.String("dir", "", "the project `DIR` the report cites")
	positional, code, ok := e.parse(fs, args, auditSubUsage(fs))
	if !ok {
		return code
	}
	if len(positional) != 1 || *dir == "" {
		return e.exitf(2, "omega-monitor: audit check takes one REPORT and --dir DIR")
	}
	abs, err := auditrun.ProjectDir(*dir)
	if err != nil {
		return e.exitf(2, "omega-monitor: audit check: %v", err)
	}
	b, err := fsutil.ReadCapped(positional[0], auditrun.MaxReport)
	if err != nil {
		return e.exitf(2, "omega-monitor: audit check: %v", err)
	}
	// Only regular files beneath DIR are read: a citation through a link
	// out of it, a device or a FIFO is rejected, never opened.
	pfs, err := auditrun.OpenProject(abs)
	if err != nil {
		return e.exitf(2, "omega-monitor: audit check: %v", err)
	}
	defer pfs.Close()
	kept, rejected := audit.Check(audit.Parse(string(b)), nil, pfs)
	io.WriteString(e.Stdout, audit.CheckText(kept, rejected))
	if len(rejected) > 0 {
		return 1
	}
	return 0
}
