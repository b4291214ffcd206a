package audit

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr on first use: every command of the binary links
// this package, and most never audit, so none of them should pay for its
// patterns at start.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
