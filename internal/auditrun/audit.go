package auditrun

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/audit"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// Settings are what one audit runs with. The command line fills them from
// its flags; nothing here looks further.
type Settings struct {
	Dir   string // the project, absolute
	Home  string // the state home: the audit writes under audits/Name/
	Name  string // the audit's name, a safe file and session name
	Agent string // claude, codex or gemini
	Bin   string // the agent's executable, absolute
	// Parallel is how many auditors run at once, Max the most dimensions
	// audited, Timeout each auditor's wall clock.
	Parallel, Max int
	Timeout       time.Duration
	Isolation     string   // one of Isolations
	KeepEnv       []string // more variable names the auditors get (a provider's key)
	CodexConfig   []string // KEY=VALUE settings of a Codex auditor; see CheckCodexConfig
	// Environ is the caller's environment: the auditors get a scrubbed
	// part of it, the alert funnel all of it, and the funnel's paths are
	// found in it.
	Environ []string
	// Deliver sends the report through the alert funnel; without it the
	// report is only written.
	Deliver bool
	// Helper is omega-monitor-sandbox's executable, absolute: the
	// auditors' only way to their API from inside bubblewrap (see
	// Config.Helper). Not needed with IsolateNone.
	Helper string
}

// maxRuleFile is the largest file read for rules: a rules file is prose.
const maxRuleFile = 1 << 20

// Plan reads the rules of the project dir (absolute) and returns its
// audit's dimensions, at most max.
func Plan(dir string, max int) (audit.Plan, error) {
	files, err := ruleFiles(dir)
	if err != nil {
		return audit.Plan{}, &Error{Err: err}
	}
	return audit.Discover(files, max), nil
}

// ruleFiles walks dir for the files package audit reads rules from.
func ruleFiles(dir string) ([]audit.File, error) {
	var files []audit.File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // an unreadable corner is not the project's rules
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p != dir && audit.SkipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if _, ok := audit.Classify(rel); !ok {
			return nil
		}
		if fi, err := d.Info(); err != nil || fi.Size() > maxRuleFile {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		files = append(files, audit.File{Path: rel, Content: string(b)})
		return nil
	})
	return files, err
}

// Once runs one audit and returns its record, as written to
// audits/NAME/last.json beside the report. An error (an *Error) means the
// audit did not run or its record was not written; the record then holds
// what is known, its DeliveryError included. A record without an error may
// still tell of a failed audit: the tree changed (Violations), no dimension
// got a verdict (Findings+Clean is 0), or the report was not delivered.
func Once(s Settings) (statedir.AuditRecord, error) {
	p, err := Plan(s.Dir, s.Max)
	if err != nil {
		return statedir.AuditRecord{}, err
	}
	ranAt := time.Now().UTC()
	stamp := ranAt.Format("20060102T150405Z")
	base := statedir.AuditDir(s.Home, s.Name)
	runDir := filepath.Join(base, "runs", stamp)
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		return statedir.AuditRecord{}, &Error{Err: err}
	}
	// The auditors never run in the project: they read a sanitized copy
	// of it, with a throwaway home and a scrubbed environment, inside
	// bubblewrap where the machine has it. What the project could make an
	// agent run (its agent settings, MCP servers, hooks, environment
	// files, git config) is not in the copy.
	sb, err := Prepare(Config{
		Dir: s.Dir, RunDir: runDir, StateHome: s.Home,
		Agent: s.Agent, Bin: s.Bin, Environ: s.Environ, KeepEnv: s.KeepEnv, CodexConfig: s.CodexConfig,
		Isolation: s.Isolation, Helper: s.Helper,
	})
	if err != nil {
		return statedir.AuditRecord{}, &Error{Op: "refusing to run the auditors", Err: err}
	}
	defer sb.Remove()
	before, err := HashTree(sb.Tree, "")
	if err != nil {
		return statedir.AuditRecord{}, &Error{Op: "cannot read the copy", Err: err}
	}
	gitBefore, err := HashGitControl(s.Dir)
	if err != nil {
		return statedir.AuditRecord{}, &Error{Op: "cannot read the tree", Err: err}
	}
	outs := runAuditors(sb, runDir, p, s)
	var violations []string
	if after, err := HashTree(sb.Tree, ""); err != nil {
		violations = []string{"cannot read the copy after the run: " + err.Error()}
	} else {
		violations = TreeChanges(before, after)
	}
	if after, err := HashGitControl(s.Dir); err != nil {
		violations = append(violations, "cannot read the tree's git control after the run: "+err.Error())
	} else {
		violations = append(violations, TreeChanges(gitBefore, after)...)
	}
	run := audit.Run{Dir: s.Dir, Agent: s.Agent, RanAt: ranAt.Format(time.RFC3339), Violations: violations,
		Sandbox: sb.Describe(), LeftOut: Brief(sb.LeftOut, 20)}
	sum := audit.Synthesize(p, outs, run)
	// The report leaves the machine: mask what it quotes of secrets.
	report := alert.Redact(sum.Markdown)
	reportPath := filepath.Join(base, "report-"+stamp+".md")
	if err := writePrivate(reportPath, []byte(report)); err != nil {
		return statedir.AuditRecord{}, &Error{Err: err}
	}
	rec := statedir.AuditRecord{
		RanAt: ranAt.Format(time.RFC3339), Dir: s.Dir, Agent: s.Agent,
		Dimensions: len(p.Dimensions), Findings: sum.Findings, Clean: sum.Clean,
		Rejected: len(sum.Rejected), Failed: len(sum.Failed), Violations: violations,
		Fallback: p.Fallback, Summary: sum.Summary, Report: reportPath,
	}
	if rec.Violations == nil {
		rec.Violations = []string{} // the board reads [], not null
	}
	if s.Deliver {
		if err := deliver(s, sum.Summary, reportPath); err != nil {
			rec.DeliveryError = err.Error()
		} else {
			rec.Delivered = true
		}
	}
	if err := statedir.Dir(base).WriteRecord(statedir.AuditFile, rec); err != nil {
		return rec, &Error{Err: err}
	}
	return rec, nil
}

// runAuditors runs one auditor per dimension, at most s.Parallel at once,
// each under its own wall clock, and checks what each reports. Each raw
// report is kept in runDir as ID.md, its standard error as ID.stderr.
func runAuditors(sb *Sandbox, runDir string, p audit.Plan, s Settings) []audit.Outcome {
	outs := make([]audit.Outcome, len(p.Dimensions))
	slots := make(chan struct{}, s.Parallel)
	var wg sync.WaitGroup
	for i, d := range p.Dimensions {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			outs[i] = runAuditor(sb, runDir, d, s)
		})
	}
	wg.Wait()
	return outs
}

func runAuditor(sb *Sandbox, runDir string, d audit.Dimension, s Settings) audit.Outcome {
	o := audit.Outcome{ID: d.ID}
	out := sb.Run(s.Bin, d.Brief, s.Timeout)
	writePrivate(filepath.Join(runDir, d.ID+".md"), out.Stdout)
	writePrivate(filepath.Join(runDir, d.ID+".stderr"), out.Stderr)
	report := string(out.Stdout)
	if out.Err != nil {
		o.Failed = fmt.Sprintf("%s auditor: %v after %v", s.Agent, out.Err, out.Elapsed.Round(time.Second))
		if strings.TrimSpace(report) == "" {
			return o
		}
	}
	if out.Cut {
		o.Failed = fmt.Sprintf("%s auditor: the report passed %d bytes and was cut", s.Agent, MaxReport)
	}
	// Citations are checked against the copy the auditor read, which
	// holds no link and nothing but regular files; ProjectFS refuses
	// anything else all the same.
	var kept audit.Report
	var rejected []audit.Rejection
	if pfs, err := OpenProject(sb.Tree); err != nil {
		o.Failed = fmt.Sprintf("%s auditor: cannot check the report: %v", s.Agent, err)
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

// writePrivate writes a file 0600, whole or not at all: a report quotes
// the project, and an auditor's raw output may quote anything it read.
func writePrivate(path string, b []byte) error { return atomicfile.Write(path, b, 0o600) }
