package capture

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"

	"github.com/omega-monitor/omega-monitor/probe"
)

// The pane's foreground process group is read from /proc: the pane's own
// process (the multiplexer's #{pane_pid}) says, in its stat, which process
// group holds the terminal's foreground (tpgid); the group's processes that
// descend from the pane's process are found through the kernel's children
// lists. Keys of ours go only to a group that holds the agent's process
// (probe.Foreground). A remote frame carries the same from the host
// (remoteForeground); a local one is read here.

// maxProcs bounds the processes read of a foreground group, and
// maxProcWord the words of each.
const (
	maxProcs    = 8
	maxProcWord = 512
	maxProcArgs = 4
)

// A ProcReader reads a process's stat line, command line and children;
// Proc is /proc, tests give another.
type ProcReader interface {
	Stat(pid int) (string, error)
	Cmdline(pid int) ([]byte, error)
	Children(pid int) (string, error)
}

// Proc reads /proc.
type Proc struct{}

func (Proc) Stat(pid int) (string, error) {
	b, err := readSmall("/proc/" + strconv.Itoa(pid) + "/stat")
	return strings.TrimRight(string(b), "\n"), err
}

func (Proc) Cmdline(pid int) ([]byte, error) {
	return readSmall("/proc/" + strconv.Itoa(pid) + "/cmdline")
}

func (Proc) Children(pid int) (string, error) {
	p := strconv.Itoa(pid)
	b, err := readSmall("/proc/" + p + "/task/" + p + "/children")
	return string(b), err
}

func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 4096)
	n, err := f.Read(b)
	if n > 0 {
		return b[:n], nil
	}
	return nil, err
}

// statFields splits a stat line into the name and the words after it
// (word 0 is the state); the name is between the first '(' and the last
// ')', since a name may hold either.
func statFields(line string) (name string, words []string, ok bool) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return "", nil, false
	}
	words = strings.Fields(line[end+1:])
	return line[open+1 : end], words, len(words) >= 20
}

// ReadForeground reads the foreground process group of the terminal of the
// pane whose own process is pid.
func ReadForeground(r ProcReader, pid int) probe.Foreground {
	unknown := func(why string) probe.Foreground { return probe.Foreground{Unknown: why} }
	if pid <= 0 {
		return unknown("the multiplexer does not say the pane's process (#{pane_pid})")
	}
	line, err := r.Stat(pid)
	if err != nil {
		return unknown("the pane's process cannot be read: " + err.Error())
	}
	_, w, ok := statFields(line)
	if !ok {
		return unknown("the pane's process's stat does not read")
	}
	group := w[5] // tpgid
	f := probe.Foreground{Known: true}
	queue := []int{pid}
	for seen := 0; len(queue) > 0 && seen < maxProcs; seen++ {
		p := queue[0]
		queue = queue[1:]
		line, err := r.Stat(p)
		if err != nil {
			continue // gone since
		}
		name, w, ok := statFields(line)
		if !ok {
			continue
		}
		if w[2] == group { // pgrp
			args, _ := r.Cmdline(p)
			f.Procs = append(f.Procs, process(p, w[19], name, bytes.Split(bytes.TrimRight(args, "\x00"), []byte{0})))
		}
		kids, _ := r.Children(p)
		for _, k := range strings.Fields(kids) {
			if n, err := strconv.Atoi(k); err == nil && n > 0 {
				queue = append(queue, n)
			}
		}
	}
	return f
}

// process makes a probe.Process of what was read, each word capped.
func process(pid int, start, name string, args [][]byte) probe.Process {
	if strings.ContainsAny(name, "\x1f") {
		name = "?" // as the host's script names it
	}
	p := probe.Process{PID: pid, Start: start, Comm: capWord(name)}
	for i, a := range args {
		if i == maxProcArgs {
			break
		}
		p.Args = append(p.Args, capWord(string(a)))
	}
	return p
}

// capWord is a word as a frame can carry it: valid UTF-8, at most
// maxProcWord bytes, a unit separator or a line break made "?" (what the
// host's script does to an argument).
func capWord(s string) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.NewReplacer("\x1f", "?", "\n", "?").Replace(s)
	if len(s) > maxProcWord {
		s = s[:maxProcWord]
	}
	return s
}

// readForegroundBlock reads a remote frame's foreground block, its mark
// line read already: ProcMark lines up to ForegroundEnd. A host without
// /proc sends none: unknown. A line that does not read, or one too many,
// makes the whole block unknown: a host believed on none of it.
func readForegroundBlock(br *bufio.Reader) (probe.Foreground, error) {
	f := probe.Foreground{Known: true}
	bad := ""
	for n := 0; ; n++ {
		line, full, err := readLine(br, MaxStatusFile)
		if err != nil {
			return f, errors.New("capture frame: the foreground block without its end")
		}
		if line == ForegroundEnd {
			break
		}
		if n >= maxProcs || !full {
			bad = "the host sent more of the pane's processes than it may"
			continue
		}
		p, ok := procLine(line)
		if !ok {
			bad = "the host's line on a process of the pane does not read"
			continue
		}
		f.Procs = append(f.Procs, p)
	}
	switch {
	case bad != "":
		return probe.Foreground{Unknown: bad}, nil
	case len(f.Procs) == 0:
		return probe.Foreground{Unknown: "the host did not say the pane's processes (no /proc there?)"}, nil
	}
	return f, nil
}

// procLine reads "ProcMark PID START PGRP\x1fNAME\x1fARG\x1fARG...".
func procLine(line string) (probe.Process, bool) {
	rest, ok := strings.CutPrefix(line, ProcMark+" ")
	if !ok {
		return probe.Process{}, false
	}
	head, tail, ok := strings.Cut(rest, "\x1f")
	f := strings.Fields(head)
	if !ok || len(f) != 3 {
		return probe.Process{}, false
	}
	pid, err := strconv.Atoi(f[0])
	if _, ok := seconds(f[1]); err != nil || pid <= 0 || !ok {
		return probe.Process{}, false
	}
	words := strings.Split(tail, "\x1f")
	var args [][]byte
	for _, a := range words[1:] {
		if a != "" {
			args = append(args, []byte(a))
		}
	}
	return process(pid, f[1], words[0], args), true
}
