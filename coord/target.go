// Package coord says where a watched session is and how to reach it: targets
// (session or host:session), the safety check every coordinate passes before
// it reaches a shell or a multiplexer, the ssh config's aliases, the watcher's
// session name, the multiplexer binary, and the commands that run the
// multiplexer locally or over ssh under a wall clock.
//
// It is not the poll loop and holds no judgement about what a screen means.
// It never takes a host from a literal address: a host is an ssh config alias
// and ssh itself resolves it at run time; the config is read here only to list
// aliases and to explain what an alias resolves to.
package coord

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNameLen bounds a session name or a host alias. Real names are short; a
// long one is more likely an accident or an attack than a session.
const MaxNameLen = 128

// A Target is one watchable session: a local one, or one on the ssh host
// named by an alias.
type Target struct {
	Host    string // ssh config alias; empty for a local session
	Session string
}

// Local reports whether t is a session on this machine.
func (t Target) Local() bool { return t.Host == "" }

// String returns t in the form ParseTarget reads: "session" or "host:session".
func (t Target) String() string {
	if t.Local() {
		return t.Session
	}
	return t.Host + ":" + t.Session
}

// ParseTarget reads "session" or "host:session" and checks both parts with
// CheckSession and CheckHost, so that a Target it returns is safe to hand to
// ssh and to a multiplexer.
func ParseTarget(s string) (Target, error) {
	host, session, remote := strings.Cut(s, ":")
	if !remote {
		if err := CheckSession(s); err != nil {
			return Target{}, err
		}
		return Target{Session: s}, nil
	}
	if err := CheckHost(host); err != nil {
		return Target{}, err
	}
	if err := CheckSession(session); err != nil {
		return Target{}, err
	}
	return Target{Host: host, Session: session}, nil
}

// An UnsafeError says why a name cannot be used as a coordinate.
type UnsafeError struct {
	Kind   string // "session" or "host"
	Name   string
	Reason string
}

func (e *UnsafeError) Error() string { return "coord: " + e.Why() }

// Why is the error's message without the package's name, for a person.
func (e *UnsafeError) Why() string {
	return fmt.Sprintf("unsafe %s name %q: %s", e.Kind, e.Name, e.Reason)
}

// CheckSession reports why s cannot name a session safely, or nil if it can.
// A safe session name is 1 to MaxNameLen ASCII letters, digits, '_' and '-',
// not starting with '-'. That excludes everything a multiplexer rewrites
// ('.' and ':' become '_' in rmux and tmux, so a later exact lookup misses or
// hits another session) and everything a shell reads (quotes, '$', '`', ';',
// '#', whitespace), rather than trying to quote them correctly everywhere.
func CheckSession(s string) error {
	if r := unsafeReason(s, false); r != "" {
		return &UnsafeError{Kind: "session", Name: s, Reason: r}
	}
	return nil
}

// CheckHost reports why s cannot be used as an ssh alias, or nil if it can.
// A host alias may also hold '.', which ssh keeps as it is, but must not start
// with '-' or '.'.
func CheckHost(s string) error {
	if r := unsafeReason(s, true); r != "" {
		return &UnsafeError{Kind: "host", Name: s, Reason: r}
	}
	return nil
}

// unsafeReason returns why s is not a safe name, or "" when it is.
func unsafeReason(s string, host bool) string {
	switch {
	case s == "":
		return "it is empty (an empty multiplexer target silently means the most recent session)"
	case len(s) > MaxNameLen:
		return fmt.Sprintf("it is longer than %d bytes", MaxNameLen)
	case s[0] == '-':
		return "it starts with '-', which a command would read as a flag"
	case host && s[0] == '.':
		return "it starts with '.'"
	}
	if !utf8.ValidString(s) {
		return "it is not valid UTF-8"
	}
	for _, r := range s {
		if why := unsafeRune(r, host); why != "" {
			return why
		}
	}
	return ""
}

func unsafeRune(r rune, host bool) string {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '_', r == '-':
		return ""
	case r == '.' && host:
		return ""
	case r == '.' || r == ':':
		return fmt.Sprintf("it contains %q, which the multiplexer silently rewrites to '_'", r)
	case unicode.IsSpace(r):
		return fmt.Sprintf("it contains whitespace (%q), which splits a shell word", r)
	case unicode.IsControl(r):
		return fmt.Sprintf("it contains the control character %q", r)
	case r == '\'' || r == '"':
		return fmt.Sprintf("it contains the quote %q", r)
	case r == '$' || r == '`':
		return fmt.Sprintf("it contains %q, which a shell expands", r)
	case r == ';' || r == '&' || r == '|':
		return fmt.Sprintf("it contains %q, which ends a shell or multiplexer command", r)
	case r == '#':
		return "it contains '#', which starts a shell comment and a multiplexer format"
	case r >= utf8.RuneSelf:
		return fmt.Sprintf("it contains the non-ASCII character %q", r)
	}
	return fmt.Sprintf("it contains %q (allowed: letters, digits, '_' and '-'%s)", r, map[bool]string{true: ", '.'"}[host])
}

// Exact returns the multiplexer target that names session exactly, and
// nothing else: "=session:". A bare "-t name" matches any session whose name
// starts with name, and an empty one means the most recent session.
func Exact(session string) string { return "=" + session + ":" }
