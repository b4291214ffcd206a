package mirror

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
)

// maxLine bounds one tracked-task line; a task list line is short.
const maxLine = 1 << 20

// ReadTracked reads tracked tasks as JSON lines, one {"key","phase","stage"}
// object a line; blank lines are skipped. It fails on the first line that is
// not such an object, on a task without a key and on a key seen before,
// naming the line.
func ReadTracked(r io.Reader) ([]Tracked, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	var out []Tracked
	seen := make(map[string]int)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var t Tracked
		if err := dec.Decode(&t); err != nil {
			return nil, errorf("tracked line %d: %w", n, err)
		}
		if dec.More() {
			return nil, errorf("tracked line %d: more than one object", n)
		}
		if t.Key == "" {
			return nil, errorf("tracked line %d: no key", n)
		}
		if first, ok := seen[t.Key]; ok {
			return nil, errorf("tracked line %d: key %q already on line %d", n, t.Key, first)
		}
		seen[t.Key] = n
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, errorf("reading tracked tasks: %w", err)
	}
	return out, nil
}

// WritePlan writes a plan as JSON lines, one call a line.
func WritePlan(w io.Writer, plan []Call) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, c := range plan {
		if err := enc.Encode(c); err != nil {
			return errorf("%w", err)
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return errorf("writing the plan: %w", err)
	}
	return nil
}
