package classify

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/omega-monitor/omega-monitor/probe"
)

// LocalEvents are an agent's events log as data, for an agent that logs
// each session's events as JSON lines, each with its type and its time
// (Copilot CLI does): where the logs are, which fields say what, and what
// each type of event says of the turn. A description that gives them
// names "events" as its witness. The watcher finds the logs of a pane's
// working directory written in the last five minutes, on this machine or
// over ssh, and reads their ends as probe.EventsLog.ParseEvents says.
type LocalEvents struct {
	// Home names the variable that says where the agent's home is
	// (COPILOT_HOME), if it has one; Default is the home, under the
	// user's, when it is not set (.copilot).
	Home    string `json:"home,omitempty"`
	Default string `json:"default"`
	// Path is where the logs are under the home, folders and a file's
	// name, with * standing for any one name or part of one
	// (session-state/*/events.jsonl).
	Path string `json:"path"`
	// Type, Time and Dir are the fields of a line that hold its event's
	// type, its time (RFC 3339) and, in a log's first line, the session's
	// working directory: names, a dot going into an object
	// (data.context.cwd).
	Type string `json:"type"`
	Time string `json:"time"`
	Dir  string `json:"dir"`
	// Busy, Waiting and Idle are the types of events that say a turn is
	// open, that the agent waits for a human, that its turn has ended;
	// Quiet those that say nothing either way (telemetry). An event of a
	// type none of them names ends what the log says: the screen decides
	// alone until one that says something comes.
	Busy    []string `json:"busy,omitempty"`
	Waiting []string `json:"waiting,omitempty"`
	Idle    []string `json:"idle,omitempty"`
	Quiet   []string `json:"quiet,omitempty"`
}

// WitnessEvents is the witness a description names when it gives its
// agent's events log (LocalEvents).
const WitnessEvents = "events"

// Bounds on a description's events log, so that finding and reading it
// costs a poll little whatever the description says.
const (
	maxEventsPathNames = 6  // names in default or path
	maxFieldNames      = 4  // names in a field
	maxEventTypes      = 64 // types in all
)

// eventsLog checks a description's events log and makes it the log of the
// agent named name.
func eventsLog(name string, le LocalEvents) (probe.EventsLog, error) {
	fail := func(format string, args ...any) (probe.EventsLog, error) {
		return probe.EventsLog{}, fmt.Errorf("events: "+format, args...)
	}
	log := probe.EventsLog{Agent: name, Key: eventsKey(name), Home: le.Home, Default: le.Default, Path: le.Path, Says: map[string]string{}}
	if log.Key == "" {
		return fail("the agent's name %q has no letter or digit to name its logs by", name)
	}
	if le.Home != "" && !envName(le.Home) {
		return fail("home: %q is not a variable's name (letters, digits and _, not first a digit)", le.Home)
	}
	if err := checkEventsPath(le.Default, false); err != nil {
		return fail("default: %v", err)
	}
	if err := checkEventsPath(le.Path, true); err != nil {
		return fail("path: %v", err)
	}
	for _, f := range []struct {
		what, path string
		into       *[]string
	}{{"type", le.Type, &log.Type}, {"time", le.Time, &log.Time}, {"dir", le.Dir, &log.Dir}} {
		names := strings.Split(f.path, ".")
		if len(names) > maxFieldNames || slices.ContainsFunc(names, func(n string) bool { return !plainName(n, "_", true) }) {
			return fail("%s: %q is not a field (names of letters, digits and _, at most %d, a dot between two)", f.what, f.path, maxFieldNames)
		}
		*f.into = names
	}
	n := 0
	for _, list := range []struct {
		status string
		types  []string
	}{{probe.StatusBusy, le.Busy}, {probe.StatusWaiting, le.Waiting}, {probe.StatusIdle, le.Idle}, {"", le.Quiet}} {
		for _, typ := range list.types {
			if !plainName(typ, "_.-:/", true) {
				return fail("%q is not an event's type (letters, digits, _ . - : and /, at most 64)", typ)
			}
			if _, twice := log.Says[typ]; twice {
				return fail("%q is named twice: an event says one thing", typ)
			}
			log.Says[typ] = list.status
			n++
		}
	}
	switch {
	case n > maxEventTypes:
		return fail("%d types of events, more than %d", n, maxEventTypes)
	case len(le.Busy)+len(le.Waiting) == 0 || len(le.Idle) == 0:
		// A log that can only say busy would hold a nudge forever; one
		// that can only say idle adds nothing to the screen.
		return fail("busy or waiting, and idle: name the events that open a turn and those that end it")
	}
	return log, nil
}

// checkEventsPath checks a path under a home: relative names of letters,
// digits and . _ -, no . or .. name, and * in a name where glob allows it.
func checkEventsPath(p string, glob bool) error {
	names := strings.Split(p, "/")
	if p == "" || len(names) > maxEventsPathNames {
		return fmt.Errorf("%q: from 1 to %d names, a / between two", p, maxEventsPathNames)
	}
	extra := "._-"
	if glob {
		extra += "*"
	}
	for _, n := range names {
		if n == "." || n == ".." || strings.Contains(n, "**") || !pathName(n, extra) {
			return fmt.Errorf("%q: %q is not a name of a folder or file here (letters, digits and %s; not . or ..)", p, n, extra)
		}
	}
	return nil
}

// pathName says s is letters, digits and extra only.
func pathName(s, extra string) bool {
	return s != "" && len(s) <= 64 && !strings.ContainsFunc(s, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune(extra, r))
	})
}

// envName says s is a shell variable's name.
func envName(s string) bool {
	return pathName(s, "_") && !('0' <= s[0] && s[0] <= '9')
}

// eventsKey is the word an agent's events logs go by (probe.EventsKind,
// a frame's mark): its name in lower case, a dash for each run of other
// characters ("Copilot CLI" is copilot-cli).
func eventsKey(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	return b.String()
}

// errEventsWitness says events and the witness "events" go together.
var errEventsWitness = errors.New(`witness "events" and events go together: the events block says where the log is and what it says`)

// EventsLogs are the events logs of every agent the descriptions, built in
// or in local (nil for the built-in ones only), give: what a capture looks
// for on this machine or over ssh.
func EventsLogs(local *Local) []probe.EventsLog {
	var out []probe.EventsLog
	for _, a := range local.agents() {
		if a.events != nil {
			out = append(out, *a.events)
		}
	}
	return out
}
