package probe

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseCount checks ParseCount against a slow oracle built from
// math/big, and Read against ParseCount. The kept corpus is in
// testdata/fuzz/FuzzParseCount.
func FuzzParseCount(f *testing.F) {
	for _, s := range []string{"7", "0", "00", "-0", "+3", " 12\n", "1e3", "0x10", "12 13", "٣", "9223372036854775808", "", "abc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		n, ok := ParseCount(raw)
		if n2, ok2 := ParseCount(raw); n2 != n || ok2 != ok {
			t.Fatalf("ParseCount(%q) = %d, %v, then %d, %v", raw, n, ok, n2, ok2)
		}

		trimmed := strings.Trim(raw, " \t\r\n")
		digits := trimmed != "" && strings.Trim(trimmed, "0123456789") == ""
		wantOK := false
		if digits {
			v, _ := new(big.Int).SetString(trimmed, 10)
			wantOK = v.IsInt64()
		}
		if ok != wantOK {
			t.Fatalf("ParseCount(%q) ok = %v; want %v", raw, ok, wantOK)
		}
		if !ok {
			if n != 0 {
				t.Fatalf("ParseCount(%q) = %d, false; want 0 with false", raw, n)
			}
		} else {
			canonical := strings.TrimLeft(trimmed, "0")
			if canonical == "" {
				canonical = "0"
			}
			if got := strconv.FormatInt(n, 10); n < 0 || got != canonical {
				t.Fatalf("ParseCount(%q) = %d; want %s", raw, n, canonical)
			}
		}

		r := Read(raw, true)
		if r.Known != ok || r.N != n || r.Raw != raw {
			t.Fatalf("Read(%q, true) = %#v; want N %d, Known %v", raw, r, n, ok)
		}
		if remains := !(ok && n == 0); r.WorkRemains() != remains {
			t.Fatalf("Read(%q, true).WorkRemains() = %v; want %v", raw, r.WorkRemains(), remains)
		}
		want := "?"
		if ok {
			want = strconv.FormatInt(n, 10)
		}
		if r.String() != want {
			t.Fatalf("Read(%q, true).String() = %q; want %q", raw, r.String(), want)
		}
		if r := Read(raw, false); r.Known || !r.WorkRemains() {
			t.Fatalf("Read(%q, false) = %#v; want unknown", raw, r)
		}
	})
}

// FuzzBudget drives a Budget with a random sequence of readings and nudges.
// Each byte of ops is one step: the top two bits choose a nudge (0), an
// unknown reading (1) or a known one (2, 3), and the low six bits give the
// figure, or for a nudge whether the caller checks CanNudge first. The kept
// corpus is in testdata/fuzz/FuzzBudget.
func FuzzBudget(f *testing.F) {
	f.Add(uint8(5), []byte{0x80 | 41, 0, 0, 0x80 | 42, 0, 0x80 | 40, 0x40, 0x80 | 41, 0x80 | 43})
	f.Add(uint8(0), []byte{1, 1, 0xc0, 0})
	f.Add(uint8(2), []byte{1, 1, 1, 1, 0x40, 0x80, 0x81, 0x80})
	f.Fuzz(func(t *testing.T, limit uint8, ops []byte) {
		b := NewBudget(int(limit % 16))
		for i, op := range ops {
			prev := b
			val := int64(op & 0x3f)
			switch op >> 6 {
			case 0:
				checked := val%2 == 0
				if checked && !b.CanNudge() {
					continue
				}
				b = b.Spend()
				want := prev
				if prev.CanNudge() {
					want.Used++
				}
				if b != want {
					t.Fatalf("step %d: %#v.Spend() = %#v; want %#v", i, prev, b, want)
				}
			case 1:
				var c Change
				b, c = b.Observe(Read("x", true))
				if b != prev || c.Kind != Unknown || c.String() != "" {
					t.Fatalf("step %d: unknown reading changed %#v into %#v, %#v", i, prev, b, c)
				}
			default:
				var c Change
				b, c = b.Observe(Count(val))
				var want ChangeKind
				switch {
				case !prev.Seen:
					want = Baseline
				case val > prev.High:
					want = Advanced
				case val < prev.Last:
					want = Regressed
				default:
					want = Unchanged
				}
				if c.Kind != want {
					t.Fatalf("step %d: %#v observing %d: change %v; want %v", i, prev, val, c.Kind, want)
				}
				high := val
				if prev.Seen {
					high = max(val, prev.High)
				}
				if !b.Seen || b.Last != val || b.High != high {
					t.Fatalf("step %d: %#v observing %d gave %#v", i, prev, val, b)
				}
				if want == Advanced {
					if b.Used != 0 || c.Forgiven != prev.Used || c.From != prev.High || c.To != val {
						t.Fatalf("step %d: advance from %#v to %d gave %#v, %#v", i, prev, val, b, c)
					}
				} else if b.Used != prev.Used {
					t.Fatalf("step %d: %v reading %d changed Used: %#v to %#v", i, c.Kind, val, prev, b)
				}
				if (c.String() != "") != (want == Advanced || want == Regressed) {
					t.Fatalf("step %d: %v change says %q", i, c.Kind, c.String())
				}
			}
			if b.Used < 0 || b.Used > b.Limit || b.Limit != int(limit%16) {
				t.Fatalf("step %d: budget %#v out of bounds", i, b)
			}
			if b.Exhausted() == b.CanNudge() || b.Exhausted() != (b.Used == b.Limit) {
				t.Fatalf("step %d: budget %#v: Exhausted %v, CanNudge %v", i, b, b.Exhausted(), b.CanNudge())
			}
			if prev.Seen && (b.High < prev.High || !b.Seen) || b.Seen && b.Last > b.High {
				t.Fatalf("step %d: high-water mark went from %#v to %#v", i, prev, b)
			}
		}
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		var back Budget
		if err := json.Unmarshal(data, &back); err != nil || back != b {
			t.Fatalf("%#v → %s → %#v, %v", b, data, back, err)
		}
	})
}
