package pkgerr

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// TestWhy: the reason is the message without the name of the package that
// said it, and only that name; wrapped errors stay found.
func TestWhy(t *testing.T) {
	inner := &Error{Pkg: "statedir", Err: fmt.Errorf("state.json: %w", fs.ErrNotExist)}
	outer := &Error{Pkg: "poll", Err: fmt.Errorf("load: %w", inner)}
	for _, c := range []struct {
		err      error
		msg, why string
	}{
		{New("answer", "no such option"), "answer: no such option", "no such option"},
		{inner, "statedir: state.json: file does not exist", "state.json: file does not exist"},
		{outer, "poll: load: statedir: state.json: file does not exist", "load: statedir: state.json: file does not exist"},
		{errors.New("answer: said by another"), "answer: said by another", "answer: said by another"},
	} {
		if c.err.Error() != c.msg || Why(c.err) != c.why {
			t.Errorf("%v: Why = %q, want %q", c.err, Why(c.err), c.why)
		}
	}
	if !errors.Is(outer, fs.ErrNotExist) {
		t.Error("a wrapped error is no longer found")
	}
}
