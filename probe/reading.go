package probe

import (
	"fmt"
	"strconv"
	"strings"
)

// space is what ParseCount trims from both ends of a probe's output.
const space = " \t\r\n"

// ParseCount reads raw as a count: after trimming spaces, tabs, carriage
// returns and newlines from both ends, it must be one or more ASCII digits
// and nothing else, with a value that fits in an int64.
//
// Leading zeros are accepted ("007" is 7, "00" is 0): zero-padded counters
// are common and the value is not in doubt. A sign is not accepted, neither
// '-' (a count is never negative, and "-0" is rejected with the rest) nor
// '+', which no counting tool prints and which suggests a delta rather than
// a count. Other digit scripts, exponents, hexadecimal, separators such as
// '_' or ',', and a second number are all rejected.
func ParseCount(raw string) (n int64, ok bool) {
	s := strings.Trim(raw, space)
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// A Reading is one probe's result for one tick: a known count, or unknown.
// The zero Reading is unknown, as is a probe that was not supplied.
type Reading struct {
	// Raw is the probe's output as given to Read.
	Raw string `json:"raw,omitempty"`
	// N is the count; it means nothing unless Known is set.
	N int64 `json:"n"`
	// Known reports whether the output was exactly one count.
	Known bool `json:"known"`
}

// Read makes the Reading of a probe's output. present is false when there
// was no probe, or when it failed (did not start, timed out, exited
// non-zero); the Reading is then unknown whatever raw holds.
func Read(raw string, present bool) Reading {
	r := Reading{Raw: raw}
	if present {
		r.N, r.Known = ParseCount(raw)
	}
	return r
}

// Count returns the Reading a probe printing n would give: known for n >= 0,
// unknown for a negative n.
func Count(n int64) Reading {
	return Read(strconv.FormatInt(n, 10), true)
}

// String returns the count in decimal, or "?" when it is unknown, as the
// MONITOR line prints it ("work=7", "work=?").
func (r Reading) String() string {
	if !r.Known {
		return "?"
	}
	return strconv.FormatInt(r.N, 10)
}

// WorkRemains reports what a work probe's Reading means: true for a count
// above zero (STALLED) and for an unknown reading (fail open), false only for
// a count of exactly zero (BLOCKED).
func (r Reading) WorkRemains() bool {
	return !r.Known || r.N != 0
}

// Unusable says why a probe that exited 0 gave no reading: what it printed
// (cut to 60 characters), and what it said on standard error (a missing
// file, a bad pattern), which is most often the reason.
func Unusable(out, said string) string {
	why := "printed nothing"
	if t := strings.TrimSpace(out); t != "" {
		if r := []rune(t); len(r) > 60 {
			t = string(r[:60]) + "…"
		}
		why = fmt.Sprintf("printed %q, not one whole number", t)
	}
	if said = strings.TrimSpace(said); said != "" {
		why += "; it said: " + said
	}
	return why
}
