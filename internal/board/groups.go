package board

import (
	"cmp"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/tick"
)

// A Group is one cause that stopped many panes at once (an account's
// usage limit, a host gone), whose panes share one page
// ($OMEGA_MONITOR_HOME/.groups/NAME/), while it has something to say: panes
// gathering for a page not made yet, or pages made and not yet
// delivered. A group whose pages all went is not on the board.
type Group struct {
	// Host is the ssh alias of the machine whose group it is, as the
	// board read it; empty for this machine's.
	Host string `json:"host,omitempty"`
	// Name is the group's directory name: its kind and a digest.
	Name string `json:"name"`
	// Kind is usage-limit or host; Agent, CauseHost, Limit and Reset the
	// cause as its first pane gave it (Limit and Reset quote a pane).
	Kind      string `json:"kind"`
	Agent     string `json:"agent,omitempty"`
	CauseHost string `json:"cause_host,omitempty"`
	Limit     string `json:"limit,omitempty"`
	Reset     string `json:"reset,omitempty"`
	// Panes counts the panes the group holds.
	Panes int `json:"panes"`
	// Gathering counts the panes no page named yet; DueAt is when the
	// page that names them is due (a member's poll makes it).
	Gathering int        `json:"gathering"`
	DueAt     *time.Time `json:"due_at"`
	// PagesPending counts the pages made and not yet delivered;
	// PagesMade all the pages made.
	PagesPending int `json:"pages_pending"`
	PagesMade    int `json:"pages_made"`
	// Error says what of the group could not be read; the rest is shown.
	Error string `json:"error,omitempty"`
}

// Bounds of what the groups of a state home may make a census read: the
// poll's own bounds (package poll).
const (
	maxGroups       = 256
	maxGroupMembers = 1000
	maxGroupPages   = 200
	maxGroupFile    = 64 << 10
)

// groupName matches a group directory's name, as package poll names it.
var groupName = regexp.MustCompile(`^[a-z-]{1,16}-[0-9a-f]{24}$`)

// readGroups reads the groups of the state home root that have something
// to say, in name order. Anything else under .groups (a file, a link, a
// name not a group's) is passed over; a group that cannot be read is its
// own line (Error), never the census's.
func readGroups(root string, now time.Time) []Group {
	dir := filepath.Join(root, statedir.Groups)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Group
	for _, e := range entries[:min(len(entries), maxGroups)] {
		if !e.IsDir() || !groupName.MatchString(e.Name()) {
			continue
		}
		if g, ok := readGroup(filepath.Join(dir, e.Name()), now); ok {
			out = append(out, g)
		}
	}
	return out
}

// The records of a group, read by their JSON field names as package poll
// writes them.
type (
	groupCause struct {
		Cause struct {
			Kind  string `json:"kind"`
			Agent string `json:"agent"`
			Host  string `json:"host"`
			Limit string `json:"limit"`
			Reset string `json:"reset"`
		} `json:"cause"`
	}
	groupMember struct {
		Watcher string        `json:"watcher"`
		Event   string        `json:"event"`
		At      time.Time     `json:"at"`
		Window  time.Duration `json:"window"`
	}
)

// readGroup reads one group; ok is false when it has nothing to say.
func readGroup(dir string, now time.Time) (Group, bool) {
	name := filepath.Base(dir)
	g := Group{Name: name, Kind: name[:len(name)-25]} // the kind before -DIGEST
	var cause groupCause
	if b, err := readRegular(filepath.Join(dir, statedir.GroupFile)); err != nil || json.Unmarshal(b, &cause) != nil {
		g.Error = "its cause (group.json) cannot be read"
	} else {
		c := cause.Cause
		clean := func(s string, n int) string {
			return printable.Cut(strings.Join(strings.Fields(printable.String(s)), " "), n)
		}
		g.Agent, g.CauseHost, g.Limit, g.Reset = clean(c.Agent, 40), clean(c.Host, 100), clean(c.Limit, 200), clean(c.Reset, 60)
		if c.Kind == g.Kind {
			g.Kind = c.Kind
		}
	}
	var entries []tick.GroupEntry
	panes := map[string]bool{}
	members, _ := os.ReadDir(filepath.Join(dir, statedir.GroupMembers))
	for _, e := range members[:min(len(members), maxGroupMembers)] {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		var m groupMember
		b, err := readRegular(filepath.Join(dir, statedir.GroupMembers, e.Name()))
		if err != nil || json.Unmarshal(b, &m) != nil || e.Name() != m.Watcher+"."+m.Event+".json" {
			continue
		}
		panes[m.Watcher] = true
		entries = append(entries, tick.GroupEntry{Watcher: m.Watcher, Event: alert.GroupEvent(m.Event), At: m.At, Window: m.Window})
	}
	g.Panes = len(panes)
	var made []tick.GroupPlan
	pages, _ := os.ReadDir(filepath.Join(dir, statedir.GroupPages))
	for _, e := range pages[:min(len(pages), maxGroupPages)] {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		var p tick.GroupPlan
		page := filepath.Join(dir, statedir.GroupPages, e.Name())
		if b, err := readRegular(filepath.Join(page, statedir.GroupPage)); err != nil || json.Unmarshal(b, &p) != nil {
			continue
		}
		made = append(made, p)
		if names, _ := statedir.Dir(page).PendingAlerts(); len(names) > 0 {
			g.PagesPending++
		}
	}
	g.PagesMade = len(made)
	// What no page named yet gathers for the next: due when its first
	// pane's window ends.
	for _, plan := range tick.DuePages(entries, made, now.Add(100*365*24*time.Hour)) {
		g.Gathering += len(plan.Watchers)
		for _, e := range entries {
			if e.Event != plan.Event || !slices.Contains(plan.Watchers, e.Watcher) {
				continue
			}
			due := e.At.Add(cmp.Or(e.Window, tick.MinGather))
			if g.DueAt == nil || due.Before(*g.DueAt) {
				g.DueAt = &due
			}
		}
	}
	return g, g.Gathering > 0 || g.PagesPending > 0 || g.Error != ""
}

// readRegular reads the regular file at path, up to the groups' bound: a
// link, a pipe or a device is not read.
func readRegular(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fs.ErrInvalid
	}
	return fsutil.ReadCapped(path, maxGroupFile)
}
