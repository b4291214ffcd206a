package backread

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestLines: whatever the lines' width, so that the reads end anywhere in a
// line and the buffer grows, the end returned is the file's end, holds more
// than the newlines asked for unless it is the whole file or its limit, and
// is no longer than that needs give or take one read.
func TestLines(t *testing.T) {
	for _, width := range []int{0, 1, 60, 1000, 40000} {
		for _, lines := range []int{0, 1, 7, 400, 2000} {
			data := []byte(strings.Repeat(strings.Repeat("x", width)+"\n", lines) + "half")
			for _, newlines := range []int{0, 1, 401, 5000} {
				for _, limit := range []int{10, 1 << 20, 64 << 20} {
					name := fmt.Sprintf("width %d, %d lines, newlines %d, limit %d", width, lines, newlines, limit)
					got, err := Lines(bytes.NewReader(data), int64(len(data)), newlines, limit)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if !bytes.HasSuffix(data, got) {
						t.Fatalf("%s: %d bytes that are not the file's end", name, len(got))
					}
					enough := bytes.Count(got, []byte{'\n'}) > newlines
					if !enough && len(got) != min(len(data), limit) {
						t.Errorf("%s: %d bytes with %d newlines: neither enough nor all", name, len(got), bytes.Count(got, []byte{'\n'}))
					}
					if enough && len(got) > limit {
						t.Errorf("%s: %d bytes, past the limit", name, len(got))
					}
					if enough && len(got) >= chunk {
						// One read less would not have held enough.
						if bytes.Count(got[chunk:], []byte{'\n'}) > newlines {
							t.Errorf("%s: %d bytes read, a read more than needed", name, len(got))
						}
					}
				}
			}
		}
	}
}

type failingReader struct{}

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, io.ErrUnexpectedEOF }

func TestLinesError(t *testing.T) {
	if _, err := Lines(failingReader{}, 100, 1, 1<<20); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a failing read: %v, want io.ErrUnexpectedEOF wrapped", err)
	}
}
