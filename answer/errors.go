package answer

import (
	"fmt"

	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
)

// errorf is this package's error: its message begins "answer: ", which a
// caller takes off as a value (pkgerr.Why), never by cutting the string.
func errorf(format string, a ...any) error {
	return &pkgerr.Error{Pkg: "answer", Err: fmt.Errorf(format, a...)}
}
