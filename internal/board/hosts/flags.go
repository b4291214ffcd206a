package hosts

import (
	"flag"
	"fmt"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
)

// Bounds of --hosts-timeout.
const (
	MinClock = time.Second
	MaxClock = time.Minute
)

// Flags are the flags of a board over other hosts, status's and the MCP
// server's alike: bound to a flag set by BindFlags, read by Open.
type Flags struct {
	// List is --hosts: aliases separated by commas, "" for the hosts file.
	List string
	// SSHConfig is --ssh-config, ssh's -F.
	SSHConfig string
	// Clock is --hosts-timeout: each host's read, connection included.
	Clock time.Duration
}

// BindFlags defines --hosts, --ssh-config and --hosts-timeout on fs.
func BindFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{Clock: Clock}
	fs.StringVar(&f.List, "hosts", "", "other machines' boards, by ssh `alias`es separated by commas (default: the state home's hosts file)")
	fs.StringVar(&f.SSHConfig, "ssh-config", "", "ssh's config `file` for the hosts (default: ssh's own)")
	fs.Var((*cmdline.Duration)(&f.Clock), "hosts-timeout", "how long each host's read may take, connection included, a `duration` from 1s to 60s")
	return f
}

// Open is Open of the state home root with the flags' hosts, ssh config
// and clock; a clock out of its bounds is an error, as a bad list is.
func (f *Flags) Open(root string, getenv func(string) string) (*Board, error) {
	if f.Clock < MinClock || f.Clock > MaxClock {
		return nil, pkgerr.New("hosts", fmt.Sprintf("--hosts-timeout must be 1s to 60s, got %v", f.Clock))
	}
	b, err := Open(root, f.List, f.SSHConfig, getenv)
	if b != nil {
		b.Reader.Clock = f.Clock
	}
	return b, err
}
