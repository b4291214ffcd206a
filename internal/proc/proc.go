// Package proc is process identity, in one place: whether the process a
// record names still runs. A pid alone proves nothing, since the system
// reuses it; a pid with the start token recorded when the process started
// is that process. Every record of a process of ours (a watcher's loop, the
// answer receiver) keeps both, and everything that asks whether it runs, or
// signals it, asks here.
//
// It reads /proc (or runs ps where there is none); it signals nothing.
package proc

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
)

// Alive says whether the process started as token says, with the id pid,
// still runs. An empty token proves nothing: false.
func Alive(pid int, token string) bool {
	if token == "" {
		return false
	}
	now, running := StartToken(pid)
	return running && now == token
}

// Self is this process's start token.
func Self() string {
	token, _ := StartToken(os.Getpid())
	return token
}

// StartToken says whether a process runs with the id pid, and its start
// token: /proc/<pid>/stat field 22 (the start time in clock ticks since
// boot, as a decimal string) on Linux, the output of ps -o lstart= -p PID
// elsewhere (macOS), trimmed. A zombie does not run.
func StartToken(pid int) (string, bool) {
	if pid <= 0 {
		return "", false
	}
	if runtime.GOOS == "linux" {
		return linuxStartToken(pid)
	}
	out, err := exec.Command("ps", "-o", "lstart=", "-p", strconv.Itoa(pid)).Output()
	token := strings.TrimSpace(string(out))
	if err != nil || token == "" {
		return "", false
	}
	return token, true
}

func linuxStartToken(pid int) (string, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	token, state, err := ParseStat(string(data))
	if err != nil || state == "Z" || state == "X" {
		return "", false
	}
	return token, true
}

// ParseStat reads /proc/<pid>/stat: the process state (field 3) and the
// start time (field 22). The command name (field 2) is in parentheses and
// may itself hold spaces and parentheses, so the fields are counted from
// the last ')'.
func ParseStat(stat string) (token, state string, err error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return "", "", errors.New("proc: /proc stat without a command name")
	}
	fields := strings.Fields(stat[i+1:])
	// fields[0] is field 3 (state); field 22 is fields[19].
	if len(fields) < 20 {
		return "", "", errors.New("proc: /proc stat too short")
	}
	return fields[19], fields[0], nil
}
