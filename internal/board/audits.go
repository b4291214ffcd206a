package board

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// auditsDir holds one directory per audit (omega-monitor audit run), each
// with the latest run's record in auditFile.
const (
	auditsDir = statedir.Audits
	auditFile = statedir.AuditFile
)

// An Audit is the latest run of one deep audit, as its last.json records it.
type Audit struct {
	// Name is the audit's directory name under audits/.
	Name       string     `json:"name"`
	RanAt      *time.Time `json:"ran_at"`
	Dir        string     `json:"dir"`
	Agent      string     `json:"agent"`
	Dimensions int        `json:"dimensions"`
	Findings   int        `json:"findings"`
	Clean      int        `json:"clean"`
	Rejected   int        `json:"rejected"`
	Failed     int        `json:"failed"`
	// Violations are the changes the run made to the tree it promised to
	// leave alone.
	Violations []string `json:"violations"`
	Summary    string   `json:"summary"`
	Report     string   `json:"report"`
	Delivered  bool     `json:"delivered"`
}

// readAudits reads every audit's last.json under root/audits, by name. A
// missing audits directory is no audit; an unreadable record is an Error.
func readAudits(root string) ([]Audit, []Error) {
	dir := filepath.Join(root, auditsDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []Error{{Path: dir, Error: err.Error()}}
	}
	var audits []Audit
	var errs []Error
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name(), auditFile)
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // the first run has not finished
		}
		var rec statedir.AuditRecord
		if err == nil {
			err = json.Unmarshal(b, &rec)
		}
		if err != nil {
			errs = append(errs, Error{Path: path, Error: err.Error()})
			continue
		}
		audits = append(audits, auditOf(e.Name(), rec))
	}
	sort.Slice(audits, func(i, j int) bool { return audits[i].Name < audits[j].Name })
	return audits, errs
}

// auditOf is the board's view of an audit's record.
func auditOf(name string, rec statedir.AuditRecord) Audit {
	a := Audit{
		Name: name, Dir: rec.Dir, Agent: rec.Agent, Dimensions: rec.Dimensions, Findings: rec.Findings,
		Clean: rec.Clean, Rejected: rec.Rejected, Failed: rec.Failed, Violations: rec.Violations,
		Summary: rec.Summary, Report: rec.Report, Delivered: rec.Delivered,
	}
	if t, err := time.Parse(time.RFC3339, rec.RanAt); err == nil {
		a.RanAt = &t
	}
	return a
}
