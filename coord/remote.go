package coord

import (
	"fmt"
	"strings"
	"time"
)

// ShellQuote returns word as one single-quoted POSIX shell word. Nothing
// inside single quotes is special to a shell, so '$', '#', ';', spaces and
// newlines all arrive as they are; a single quote is closed, escaped and
// reopened.
func ShellQuote(word string) string {
	return "'" + strings.ReplaceAll(word, "'", `'\''`) + "'"
}

// ShellJoin quotes every word with ShellQuote and joins them with spaces.
func ShellJoin(words ...string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = ShellQuote(w)
	}
	return strings.Join(quoted, " ")
}

// remoteMux is the script the remote shell runs to find its own multiplexer
// by the local rule (OMEGA_MONITOR_MUX, else ~/.local/bin/rmux where it is
// executable, else tmux) and hand it the arguments, each one word. It travels
// single-quoted, so $HOME and the rest expand on the remote host, never here.
const remoteMux = `m=${OMEGA_MONITOR_MUX:-}; ` +
	`if [ -z "$m" ]; then if [ -x "$HOME/.local/bin/rmux" ]; then m=$HOME/.local/bin/rmux; else m=tmux; fi; fi; ` +
	`exec "$m" "$@"`

// RemoteCommand returns the command line to give ssh so that the remote
// multiplexer runs with exactly args. ssh joins its arguments with spaces and
// the remote login shell parses the result again, so every word is quoted for
// that shell: a '#S' format, a '$' or a ';' in args reaches the multiplexer
// untouched. The script runs under sh whatever the login shell is.
func RemoteCommand(args ...string) string {
	return "sh -c " + ShellQuote(remoteMux) + " omega-monitor " + ShellJoin(args...)
}

// SSH holds the options of every ssh call.
type SSH struct {
	// Config is passed as -F when set; otherwise ssh reads its own.
	Config string
	// Timeout is the wall clock of one call. The connect, keepalive and
	// the caller's own clock are derived from it.
	Timeout time.Duration
	// Control, when set, is a watcher's ControlMaster socket that each
	// call goes through where it is up (ControlMaster=no: a call never
	// becomes a master itself, and connects on its own where none is).
	Control string
}

// DefaultTimeout is the wall clock of one call when none is given.
const DefaultTimeout = 10 * time.Second

func (s SSH) timeout() time.Duration {
	if s.Timeout <= 0 {
		return DefaultTimeout
	}
	return s.Timeout
}

// noForwarding are the options that keep a connection from carrying
// anything of the operator's to the host.
var noForwarding = []string{
	"-a", "-x",
	"-o", "ForwardAgent=no",
	"-o", "ForwardX11=no",
	"-o", "ForwardX11Trusted=no",
	"-o", "ClearAllForwardings=yes",
	"-o", "Tunnel=no",
	"-o", "PermitLocalCommand=no",
}

// Args returns ssh's arguments to run remoteCommand on the host alias.
// BatchMode keeps ssh from asking for anything; ConnectTimeout bounds the
// connect only, so ServerAlive ends a host that connects and then stalls; the
// caller's wall clock is still the real bound. "--" ends the options, so an
// alias could never be read as one (and CheckHost refuses a leading '-').
//
// The watcher's connection lives as long as the watcher, to a host that may
// be compromised, so nothing of the operator's goes along whatever the
// user's config says: no agent or X11 forwarding, no port forwarding or
// tunnel, no LocalCommand. (ssh takes the first value it reads of an
// option, and the command line comes before every config file.)
func (s SSH) Args(alias, remoteCommand string) []string {
	secs := int(s.timeout() / time.Second)
	connect := max(1, secs/2)
	alive := max(1, secs/4)
	args := []string{
		"-n",
		"-o", "BatchMode=yes",
		"-o", fmt.Sprintf("ConnectTimeout=%d", connect),
		"-o", fmt.Sprintf("ServerAliveInterval=%d", alive),
		"-o", "ServerAliveCountMax=2",
	}
	args = append(args, noForwarding...)
	if s.Config != "" {
		args = append(args, "-F", s.Config)
	}
	if s.Control != "" {
		args = append(args, "-o", "ControlMaster=no", "-o", "ControlPath="+s.Control)
	}
	return append(args, "--", alias, remoteCommand)
}
