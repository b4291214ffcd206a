// Package scripts carries the poll loop of omega-monitor inside the binary, so
// that a watcher always runs the loop that matches the binary that started it.
// It holds the script's text only; running it is the caller's business.
package scripts

import _ "embed"

// Loop is scripts/omega-monitor.sh, the poll loop.
//
//go:embed omega-monitor.sh
var Loop []byte
