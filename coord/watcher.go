package coord

import (
	"encoding/hex"
	"strings"

	"github.com/omega-monitor/omega-monitor/internal/digest"
)

// WatcherPrefix starts the session name of every watcher.
const WatcherPrefix = "monitor-"

// fingerprintLen is how many hex digits of SHA-256 a fallback name keeps:
// 64 bits, so two coordinates share one only by a hash collision.
const fingerprintLen = 16

// WatcherName returns the name of the multiplexer session that watches t:
// "monitor-<session>" for a local session, "monitor-<host>-<session>" for a
// remote one, or "monitor-<fingerprint>" where the plain form could not be
// read back as exactly this target.
//
// Distinct targets never share a name, because the three forms cannot be
// mistaken for one another: a plain local name holds no '-' after the prefix
// and is not a fingerprint; a plain remote name splits at its first '-' into a
// host that holds no '-' and a session; a fallback name is exactly
// fingerprintLen lower-case hex digits. Every name is itself a safe session
// name (CheckSession). The price is that "my-agent" is watched by a
// fingerprint name; stop and list find it by target all the same.
//
// t must be valid (ParseTarget or the Check functions); WatcherName does not
// check it again.
func WatcherName(t Target) string {
	if plain, ok := plainName(t); ok {
		return plain
	}
	return WatcherPrefix + fingerprint(t)
}

func plainName(t Target) (string, bool) {
	var name string
	switch {
	case t.Local():
		if strings.Contains(t.Session, "-") || isFingerprint(t.Session) {
			return "", false
		}
		name = WatcherPrefix + t.Session
	default:
		if strings.ContainsAny(t.Host, "-.") {
			return "", false
		}
		name = WatcherPrefix + t.Host + "-" + t.Session
	}
	if len(name) > MaxNameLen {
		return "", false
	}
	return name, true
}

func fingerprint(t Target) string {
	sum := digest.Sum256([]byte(t.String()))
	return hex.EncodeToString(sum[:])[:fingerprintLen]
}

func isFingerprint(s string) bool {
	if len(s) != fingerprintLen {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// IsWatcher reports whether a session's name has the form of a watcher's.
func IsWatcher(session string) bool { return strings.HasPrefix(session, WatcherPrefix) }

// WatchedBy reads a watcher's plain name back into the target it watches.
// It reports false for a fingerprint name (which only a lookup can answer)
// and for anything WatcherName would not have produced.
func WatchedBy(watcher string) (Target, bool) {
	rest, ok := strings.CutPrefix(watcher, WatcherPrefix)
	if !ok {
		return Target{}, false
	}
	var t Target
	if host, session, remote := strings.Cut(rest, "-"); remote {
		t = Target{Host: host, Session: session}
		if CheckHost(host) != nil {
			return Target{}, false
		}
	} else {
		t = Target{Session: rest}
	}
	if CheckSession(t.Session) != nil {
		return Target{}, false
	}
	if plain, ok := plainName(t); !ok || plain != watcher {
		return Target{}, false
	}
	return t, true
}
