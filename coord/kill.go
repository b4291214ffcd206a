package coord

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// killTree kills the process group of root and every process group and
// process descended from root. Killing root's group alone is not enough: ssh
// runs a ProxyCommand in a process group of its own, and a proxy that hangs,
// with children of its own, outlives a SIGKILLed ssh for ever. The tree is
// read (ps, which Linux and macOS both have) while root still runs, before
// anything is killed, since an orphan's parent is no longer root.
func killTree(root int) error {
	own := syscall.Getpgrp()
	for _, p := range descendants(root) {
		if p.pgid > 1 && p.pgid != own && p.pgid != root {
			syscall.Kill(-p.pgid, syscall.SIGKILL)
		}
		syscall.Kill(p.pid, syscall.SIGKILL)
	}
	return syscall.Kill(-root, syscall.SIGKILL)
}

type proc struct{ pid, ppid, pgid int }

// descendants lists the processes below root, by their parents as ps
// shows them now. It is empty when ps cannot say.
func descendants(root int) []proc {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ps", "-A", "-o", "pid=", "-o", "ppid=", "-o", "pgid=").Output()
	if err != nil {
		return nil
	}
	children := make(map[int][]proc)
	for _, line := range bytes.Split(out, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) != 3 {
			continue
		}
		var p proc
		var errs [3]error
		p.pid, errs[0] = strconv.Atoi(string(f[0]))
		p.ppid, errs[1] = strconv.Atoi(string(f[1]))
		p.pgid, errs[2] = strconv.Atoi(string(f[2]))
		if errs[0] != nil || errs[1] != nil || errs[2] != nil {
			continue
		}
		children[p.ppid] = append(children[p.ppid], p)
	}
	var found []proc
	queue := []int{root}
	seen := map[int]bool{root: true}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if !seen[c.pid] {
				seen[c.pid] = true
				found = append(found, c)
				queue = append(queue, c.pid)
			}
		}
	}
	return found
}

// killSession kills every process left in the session that sid leads, once
// its leader is over. Where neither /proc nor ps can list sessions (macOS's
// ps prints no sid) it does nothing: the tree was killed on a timeout
// already.
func killSession(sid int) {
	self := syscall.Getpid()
	for _, pid := range sessionMembers(sid) {
		if pid > 1 && pid != self {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// sessionMembers lists the processes of session sid: from /proc where there
// is one, a small read a process (every multiplexer call asks, and a ps
// started for it cost more than the call); else from ps.
func sessionMembers(sid int) []int {
	if pids, ok := procSessionMembers("/proc", sid); ok {
		return pids
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ps", "-A", "-o", "pid=", "-o", "sid=").Output()
	if err != nil {
		return nil
	}
	var pids []int
	for _, line := range bytes.Split(out, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) != 2 || string(f[1]) != strconv.Itoa(sid) {
			continue
		}
		if pid, err := strconv.Atoi(string(f[0])); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// procSessionMembers is sessionMembers read from the proc file system at
// root; false where there is none. Each process's stat names its session
// as the fourth field after its name, which ends at the last ")": a name
// may hold anything, a ")" among it.
func procSessionMembers(root string, sid int) ([]int, bool) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, false
	}
	want := strconv.Itoa(sid)
	var pids []int
	found := false
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, e.Name(), "stat"))
		if err != nil {
			continue // gone since the directory was read
		}
		found = true
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		// state ppid pgrp session
		if f := bytes.Fields(b[i+1:]); len(f) >= 4 && string(f[3]) == want {
			pids = append(pids, pid)
		}
	}
	return pids, found
}
