//go:build !unix

package probe

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

func run(ctx context.Context, command string, timeout time.Duration) (Output, error) {
	return Output{ExitCode: -1}, fmt.Errorf("probe: running a probe needs process groups, which %s does not have", runtime.GOOS)
}
