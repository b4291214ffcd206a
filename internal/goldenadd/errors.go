package goldenadd

import (
	"fmt"

	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
)

// errorf is this package's error: its message begins "goldenadd: ", which a
// caller takes off as a value (pkgerr.Why), never by cutting the string.
func errorf(format string, a ...any) error {
	return &pkgerr.Error{Pkg: "goldenadd", Err: fmt.Errorf(format, a...)}
}
