package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/statedir"
)

const listUsage = `usage: omega-monitor list [--json] [--ssh-config PATH] [--timeout DUR] [--mux PATH]

Lists what is watchable, everywhere: the local sessions and the sessions of
every concrete alias in the ssh config, each host probed in parallel under
its own wall clock. Marks the watchers (monitor-*) and the sessions a watcher
watches. A host that cannot be reached is one line saying so.

flags:
`

// listTimeout is the default wall clock of each host's probe: list is asked
// for by a person waiting at a prompt.
const listTimeout = 5 * time.Second

// A watchableListing is what list prints; --json prints it as it is.
type watchableListing struct {
	SSHConfig string        `json:"ssh_config"`
	Hosts     []hostListing `json:"hosts"`
}

type hostListing struct {
	Host      string           `json:"host"` // empty for this machine
	Reachable bool             `json:"reachable"`
	Error     string           `json:"error,omitempty"`
	Sessions  []sessionListing `json:"sessions"`
}

type sessionListing struct {
	Session   string `json:"session"`
	Target    string `json:"target,omitempty"` // empty when it cannot be watched
	Unsafe    string `json:"unsafe,omitempty"` // why it cannot be watched
	Watcher   bool   `json:"watcher"`
	Watches   string `json:"watches,omitempty"`    // for a local watcher: its target, when known
	WatchedBy string `json:"watched_by,omitempty"` // the watcher session watching it
}

func runList(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON document")
	sshConfig := fs.String("ssh-config", "", "ssh config `path` (default ~/.ssh/config)")
	timeout := fs.Duration("timeout", listTimeout, "wall clock of each host's probe")
	muxFlag := fs.String("mux", "", "multiplexer binary `path` (default $OMEGA_MONITOR_MUX, ~/.local/bin/rmux, tmux)")
	positional, code, ok := cmdline.ParseInterspersed(fs, args, listUsage, stdout, stderr)
	if !ok {
		return code
	}
	if len(positional) != 0 {
		fmt.Fprintf(stderr, "omega-monitor: list takes no arguments (to watch a session named %q: omega-monitor watch %s)\n", positional[0], positional[0])
		return 2
	}
	if *timeout <= 0 {
		fmt.Fprintf(stderr, "omega-monitor: --timeout must be positive\n")
		return 2
	}
	cfg, err := coord.LoadSSHConfig(*sshConfig)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 1
	}
	bin, muxErr := coord.MuxBinary(*muxFlag, os.Getenv)
	m := coord.Mux{Bin: bin, SSH: coord.SSH{Config: *sshConfig, Timeout: *timeout}}
	l := listWatchable(context.Background(), m, muxErr, cfg)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(l); err != nil {
			fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
			return 1
		}
		return 0
	}
	writeListing(stdout, l)
	return 0
}

// listWatchable probes this machine and every alias at once, each under its own wall
// clock, and marks watchers and watched sessions.
func listWatchable(ctx context.Context, m coord.Mux, muxErr error, cfg *coord.SSHConfig) watchableListing {
	l := watchableListing{SSHConfig: cfg.Path}
	hosts := append([]string{""}, cfg.Aliases()...)
	l.Hosts = make([]hostListing, len(hosts))
	var wg sync.WaitGroup
	for i, host := range hosts {
		h := &l.Hosts[i]
		h.Host = host
		h.Sessions = []sessionListing{}
		if host != "" {
			if err := coord.CheckHost(host); err != nil {
				h.Error = err.Error()
				continue
			}
		}
		if muxErr != nil && host == "" {
			h.Error = muxErr.Error()
			continue
		}
		wg.Go(func() {
			names, err := m.Sessions(ctx, host)
			if err != nil {
				h.Error = err.Error()
				var ce *coord.CallError
				h.Reachable = errors.As(err, &ce) && !ce.Unreachable()
				return
			}
			h.Reachable = true
			for _, name := range names {
				s := sessionListing{Session: name}
				t := coord.Target{Host: host, Session: name}
				if err := coord.CheckSession(name); err != nil {
					var unsafe *coord.UnsafeError
					if errors.As(err, &unsafe) {
						s.Unsafe = unsafe.Reason
					} else {
						s.Unsafe = err.Error()
					}
				} else {
					s.Target = t.String()
				}
				s.Watcher = coord.IsWatcher(name)
				h.Sessions = append(h.Sessions, s)
			}
		})
	}
	wg.Wait()
	markWatched(&l)
	return l
}

// markWatched joins the local watchers to the sessions they watch: by the
// name each target's watcher would have, then by a plain name read back, then
// by the target its state directory records.
func markWatched(l *watchableListing) {
	local := map[string]bool{}
	for _, s := range l.Hosts[0].Sessions {
		local[s.Session] = true
	}
	watches := map[string]string{}
	for i := range l.Hosts {
		for j := range l.Hosts[i].Sessions {
			s := &l.Hosts[i].Sessions[j]
			if s.Target == "" {
				continue
			}
			t, _ := coord.ParseTarget(s.Target)
			if name := coord.WatcherName(t); local[name] {
				s.WatchedBy = name
				watches[name] = s.Target
			}
		}
	}
	home, homeErr := statedir.Home()
	for j := range l.Hosts[0].Sessions {
		s := &l.Hosts[0].Sessions[j]
		if !s.Watcher {
			continue
		}
		if t, ok := watches[s.Session]; ok {
			s.Watches = t
		} else if t, ok := coord.WatchedBy(s.Session); ok {
			s.Watches = t.String()
		} else if homeErr == nil {
			if t, ok := readWatcherTarget(home, s.Session); ok {
				s.Watches = t.String()
			}
		}
	}
}

func writeListing(w io.Writer, l watchableListing) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tSESSION\tSTATUS")
	for _, h := range l.Hosts {
		host := h.Host
		if host == "" {
			host = "(local)"
		}
		switch {
		case h.Error != "" && !h.Reachable:
			fmt.Fprintf(tw, "%s\t-\tunreachable: %s\n", host, h.Error)
			continue
		case h.Error != "":
			fmt.Fprintf(tw, "%s\t-\terror: %s\n", host, h.Error)
			continue
		case len(h.Sessions) == 0:
			fmt.Fprintf(tw, "%s\t-\tno sessions\n", host)
			continue
		}
		for _, s := range h.Sessions {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", host, quotedIfUnsafe(s.Session), sessionStatus(h.Host, s))
		}
	}
	tw.Flush()
}

func sessionStatus(host string, s sessionListing) string {
	switch {
	case s.Watcher && host == "" && s.Watches != "":
		return "watcher of " + s.Watches
	case s.Watcher && host == "":
		return "watcher (target unknown)"
	case s.Watcher:
		return "watcher (on that host)"
	case s.Unsafe != "":
		return "cannot be watched: " + s.Unsafe
	case s.WatchedBy != "":
		return "watched by " + s.WatchedBy
	default:
		return "not watched"
	}
}

// quotedIfUnsafe shows a session name that holds control characters or spaces
// quoted, so the table stays one line a session.
func quotedIfUnsafe(name string) string {
	if coord.CheckSession(name) == nil {
		return name
	}
	return fmt.Sprintf("%q", name)
}
