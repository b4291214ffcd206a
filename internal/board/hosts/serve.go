package hosts

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"
)

// ReadWatcherUsage is the usage of omega-monitor read-watcher.
const ReadWatcherUsage = `usage: omega-monitor read-watcher (--history DAYS | --explain | --logs N) <watcher | target>

Prints, as one JSON object, what another machine's board (its MCP server's
history, explain and logs tools) reads of a watcher of this machine: its
history events of the last DAYS days, its last verdict (state.json), or
its log's last N lines. It only reads: the board on the other machine runs
it over ssh, and checks and cleans all it prints. Exit 1 when there is no
such watcher, 2 on a usage error.

flags:
`

// ReadFlags are the flags of read-watcher, which the command binds
// (FlagSet) and reads as one query (Query).
type ReadFlags struct {
	Days    int
	Explain bool
	Lines   int
}

// FlagSet is read-watcher's flag set, bound to f.
func (f *ReadFlags) FlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("read-watcher", flag.ContinueOnError)
	fs.IntVar(&f.Days, "history", 0, "the history events of the last `DAYS` days, 1 to 30")
	fs.BoolVar(&f.Explain, "explain", false, "the watcher's last verdict and why")
	fs.IntVar(&f.Lines, "logs", 0, "the log's last `N` lines, 1 to 2000")
	return fs
}

// Query is the one query f asks of the one watcher positional names, or
// why the command line is wrong.
func (f *ReadFlags) Query(positional []string) (Query, error) {
	var q Query
	kinds := 0
	if f.Days != 0 {
		q, kinds = Query{Kind: History, Days: f.Days}, kinds+1
	}
	if f.Explain {
		q, kinds = Query{Kind: Explain}, kinds+1
	}
	if f.Lines != 0 {
		q, kinds = Query{Kind: Logs, Lines: f.Lines}, kinds+1
	}
	switch {
	case kinds != 1:
		return q, errors.New("give one of --history DAYS, --explain, --logs N")
	case len(positional) != 1:
		return q, fmt.Errorf("takes one watcher, got %d", len(positional))
	}
	return q, q.check()
}

// ServeWatcher is what omega-monitor read-watcher prints: the records q
// asks of the watcher (its name or target) under the state home, as of
// now, as JSON on w (Records). Its error is Local's when there is no such
// watcher.
func ServeWatcher(w io.Writer, home, watcher string, q Query, now time.Time) error {
	r, err := Local(home, watcher, q, now)
	if err != nil {
		return err
	}
	// The newest events that fit: an answer past its bound is not read.
	r.History, r.LeftOut = newestWithin(r.History, historyRoom)
	return json.NewEncoder(w).Encode(r)
}
