package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Some agents keep no status file of a pane but log each session's events
// as JSON lines, each with its type and its time: Copilot CLI
// ($COPILOT_HOME/session-state/<session>/events.jsonl) is one. What such a
// log says is data, an agent's description's "events" (package classify):
// where the log is, which fields hold an event's type, time and the
// session's working directory, and what each type says of the turn. The
// last event that says something says whether a turn is open, and whether
// it waits for a human; an event of a type the description does not name
// may mean anything, so what came before no longer holds.

// An EventsLog is where an agent logs its events and what each says: one
// agent's description's "events", checked (classify.ParseLocal).
type EventsLog struct {
	// Agent is the agent's name, for what a reading says; Key its word in
	// a witness's kind and a frame's mark (EventsKind).
	Agent, Key string
	// Home is the variable naming the agent's home, "" for none; Default
	// the home's path under the user's when the variable is not set; Path
	// the logs' under the home, with * for any one name of a folder or
	// file or part of one.
	Home, Default, Path string
	// Type, Time and Dir are the fields of a line that hold its event's
	// type, its time (RFC 3339) and, in a log's first line, the session's
	// working directory: names, a dot going into an object.
	Type, Time, Dir []string
	// Says is what each type of event says of the turn: busy, waiting,
	// idle, or "" for nothing either way (telemetry).
	Says map[string]string
}

// The statuses an event may say, as a status file says them.
const (
	StatusBusy    = "busy"
	StatusWaiting = "waiting"
	StatusIdle    = "idle"
)

// eventsKindPrefix starts the kind of a witness read from an events log.
const eventsKindPrefix = "events:"

// EventsKind is the kind of a witness read from the events log of the
// agent whose description's key is key: each agent's its own, so that one
// agent's log never speaks for another (a tick weighs a witness only for
// the agent whose kind it is).
func EventsKind(key string) string { return eventsKindPrefix + key }

// ParseEvents reads the last turn's state from an events log (or its tail;
// a first line cut in the middle is skipped): busy while a turn runs,
// waiting while the agent asks a human, idle after a turn's end. Updated is
// the time of the last event, so a session quiet for long reads as stale
// and the screen decides alone; an event stamped in the future is no word
// at all.
func (l EventsLog) ParseEvents(data []byte, now time.Time) (Witness, error) {
	w := Witness{Kind: EventsKind(l.Key)}
	what := l.Agent + " events log"
	var last time.Time
	read := false
	said := ""
	for line := range bytes.Lines(data) {
		var v map[string]any
		if json.Unmarshal(line, &v) != nil {
			continue
		}
		typ, _ := field(v, l.Type).(string)
		stamp, _ := field(v, l.Time).(string)
		t, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil || typ == "" {
			continue // not an event
		}
		read, last = true, t
		switch says, known := l.Says[typ]; {
		case says != "":
			w.Status, said = says, typ
		case !known:
			// An event the description does not name: its word on the
			// turn is unknown, and what came before may no longer hold.
			w.Status, said = "", typ
		}
	}
	switch {
	case !read:
		return Witness{}, fmt.Errorf("probe: agent status: not %s %s", article(l.Agent), what)
	case !fresh(last, now):
		return Witness{}, notFresh(what, last, now)
	case w.Status == "":
		if said != "" {
			return Witness{}, fmt.Errorf("probe: agent status: the %s ends in %q, which its description does not say opens or ends a turn", what, said)
		}
		return Witness{}, fmt.Errorf("probe: agent status: the %s ends in none that says whether a turn is open", what)
	}
	if w.Status == StatusWaiting {
		w.WaitingFor = said // the agent's own word for what it asks
	}
	w.Updated = last
	return w, nil
}

// DirOf returns the working directory the first line of an events log
// names; "" when it names none.
func (l EventsLog) DirOf(firstLine []byte) string {
	var v map[string]any
	if json.Unmarshal(firstLine, &v) != nil {
		return ""
	}
	dir, _ := field(v, l.Dir).(string)
	return dir
}

// field is the value at path in v, nil when there is none.
func field(v map[string]any, path []string) any {
	var at any = v
	for _, name := range path {
		m, ok := at.(map[string]any)
		if !ok {
			return nil
		}
		at = m[name]
	}
	return at
}

// article is "an" before a name that starts with a vowel, else "a".
func article(name string) string {
	if name != "" && strings.ContainsRune("AEIOUaeiou", rune(name[0])) {
		return "an"
	}
	return "a"
}
