// Package scripts carries the poll loop and the alert funnel of omega-monitor
// inside the binary, so that a watcher always runs the loop that matches the
// binary that started it, and go install is all an install needs. It holds
// the scripts' text only; running them is the caller's business.
package scripts

import _ "embed"

// Loop is scripts/omega-monitor.sh, the poll loop.
//
//go:embed omega-monitor.sh
var Loop []byte

// AlertSend is scripts/omega-alert-send.sh, the alert funnel, which
// omega-monitor install puts in ~/.omega/bin.
//
//go:embed omega-alert-send.sh
var AlertSend []byte
