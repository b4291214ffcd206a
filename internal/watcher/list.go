package watcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// A Listing is what is watchable, everywhere: this machine and every ssh
// alias, their sessions, and which are watchers or watched. list prints
// it; --json prints it as it is.
type Listing struct {
	// NotProbed counts the aliases of the ssh config that were not
	// reached: not opted into (list --all-hosts, or the hosts file).
	NotProbed int           `json:"not_probed"`
	SSHConfig string        `json:"ssh_config"`
	Hosts     []HostListing `json:"hosts"`
}

type HostListing struct {
	Host      string           `json:"host"` // empty for this machine
	Reachable bool             `json:"reachable"`
	Error     string           `json:"error,omitempty"`
	Sessions  []SessionListing `json:"sessions"`
}

type SessionListing struct {
	Session   string `json:"session"`
	Target    string `json:"target,omitempty"` // empty when it cannot be watched
	Unsafe    string `json:"unsafe,omitempty"` // why it cannot be watched
	Watcher   bool   `json:"watcher"`
	Watches   string `json:"watches,omitempty"`    // for a local watcher: its target, when known
	WatchedBy string `json:"watched_by,omitempty"` // the watcher session watching it
}

// List probes this machine and every alias at once, each under its own wall
// clock, and marks watchers and watched sessions.
//
// Only the aliases the operator opted into are reached (all, or those named
// in the hosts file of home, the state home, or already watched): a
// connection to a host runs its ssh config's commands (ProxyCommand) and
// reaches a machine that may be compromised, so list never connects to one
// by itself. The others are counted in NotProbed.
func List(ctx context.Context, m coord.Mux, muxErr error, cfg *coord.SSHConfig, all bool, home string) Listing {
	l := Listing{SSHConfig: cfg.Path}
	hosts := []string{""}
	optedIn := OptedIn(home)
	for _, a := range cfg.Aliases() {
		if all || optedIn[a] {
			hosts = append(hosts, a)
		} else {
			l.NotProbed++
		}
	}
	l.Hosts = make([]HostListing, len(hosts))
	var wg sync.WaitGroup
	for i, host := range hosts {
		h := &l.Hosts[i]
		h.Host = host
		h.Sessions = []SessionListing{}
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
				s := SessionListing{Session: name}
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
	markWatched(&l, home)
	return l
}

// markWatched joins the local watchers to the sessions they watch: by the
// name each target's watcher would have, then by a plain name read back, then
// by the target its state directory records.
func markWatched(l *Listing, home string) {
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
	for j := range l.Hosts[0].Sessions {
		s := &l.Hosts[0].Sessions[j]
		if !s.Watcher {
			continue
		}
		if t, ok := watches[s.Session]; ok {
			s.Watches = t
		} else if t, ok := coord.WatchedBy(s.Session); ok {
			s.Watches = t.String()
		} else if home != "" {
			if t, ok := ReadTarget(home, s.Session); ok {
				s.Watches = t.String()
			}
		}
	}
}

// Write prints the listing as a table: host, session, status.
func (l Listing) Write(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tSESSION\tSTATUS")
	for _, h := range l.Hosts {
		host := h.Host
		if host == "" {
			host = "(local)"
		}
		switch {
		case h.Error != "" && !h.Reachable:
			fmt.Fprintf(tw, "%s\t-\tunreachable: %s\n", host, printable.String(h.Error))
			continue
		case h.Error != "":
			fmt.Fprintf(tw, "%s\t-\terror: %s\n", host, printable.String(h.Error))
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
	if l.NotProbed > 0 {
		fmt.Fprintf(w, "(%d more ssh aliases not probed: omega-monitor list --all-hosts, or name them in %s, one a line)\n", l.NotProbed, "$OMEGA_MONITOR_HOME/"+statedir.Hosts)
	}
}

// OptedIn returns the aliases list may reach without --all-hosts: those
// named in the state home's hosts file (one a line; # starts a comment),
// and the hosts of the watchers under home.
func OptedIn(home string) map[string]bool {
	in := map[string]bool{}
	if home == "" {
		return in
	}
	if b, err := fsutil.ReadCapped(filepath.Join(home, statedir.Hosts), 64<<10); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			line, _, _ = strings.Cut(line, "#")
			if line = strings.TrimSpace(line); line != "" {
				in[line] = true
			}
		}
	}
	entries, _ := os.ReadDir(home)
	for _, e := range entries {
		if t, ok := ReadTarget(home, e.Name()); ok && !t.Local() {
			in[t.Host] = true
		}
	}
	return in
}

func sessionStatus(host string, s SessionListing) string {
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
