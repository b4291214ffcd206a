//go:build unix

package judge

import "syscall"

// reap waits for the children that have ended: a call may start one it
// does not wait for (tick's on-change command), which init would reap once
// the call's process exited; a judge that lives on reaps it itself. No call
// is under way then, so no child's status is taken from a waiting call.
func reap() {
	for {
		pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
