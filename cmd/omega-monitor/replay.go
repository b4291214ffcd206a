package main

import (
	"fmt"

	"golang.org/x/tools/txtar"

	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/poll"
)

// maxReplayFile caps a recorded session.
const maxReplayFile = 64 << 20

func runReplay(e *Env, args []string) int {
	fs := newFlagSet("replay")
	positional, code, ok := e.parse(fs, args, poll.ReplayUsage)
	if !ok {
		return code
	}
	if len(positional) != 1 {
		return e.usageError("replay", fmt.Sprintf("one recorded session is needed, got %d", len(positional)))
	}
	// A recorded session is a few hundred kilobytes; a device or a file
	// far past that is not one.
	data, err := fsutil.ReadCapped(positional[0], maxReplayFile)
	if err != nil {
		return e.exitf(1, "omega-monitor replay: %v", err)
	}
	if err := poll.Replay(txtar.Parse(data), e.Stdout); err != nil {
		return e.exitf(1, "omega-monitor replay: %s: %v", positional[0], err)
	}
	return 0
}
