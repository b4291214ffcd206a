// Package judge serves the poll loop's calls of omega-monitor (tick,
// confirm, ack) from one resident process, the loop's judge, so that a
// poll starts no Go process. Each call keeps its contract: the same
// command line, run by the same run function main calls, with its standard
// input read from the file the loop names and its output written to the
// files the loop names, its exit status handed back. Only who starts the
// process changed.
//
// The protocol, on the judge's standard input and output (a bash coprocess
// of scripts/omega-monitor.sh):
//
//	request: IN \0 OUT \0 ERR \0 ARGC \0 ARG0 \0 ARG1 \0 ... (ARGC args)
//	reply:   STATUS\n          the call's exit status
//	         STATUS last\n     the same, and the judge takes no other call
//	         again\n           not run (the binary changed on disk, a file
//	                           did not open): the loop runs it as a process;
//	                           the judge takes no other call
//
// ARG0 is the binary's path, and must be the one the judge was started as.
// A call that may have left something behind is the judge's last: one past
// its deadline (status 124: its work is abandoned, as a process abandons it
// by exiting), one after which more goroutines or descriptors are open than
// after the first call, and the last of its life (Options.Requests). After
// its last reply the judge reads its input to its end, and ends then or
// when the loop ends it: bash closes a coprocess's pipes when it reaps it,
// and a judge that exited at once could take its reply with it. A malformed
// request gets no reply and ends the judge at once. A call reads
// everything afresh: the judge keeps nothing between calls.
package judge

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"time"
)

// Run runs one command line, as main's run does: args without the
// program's name, the call's streams.
type Run func(args []string, stdin io.Reader, stdout, stderr io.Writer) int

// Options are what a judge serves and how long it lives.
type Options struct {
	// Self is the binary's path as the loop names it, the first word of
	// every call; a call naming another is refused.
	Self string
	// Requests is the most calls one judge runs before it ends (the loop
	// starts another), so that what a call leaks cannot grow forever.
	Requests int
	// Run runs a call.
	Run Run
}

// Limits on a request, against a writer gone wrong: the loop's longest
// argument is a few kilobytes (each reading is capped at 4096 bytes).
const (
	maxField = 1 << 20
	maxArgs  = 256
)

// Serve answers the requests read from r on w, until r ends (the loop is
// gone: nil) or the judge must end (nil after its last reply, an error
// after a malformed request, which gets none).
func Serve(r io.Reader, w io.Writer, o Options) error {
	if o.Requests < 1 {
		return errors.New("judge: at least one request")
	}
	born, err := os.Stat(o.Self)
	if err != nil {
		return fmt.Errorf("judge: %w", err)
	}
	in := bufio.NewReader(r)
	goroutines, fds := -1, -1
	for n := 1; ; n++ {
		req, err := readRequest(in)
		if errors.Is(err, io.EOF) && req == nil {
			return nil
		}
		if err != nil {
			return err
		}
		if req.args[0] != o.Self {
			return fmt.Errorf("judge: a call of %q, not of this binary", req.args[0])
		}
		// A binary rebuilt since the judge started has other rules: the
		// call is the new one's.
		status, ran := 0, false
		if !changed(o.Self, born) {
			status, ran = runRequest(req, o)
		}
		reap()
		if !ran {
			return end(in, w, "again\n")
		}
		g, f := settled(goroutines, fds)
		if n == 1 {
			// What the first call started once (the runtime's poller,
			// a package's first use) is no leak: the others are held to it.
			goroutines, fds = g, f
		}
		last := n >= o.Requests || status == 124 || g > goroutines || f > fds
		reply := strconv.Itoa(status)
		if last {
			reply += " last"
		}
		if last {
			return end(in, w, reply+"\n")
		}
		if _, err := io.WriteString(w, reply+"\n"); err != nil {
			return err
		}
	}
}

// end writes the judge's last reply, then reads its input to its end (see
// the package comment).
func end(r io.Reader, w io.Writer, reply string) error {
	if _, err := io.WriteString(w, reply); err != nil {
		return err
	}
	_, err := io.Copy(io.Discard, r)
	return err
}

// A request is one call: its files and its command line.
type request struct {
	in, out, err string
	args         []string
}

// readRequest reads one request; nil and io.EOF when the input ended
// before it began.
func readRequest(r *bufio.Reader) (*request, error) {
	var fields [4]string
	for i := range fields {
		f, err := readField(r)
		if err != nil {
			if i == 0 && f == "" && errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, cutShort(err)
		}
		fields[i] = f
	}
	argc, err := strconv.Atoi(fields[3])
	if err != nil || argc < 1 || argc > maxArgs {
		return nil, fmt.Errorf("judge: a request of %q arguments (1 to %d)", fields[3], maxArgs)
	}
	req := &request{in: fields[0], out: fields[1], err: fields[2], args: make([]string, argc)}
	for i := range req.args {
		if req.args[i], err = readField(r); err != nil {
			return nil, cutShort(err)
		}
	}
	return req, nil
}

// cutShort is the error of a request that ended with err before its end.
func cutShort(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("judge: a request cut short: %w", err)
}

// readField reads one field, up to its NUL, at most maxField bytes.
func readField(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		chunk, err := r.ReadSlice(0)
		b = append(b, chunk...)
		if len(b) > maxField {
			return "", fmt.Errorf("a field past %d bytes", maxField)
		}
		switch {
		case err == nil:
			return string(b[:len(b)-1]), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return string(b), err
		}
	}
}

// runRequest runs the call with its files open as the shell would open
// them (standard input read, the others created or truncated); ran is
// false when one did not open, and then nothing ran.
func runRequest(req *request, o Options) (status int, ran bool) {
	stdin, err := os.Open(req.in)
	if err != nil {
		return 0, false
	}
	defer stdin.Close()
	stdout, err := os.Create(req.out)
	if err != nil {
		return 0, false
	}
	defer stdout.Close()
	stderr := stdout
	if req.err != req.out {
		if stderr, err = os.Create(req.err); err != nil {
			return 0, false
		}
		defer stderr.Close()
	}
	return o.Run(req.args[1:], stdin, stdout, stderr), true
}

// changed reports whether the binary at path is no longer the one the
// judge was started from (replaced, rebuilt, or gone).
func changed(path string, born os.FileInfo) bool {
	now, err := os.Stat(path)
	return err != nil || !os.SameFile(born, now) || !now.ModTime().Equal(born.ModTime()) || now.Size() != born.Size()
}

// settled counts the goroutines and open descriptors once a call is over,
// giving a goroutine that is ending (a call's helper that has sent its
// result) a few milliseconds to end before it counts as left behind.
func settled(goroutines, fds int) (g, f int) {
	for range 20 {
		if g = runtime.NumGoroutine(); g <= goroutines || goroutines < 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return g, openFiles()
}

// openFiles is the number of this process's open descriptors, -1 where
// the system does not list them.
func openFiles() int {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return -1
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return -1
	}
	return len(names) - 1 // the listing's own
}
