package board

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// HourCounts count by Unix hour. In JSON they are one string of HOUR:N
// pairs, space-separated, hours in order ("492540:3 492541:1"): a tick
// writes its state indented, where a JSON object would take a line a pair,
// and the census decodes every watcher's.
type HourCounts map[int64]int

// MinuteCounts count the activity kinds (kindAdvance...kindUndelivered) by
// Unix minute. In JSON they are one string of MINUTE:A,N,E,F,D,U groups, as
// HourCounts; a group of the five counts written before undelivered alerts
// were counted reads that count as 0.
type MinuteCounts map[int64][kinds]int

var errCounts = errors.New("board: counts are not KEY:N pairs")

// MarshalText implements encoding.TextMarshaler.
func (c HourCounts) MarshalText() ([]byte, error) {
	var b []byte
	for _, k := range slices.Sorted(maps.Keys(c)) {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, k, 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(c[k]), 10)
	}
	return b, nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (c *HourCounts) UnmarshalText(text []byte) error {
	m := HourCounts{}
	for f := range strings.FieldsSeq(string(text)) {
		k, v, ok := strings.Cut(f, ":")
		key, err1 := strconv.ParseInt(k, 10, 64)
		n, err2 := strconv.Atoi(v)
		if !ok || err1 != nil || err2 != nil || n < 0 {
			return errCounts
		}
		m[key] += n
	}
	*c = m
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (c MinuteCounts) MarshalText() ([]byte, error) {
	var b []byte
	for _, k := range slices.Sorted(maps.Keys(c)) {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, k, 10)
		sep := byte(':')
		for _, n := range c[k] {
			b = append(b, sep)
			b = strconv.AppendInt(b, int64(n), 10)
			sep = ','
		}
	}
	return b, nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (c *MinuteCounts) UnmarshalText(text []byte) error {
	m := MinuteCounts{}
	for f := range strings.FieldsSeq(string(text)) {
		k, v, ok := strings.Cut(f, ":")
		key, err := strconv.ParseInt(k, 10, 64)
		if !ok || err != nil {
			return errCounts
		}
		var counts [kinds]int
		for i := range kinds {
			if v == "" && i == kinds-1 {
				break // a group written before kindUndelivered was counted
			}
			var s string
			s, v, _ = strings.Cut(v, ",")
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return errCounts
			}
			counts[i] = n
		}
		if v != "" {
			return errCounts
		}
		m[key] = counts
	}
	*c = m
	return nil
}
