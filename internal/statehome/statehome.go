// Package statehome says where the watchers' state directories live:
// $OMEGA_MONITOR_HOME, or ~/.omega/monitor. Both binaries, omega-monitor and
// the MCP server omega-monitor-mcp, find them through it, so that the two
// never disagree. It is not the directories' layout or their reading: the
// commands write them and the board reads them.
package statehome

import (
	"fmt"
	"os"
	"path/filepath"
)

// Dir is $OMEGA_MONITOR_HOME made absolute, or ~/.omega/monitor.
func Dir() (string, error) {
	if h := os.Getenv("OMEGA_MONITOR_HOME"); h != "" {
		return filepath.Abs(h)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("statehome: no state directory: set OMEGA_MONITOR_HOME (%w)", err)
	}
	return filepath.Join(home, ".omega", "monitor"), nil
}
