package hosts

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
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

// ServeWatcher is omega-monitor read-watcher: it prints the records a
// query of args asks of a watcher under the state home getenv names, as
// of now, as JSON on stdout (Records), and returns the exit status.
func ServeWatcher(args []string, getenv func(string) string, now time.Time, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("read-watcher", flag.ContinueOnError)
	days := fs.Int("history", 0, "the history events of the last `DAYS` days, 1 to 30")
	explain := fs.Bool("explain", false, "the watcher's last verdict and why")
	lines := fs.Int("logs", 0, "the log's last `N` lines, 1 to 2000")
	positional, code, ok := cmdline.ParseInterspersed(fs, args, ReadWatcherUsage, stdout, stderr)
	if !ok {
		return code
	}
	var q Query
	kinds := 0
	if *days != 0 {
		q, kinds = Query{Kind: History, Days: *days}, kinds+1
	}
	if *explain {
		q, kinds = Query{Kind: Explain}, kinds+1
	}
	if *lines != 0 {
		q, kinds = Query{Kind: Logs, Lines: *lines}, kinds+1
	}
	usage := func(why string) int {
		fmt.Fprintf(stderr, "omega-monitor: read-watcher: %s; %s\n", why, cmdline.HelpHint("read-watcher"))
		return 2
	}
	switch {
	case kinds != 1:
		return usage("give one of --history DAYS, --explain, --logs N")
	case len(positional) != 1:
		return usage(fmt.Sprintf("takes one watcher, got %d", len(positional)))
	}
	if err := q.check(); err != nil {
		return usage(err.Error())
	}
	home, err := statedir.Home(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: read-watcher: %v\n", err)
		return 1
	}
	r, err := Local(home, positional[0], q, now)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: read-watcher: %s\n", pkgerr.Why(err))
		return 1
	}
	// The newest events that fit: an answer past its bound is not read.
	r.History, r.LeftOut = newestWithin(r.History, historyRoom)
	if err := json.NewEncoder(stdout).Encode(r); err != nil {
		fmt.Fprintf(stderr, "omega-monitor: read-watcher: %v\n", err)
		return 1
	}
	return 0
}
