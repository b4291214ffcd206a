package judge

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
)

// requestBytes is the bytes of one request, as the loop writes it.
func requestBytes(in, out, errFile string, args ...string) string {
	fields := append([]string{in, out, errFile, fmt.Sprint(len(args))}, args...)
	return strings.Join(fields, "\x00") + "\x00"
}

// fixture is a binary's path (any file: the judge only stats it), an input
// file and the two output files of a call.
type fixture struct{ self, in, out, err string }

func newFixture(t *testing.T) fixture {
	dir := t.TempDir()
	f := fixture{filepath.Join(dir, "omega-monitor"), filepath.Join(dir, "in"), filepath.Join(dir, "out"), filepath.Join(dir, "err")}
	assert.NilError(t, os.WriteFile(f.self, []byte("a binary"), 0o755))
	assert.NilError(t, os.WriteFile(f.in, []byte("the pane\n"), 0o600))
	// Left by an earlier call: each call's output replaces it.
	assert.NilError(t, os.WriteFile(f.out, []byte("an earlier call's output, longer than this one's\n"), 0o600))
	return f
}

// call is a request of f's files with the command line args after the binary.
func (f fixture) call(args ...string) string {
	return requestBytes(f.in, f.out, f.err, append([]string{f.self}, args...)...)
}

// echo is a Run that copies its standard input to its output, says its
// arguments on its standard error, and exits with the status its first
// argument names.
func echo(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	io.Copy(stdout, stdin)
	fmt.Fprintf(stderr, "%q\n", args)
	var status int
	fmt.Sscan(args[0], &status)
	return status
}

func serve(f fixture, requests int, run Run, input string) (string, error) {
	var out bytes.Buffer
	err := Serve(strings.NewReader(input), &out, Options{Self: f.self, Requests: requests, Run: run})
	return out.String(), err
}

// TestServe: each call runs as its own process would, with its command
// line, its files and its status; the judge ends when its input ends, and
// after its last call.
func TestServe(t *testing.T) {
	f := newFixture(t)
	replies, err := serve(f, 3, echo, f.call("0", "tick", "--state", "a dir\nwith a newline")+f.call("3", "confirm"))
	assert.NilError(t, err)
	assert.Equal(t, replies, "0\n3\n")
	for file, want := range map[string]string{f.out: "the pane\n", f.err: `["3" "confirm"]` + "\n"} {
		got, err := os.ReadFile(file)
		assert.NilError(t, err)
		if diff := cmp.Diff(want, string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", file, diff)
		}
	}
	replies, err = serve(f, 2, echo, f.call("1")+f.call("0")+f.call("0"))
	assert.NilError(t, err)
	assert.Equal(t, replies, "1\n0 last\n", "the third call is not run")
}

// quiet waits until the test binary's goroutines stop ending (an earlier
// test's, its helpers'): the judge counts the process's, and one that ended
// between its counts would hide a leak.
func quiet(t *testing.T) {
	t.Helper()
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m == n {
			return
		}
		n = m
	}
	t.Fatalf("the goroutines never settled: %d", n)
}

// TestServeEndsAfterALeak: a call that may have left something behind
// (past its deadline, a goroutine, a descriptor) is answered, and then the
// judge ends, as the process that ran it would have.
func TestServeEndsAfterALeak(t *testing.T) {
	var kept []*os.File
	defer func() {
		for _, k := range kept {
			k.Close()
		}
	}()
	for _, tc := range []struct {
		name string
		leak func(t *testing.T)
	}{
		// Left blocked for the test binary's life: one that ended while a
		// later run of this test counts would hide that run's leak.
		{"a goroutine", func(t *testing.T) { go func() { select {} }() }},
		{"a descriptor", func(t *testing.T) {
			k, err := os.Open(os.DevNull)
			assert.NilError(t, err)
			kept = append(kept, k)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			n := 0
			run := func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
				if n++; n == 2 {
					tc.leak(t)
				}
				return 0
			}
			quiet(t)
			replies, err := serve(f, 10, run, f.call()+f.call()+f.call())
			assert.NilError(t, err)
			assert.Equal(t, replies, "0\n0 last\n")
		})
	}
	f := newFixture(t)
	replies, err := serve(f, 10, echo, f.call("0")+f.call("124")+f.call("0"))
	assert.NilError(t, err)
	assert.Equal(t, replies, "0\n124 last\n", "a call past its deadline")
}

// onRead is a reader that calls change before its first read: the
// change comes after the judge started, before its request.
type onRead struct {
	r      io.Reader
	change func()
}

func (o *onRead) Read(p []byte) (int, error) {
	if o.change != nil {
		o.change()
		o.change = nil
	}
	return o.r.Read(p)
}

// TestServeAgain: a call the judge cannot run as its process would (the
// binary changed on disk since it started, a file that does not open) is
// not run: the answer says so, and the judge ends.
func TestServeAgain(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(f fixture)
		files  func(f fixture) (in, out, err string)
	}{
		{name: "the binary rebuilt", change: func(f fixture) {
			os.Remove(f.self)
			os.WriteFile(f.self, []byte("another build"), 0o755)
		}},
		{name: "the binary gone", change: func(f fixture) { os.Remove(f.self) }},
		{name: "no standard input", files: func(f fixture) (string, string, string) { return f.in + ".missing", f.out, f.err }},
		{name: "no directory for the output", files: func(f fixture) (string, string, string) {
			return f.in, filepath.Join(f.in, "out"), f.err
		}},
		{name: "no directory for the errors", files: func(f fixture) (string, string, string) {
			return f.in, f.out, filepath.Join(f.in, "err")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			in, out, errFile := f.in, f.out, f.err
			if tc.files != nil {
				in, out, errFile = tc.files(f)
			}
			ran := false
			run := func(args []string, stdin io.Reader, stdout, stderr io.Writer) int { ran = true; return 0 }
			r := &onRead{strings.NewReader(requestBytes(in, out, errFile, f.self, "tick") + f.call()), func() {
				if tc.change != nil {
					tc.change(f)
				}
			}}
			var replies bytes.Buffer
			err := Serve(r, &replies, Options{Self: f.self, Requests: 5, Run: run})
			assert.NilError(t, err)
			assert.Equal(t, replies.String(), "again\n")
			assert.Assert(t, !ran)
		})
	}
}

// TestServeRefuses: a request that is not one (hostile or broken input) gets
// no answer, and ends the judge with an error that says why; so does a
// call of another binary.
func TestServeRefuses(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("x", maxField+1)
	for _, tc := range []struct {
		name, input, want string
	}{
		{"no count", strings.Join([]string{f.in, f.out, f.err, ""}, "\x00"), "judge: a request cut short: unexpected EOF"},
		{"a count not a number", strings.Join([]string{f.in, f.out, f.err, "two", f.self, ""}, "\x00"), `judge: a request of "two" arguments`},
		{"no arguments", requestBytes(f.in, f.out, f.err), `judge: a request of "0" arguments`},
		{"too many arguments", strings.Join([]string{f.in, f.out, f.err, fmt.Sprint(maxArgs + 1), ""}, "\x00"), "arguments (1 to 256)"},
		{"fewer arguments than counted", strings.Join([]string{f.in, f.out, f.err, "3", f.self, "tick", ""}, "\x00"), "judge: a request cut short: unexpected EOF"},
		{"a field past its bound", requestBytes(f.in, f.out, f.err, f.self, long), "a field past 1048576 bytes"},
		{"cut in a field", f.call("tick")[:len(f.call("tick"))-3], "judge: a request cut short: unexpected EOF"},
		{"another binary", requestBytes(f.in, f.out, f.err, "/bin/sh", "-c", "true"), `judge: a call of "/bin/sh", not of this binary`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := false
			run := func(args []string, stdin io.Reader, stdout, stderr io.Writer) int { ran = true; return 0 }
			replies, err := serve(f, 5, run, tc.input)
			assert.ErrorContains(t, err, tc.want)
			assert.Equal(t, replies, "")
			assert.Assert(t, !ran)
		})
	}
	replies, err := serve(f, 5, echo, "")
	assert.NilError(t, err, "no request: the loop is gone")
	assert.Equal(t, replies, "")
}

// TestServeReaps: a child a call starts and does not wait for (tick's
// on-change) is reaped once it ends, as init reaped it when the call was a
// process: a judge that lives on gathers no zombies.
func TestServeReaps(t *testing.T) {
	f := newFixture(t)
	var pid int
	run := func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		c := exec.Command("true")
		assert.NilError(t, c.Start())
		pid = c.Process.Pid
		c.Process.Release()
		// Ended before the call returns, so the judge finds it a zombie.
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err != nil || strings.Contains(string(stat), ") Z ") {
				break
			}
		}
		return 0
	}
	replies, err := serve(f, 5, run, f.call())
	assert.NilError(t, err)
	assert.Equal(t, replies, "0\n")
	_, err = syscall.Wait4(pid, nil, syscall.WNOHANG, nil)
	assert.ErrorIs(t, err, syscall.ECHILD, "the child was reaped")
}
