// Package notify delivers escalations to the operator's channels other
// than the Telegram funnel (ntfy, Slack, Discord, Matrix, Pushover, e-mail,
// webhooks...), listed one URL a line in the channels file of the state
// home, in the URL syntax of github.com/nicholas-fedor/shoutrrr.
//
// It links that library and so net/http and TLS: only the companion
// omega-monitor-notify imports it, which a poll runs only when an alert
// waits and the channels file exists.
package notify

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/nicholas-fedor/shoutrrr/pkg/format"
	"github.com/nicholas-fedor/shoutrrr/pkg/router"
	"github.com/nicholas-fedor/shoutrrr/pkg/types"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// FileName is the channels file in the state home.
const FileName = "channels"

// Path is the channels file of the state home home.
func Path(home string) string { return filepath.Join(home, FileName) }

// maxFile bounds what is read of a channels file.
const maxFile = 256 << 10

// A Channel is one line of the channels file.
type Channel struct {
	Line   int    // its line number, from 1
	URL    string // the URL as written: it holds the channel's secrets
	Scheme string // the service, as shoutrrr names it (ntfy, slack, generic...)
	host   string
}

// ID names the channel in the outbox's records of who has an alert: a
// digest of its URL, so that a record names no secret, and an edited line is
// a new channel.
func (c Channel) ID() string {
	sum := sha256.Sum256([]byte(c.URL))
	return hex.EncodeToString(sum[:8])
}

// Name is how the channel is named to a human, in a log or on a screen: its
// line, its service and, when it is a host name or an address, its host.
// Nothing else of the URL, where the secrets are (a token in the user, the
// path, the query, or as the host itself: slack://tokenA/tokenB/tokenC).
func (c Channel) Name() string {
	if c.host != "" && hostIsName(c.host) {
		return fmt.Sprintf("channel line %d (%s, %s)", c.Line, c.Scheme, c.host)
	}
	return fmt.Sprintf("channel line %d (%s)", c.Line, c.Scheme)
}

// hostIsName says whether a URL's host is a machine's name or address, not a
// token in the host's place: it has a dot or a colon (a port, an IPv6
// address), or is localhost.
func hostIsName(h string) bool {
	hostname := h
	if hn, _, err := net.SplitHostPort(h); err == nil {
		hostname = hn
	}
	return hostname == "localhost" || net.ParseIP(hostname) != nil || strings.Contains(hostname, ".")
}

// Scrub is what may be said of s, an error a service returned, which may
// quote the request back (its URL, its headers, its body): one line of at
// most maxSaid bytes, with no escape sequence or invisible character, every
// part of the channel's URL that may be a secret masked in each form a
// server may write it (scrub.go), then redacted as an alert is. A server's
// line breaks would start records of their own in the logs it reaches.
func (c Channel) Scrub(s string) string {
	s = statedir.OneLine(printable.String(s))
	s = mask(s, c.secretForms())
	return alert.Scrub(printable.Cut(s, maxSaid))
}

// Style is how the channel's service reads text.
func (c Channel) Style() alert.TextStyle {
	switch c.Scheme {
	case "discord", "slack", "mattermost", "rocketchat", "zulip", "googlechat", "hangouts":
		return alert.Markdown
	}
	return alert.Plain
}

// A LineError is a line of the channels file that names no channel it can
// use; the others still deliver.
type LineError struct {
	File string
	Line int
	Err  string // scrubbed: it names no secret of the line
	text string // the line, to know it again (never shown)
}

func (e LineError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Err) }

// ErrRefused is a channels file that is not the user's own, mode 0600.
var ErrRefused = errors.New("notify: channels file refused")

// Read reads the channels file at path: the user's own regular file (a
// symbolic link is followed and the file it names checked), read and
// written by no one else; its channels, and its lines that are none.
func Read(path string) ([]Channel, []LineError, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("notify: %w", err)
	}
	switch {
	case !fi.Mode().IsRegular():
		return nil, nil, fmt.Errorf("%w: %s is not a regular file", ErrRefused, path)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, nil, fmt.Errorf("%w: %s has mode %v, and holds secrets: chmod 600 %s", ErrRefused, path, fi.Mode().Perm(), path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return nil, nil, fmt.Errorf("%w: %s belongs to uid %d, not to you (uid %d)", ErrRefused, path, st.Uid, os.Geteuid())
	}
	b, err := fsutil.ReadCapped(path, maxFile)
	if err != nil {
		return nil, nil, fmt.Errorf("notify: %w", err)
	}
	chans, bad := Parse(b, path)
	return chans, bad, nil
}

// Parse reads a channels file's text: one URL a line; blank lines and
// lines that start with # are none. Each URL is checked by the service it
// names, as it would be to send; a line that fails is a LineError, which
// quotes nothing of the line.
func Parse(b []byte, file string) ([]Channel, []LineError) {
	var chans []Channel
	var bad []LineError
	seen := map[string]int{}
	for i, line := range bytes.Split(b, []byte("\n")) {
		n := i + 1
		s := strings.TrimSpace(string(line))
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		c := Channel{Line: n, URL: s}
		if err := validate(&c); err != nil {
			bad = append(bad, LineError{File: file, Line: n, Err: c.Scrub(err.Error()), text: s})
			continue
		}
		if first, dup := seen[s]; dup {
			bad = append(bad, LineError{File: file, Line: n, Err: fmt.Sprintf("the same channel as line %d; it is sent to once", first), text: s})
			continue
		}
		seen[s] = n
		chans = append(chans, c)
	}
	return chans, bad
}

// shoutrrr is the library's router, used for its table of services only.
var shoutrrr = &router.ServiceRouter{}

// loginAtStart are the services whose setup reaches the network: Matrix
// logs in as it is made. A line of theirs is read by its configuration
// alone, so that reading the channels file sends no credential anywhere,
// and a server that is down is not taken for a bad line.
var loginAtStart = map[string]bool{"matrix": true}

// validate checks the channel's URL as its service reads it, without
// reaching the network, and fills in the channel's scheme and host.
func validate(c *Channel) error {
	svc, conf, err := serviceOf(c)
	if err != nil {
		return err
	}
	if !loginAtStart[c.Scheme] {
		err = svc.Initialize(conf, nil)
	} else {
		err = configOnly(svc, conf)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", c.Scheme, err)
	}
	return nil
}

// configOnly reads conf into a fresh configuration of the service's own
// type, which reaches nothing.
func configOnly(svc types.Service, conf *url.URL) (err error) {
	defer func() {
		if recover() != nil {
			err = nil // a service with no configuration to read: it is checked at its first send
		}
	}()
	return format.GetServiceConfig(svc).SetURL(conf)
}

// service makes the channel's service from its URL, as it is made to send,
// and fills in the channel's scheme and host. Its error says what is wrong
// with the line and may quote it: the caller scrubs it. For a service that
// logs in as it is made, an error may be the network's, not the line's.
func service(c *Channel) (types.Service, error) {
	svc, conf, err := serviceOf(c)
	if err != nil {
		return nil, err
	}
	if err := svc.Initialize(conf, nil); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Scheme, err)
	}
	return svc, nil
}

// serviceOf makes the channel's service, not set up, and the URL it is set
// up from.
func serviceOf(c *Channel) (types.Service, *url.URL, error) {
	u, err := url.Parse(c.URL)
	if err != nil {
		return nil, nil, fmt.Errorf("not a URL: %w", err)
	}
	if u.Scheme == "" || u.Opaque != "" && u.Host == "" && !strings.Contains(c.URL, "://") {
		return nil, nil, errors.New("not a channel URL: it takes the form SERVICE://..., as ntfy://, slack://, generic+https://")
	}
	base, _, _ := strings.Cut(strings.ToLower(u.Scheme), "+")
	c.Scheme, c.host = base, u.Host
	if base == "logger" {
		return nil, nil, errors.New("the logger service writes to this process's own log, which no one reads: name a channel that reaches you")
	}
	svc, err := shoutrrr.NewService(base)
	if err != nil {
		known := shoutrrr.ListServices()
		slices.Sort(known)
		known = slices.DeleteFunc(known, func(s string) bool { return s == "logger" })
		return nil, nil, fmt.Errorf("no service %q; known: %s", base, strings.Join(known, ", "))
	}
	conf := u
	if strings.ToLower(u.Scheme) != base {
		custom, ok := svc.(types.CustomURLService)
		if !ok {
			return nil, nil, fmt.Errorf("%s takes no custom URL (%s+...)", base, base)
		}
		if conf, err = custom.GetConfigURLFromCustom(u); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", base, err)
		}
	}
	return svc, conf, nil
}
