package hosts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/internal/procgroup"
)

// The bounds of one host's read.
const (
	// Clock is the wall clock of one host's read, connection included.
	Clock = 5 * time.Second
	// MaxAnswer bounds what a host's board may send: 200 watchers are
	// about 1 MiB of JSON.
	MaxAnswer = 4 << 20
	// MaxWatchers bounds the watchers one host may put on the board.
	MaxWatchers = 2000
	// maxGroups bounds the groups one host may put on the board.
	maxGroups = 256
	// maxString bounds every string of a host's answer.
	maxString = 8 << 10
	// maxStderr bounds what is kept of what ssh and the host said.
	maxStderr = 16 << 10
	// persist is how long the board's ssh connection to a host stays
	// after its last read, so that the next refresh costs a round trip
	// and not a handshake.
	persist = 60
)

// ReadEnv, set in the environment of the host's status --json, says that
// another board reads it: the host reads its own state home alone (never
// its own hosts, so that two boards that list each other do not read each
// other for ever) and moves none of its board's cursors, so that its
// operator's board still counts its new log lines.
const ReadEnv = "OMEGA_MONITOR_READ_BY_BOARD"

// remoteBoard finds the host's omega-monitor as the wake relay does
// ($OMEGA_MONITOR_BIN, the PATH of an ssh command, go install's directory,
// ~/.local/bin) and runs its board as JSON. None: exit 127, which the
// board reads as no omega-monitor on the host.
var remoteBoard = remoteRun("status --json")

// remoteRun is the sh script that runs the host's omega-monitor, found as
// remoteBoard finds it, with the words of args (quoted by the caller), as
// read by another board.
func remoteRun(args string) string {
	return `for b in "${OMEGA_MONITOR_BIN:-}" "$(command -v omega-monitor 2>/dev/null)" ` +
		`"$HOME/go/bin/omega-monitor" "$HOME/.local/bin/omega-monitor"; do ` +
		`if [ -n "$b" ] && [ -f "$b" ] && [ -x "$b" ]; then ` + ReadEnv + `=1 exec "$b" ` + args + `; fi; done; exit 127`
}

// A Reader reads other hosts' boards over ssh.
type Reader struct {
	// SSH holds ssh's options (Config for -F); its Timeout is not used:
	// Clock bounds a read.
	SSH coord.SSH
	// Clock bounds each host's read; 0 means Clock.
	Clock time.Duration
	// Control is the directory of the board's ssh connections, one
	// socket a host; "" connects anew every read.
	Control string
}

// Read reads every host's board at once, each under its own clock, and
// returns one Remote a host, in the order given.
func (r Reader) Read(ctx context.Context, hosts []string) []board.Remote {
	out := make([]board.Remote, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Go(func() { out[i] = r.read(ctx, h) })
	}
	wg.Wait()
	return out
}

func (r Reader) clock() time.Duration {
	if r.Clock <= 0 {
		return Clock
	}
	return r.Clock
}

// args are ssh's arguments to run the sh script on the host: the loop's
// options (BatchMode, no forwarding of anything, the connect and keepalive
// clocks of Clock) and, when Control is set, a ControlMaster of the
// board's.
func (r Reader) args(alias, script string) []string {
	s := r.SSH
	s.Timeout = r.clock()
	cmd := coord.RemoteScript(max(1, int(s.Timeout/time.Second)), script)
	if r.Control == "" {
		return s.Args(alias, cmd)
	}
	control := coord.ControlPath(filepath.Join(r.Control, alias), os.Getuid())
	if err := os.MkdirAll(filepath.Dir(control), 0o700); err != nil {
		return s.Args(alias, cmd)
	}
	return append(append([]string{"-n"}, s.LoopOptions(control, persist)...), "--", alias, cmd)
}

// capped keeps the first n bytes written to it; the write past them fails,
// and over calls the caller's stop, so that a host that sends without end
// is ended, not read.
type capped struct {
	buf  bytes.Buffer
	n    int
	over func()
}

var errTooBig = errors.New("hosts: answer too big")

func (c *capped) Write(p []byte) (int, error) {
	if c.buf.Len()+len(p) > c.n {
		c.buf.Write(p[:c.n-c.buf.Len()])
		if c.over != nil {
			c.over()
			c.over = nil
		}
		return 0, errTooBig
	}
	return c.buf.Write(p)
}

// A reply is what one ssh call to a host came back with: its standard
// output, whole, when the call went well; else why not, in one line, and
// whether ssh reached the host at all (what it says after that is the
// host's).
type reply struct {
	out     []byte
	rtt     time.Duration
	reached bool
	why     string
}

// call runs the sh script on the host alias under the reader's clock and
// the answer's bound, and ends the whole call, grandchildren included, when
// either runs out; what names what the script runs there, for a failure
// ("its board").
func (r Reader) call(ctx context.Context, alias, script, what string) reply {
	clock := r.clock()
	ctx, cancel := context.WithTimeout(ctx, clock)
	defer cancel()
	tooBig := false
	stdout := &capped{n: MaxAnswer, over: func() { tooBig = true; cancel() }}
	stderr := &capped{n: maxStderr}
	cmd := procgroup.Command(ctx, time.Second, "ssh", r.args(alias, script)...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	start := time.Now()
	err := cmd.Run()
	rep := reply{rtt: time.Since(start)}
	procgroup.Kill(cmd)
	fail := func(format string, a ...any) reply {
		rep.why = printable.Cut(oneLine(printable.String(fmt.Sprintf(format, a...))), 300)
		return rep
	}
	var exit *exec.ExitError
	switch {
	case tooBig:
		return fail("its answer is larger than %d MiB: not read", MaxAnswer>>20)
	case ctx.Err() == context.DeadlineExceeded && stdout.buf.Len() > 0:
		return fail("too slow: its answer did not end within %v (%d bytes came)", clock, stdout.buf.Len())
	case ctx.Err() == context.DeadlineExceeded:
		return fail("unreachable: no answer within %v", clock)
	case errors.As(err, &exit) && exit.ExitCode() == 255:
		return fail("unreachable: %s", lastLine(stderr.buf.String(), "ssh ended, saying nothing (exit 255)"))
	}
	// ssh reached the host: whatever it says now is the host's.
	rep.reached = true
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == 127:
		return fail("no omega-monitor on the host: install it there, or set OMEGA_MONITOR_BIN in its environment")
	case err != nil:
		return fail("%s failed (%v): %s", what, err, lastLine(stderr.buf.String(), "nothing said"))
	}
	rep.out = stdout.buf.Bytes()
	return rep
}

// read reads one host's board: its row, and its fleet when the answer was
// whole and a board.
func (r Reader) read(ctx context.Context, alias string) board.Remote {
	rep := r.call(ctx, alias, remoteBoard, "its board")
	row := board.Host{Name: alias, RTTMs: int(rep.rtt / time.Millisecond), Reachable: rep.reached}
	fail := func(why string) board.Remote {
		row.Degraded = true
		row.Reason = printable.Cut(oneLine(printable.String(why)), 300)
		return board.Remote{Host: row}
	}
	if rep.why != "" {
		return fail(rep.why)
	}
	f, err := Decode(rep.out)
	if err != nil {
		return fail(err.Error())
	}
	row.FreshAt = &f.GeneratedAt
	return board.Remote{Host: row, Fleet: f}
}

// lastLine is the last line of what a host said, or none when it said
// nothing.
func lastLine(s, none string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return none
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Decode reads a host's answer as a board (status --json): one JSON
// object, nothing after it, with the fields every board has. Fields it
// does not know are left (a newer host's board adds fields, never
// renames them). Every string in it is cleaned of escape sequences and
// invisible characters and cut to a bound before it is decoded, so that
// nothing a host wrote reaches a terminal, a JSON reader or the MCP
// client as it wrote it. An answer that is not a board is an error, in
// one line.
func Decode(data []byte) (*board.Fleet, error) {
	obj, err := decodeObject(data, "its answer is not a board")
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"generated_at", "watchers", "fleet", "degraded", "errors"} {
		if _, ok := obj[k]; !ok {
			return nil, fmt.Errorf("its answer is not a board: no %q (an omega-monitor too old or not ours)", k)
		}
	}
	if ws, ok := obj["watchers"].([]any); ok && len(ws) > MaxWatchers {
		return nil, fmt.Errorf("its answer holds %d watchers, more than %d: not read", len(ws), MaxWatchers)
	}
	delete(obj, "hosts") // a host's own hosts are not read: one level only
	clean, err := json.Marshal(sanitize(obj))
	if err != nil {
		return nil, fmt.Errorf("its answer is not a board: %v", err)
	}
	var f board.Fleet
	if err := json.Unmarshal(clean, &f); err != nil {
		return nil, fmt.Errorf("its answer is not a board: %v", err)
	}
	for i, w := range f.Watchers {
		if why := checkWatcher(w); why != "" {
			return nil, fmt.Errorf("its answer is not a board: watcher %d %s", i, why)
		}
	}
	if len(f.Groups) > maxGroups {
		return nil, fmt.Errorf("its answer holds %d groups, more than %d: not read", len(f.Groups), maxGroups)
	}
	for i, g := range f.Groups {
		if why := checkGroup(g); why != "" {
			return nil, fmt.Errorf("its answer is not a board: group %d %s", i, why)
		}
	}
	if f.GeneratedAt.IsZero() {
		return nil, errors.New("its answer is not a board: no census clock")
	}
	return &f, nil
}

// checkWatcher says what of a host's watcher is not as a board writes it,
// or "" when all is: the words the board and the MCP server show as they
// are, outside any untrusted text (its name, target, pane, agent, state,
// liveness, needs and figures), are only ever names and words of ours.
func checkWatcher(w board.Watcher) string {
	word := func(s string, words ...string) bool { return s == "" || slices.Contains(words, s) }
	switch {
	case coord.CheckSession(w.Name) != nil:
		return fmt.Sprintf("has the name %q", printable.Cut(w.Name, 40))
	case w.Target != "" && !isTarget(w.Target):
		return fmt.Sprintf("has the target %q", printable.Cut(w.Target, 40))
	case w.Pane != "" && (w.Pane[0] != '%' || strings.Trim(w.Pane[1:], "0123456789") != "" || len(w.Pane) > 12):
		return fmt.Sprintf("has the pane %q", printable.Cut(w.Pane, 20))
	case w.Agent != "" && coord.CheckSession(w.Agent) != nil:
		return fmt.Sprintf("has the agent %q", printable.Cut(w.Agent, 20))
	case !slices.Contains([]string{board.Live, board.Quiet, board.Stale, board.Gone}, w.Liveness):
		return fmt.Sprintf("has the liveness %q", printable.Cut(w.Liveness, 20))
	case !word(w.State, "WORKING", "QUESTION", "STALLED", "BLOCKED", "?"):
		return fmt.Sprintf("has the state %q", printable.Cut(w.State, 20))
	case !word(w.NeedsHuman, board.NeedsQuestion, board.NeedsBlocked, board.NeedsBudgetExhausted):
		return fmt.Sprintf("needs %q", printable.Cut(w.NeedsHuman, 20))
	case !isFigure(w.Work) || !isFigure(w.Progress):
		return "has a probe's figure that is not one"
	}
	return ""
}

// checkGroup says what of a host's group is not as a board writes it, or
// "" when all is: its kind a word of ours, its counts counts.
func checkGroup(g board.Group) string {
	count := func(n int) bool { return n >= 0 && n <= 1<<20 }
	switch {
	case !causeKind.MatchString(g.Kind):
		return fmt.Sprintf("has the kind %q", printable.Cut(g.Kind, 20))
	case !count(g.Panes) || !count(g.Gathering) || !count(g.PagesPending) || !count(g.PagesMade):
		return "has a count that is not one"
	}
	return ""
}

// causeKind matches a group's kind as package poll writes it.
var causeKind = regexp.MustCompile(`^[a-z-]{1,16}$`)

func isTarget(s string) bool {
	_, err := coord.ParseTarget(s)
	return err == nil
}

// isFigure says s is a probe's figure as the MONITOR line spells it: digits,
// or ? when unknown; empty without a probe.
func isFigure(s string) bool {
	return s == "" || s == "?" || len(s) <= 20 && strings.Trim(s, "0123456789") == ""
}

// sanitize cleans every string of a decoded JSON value, keys too, and cuts
// it to maxString bytes.
func sanitize(v any) any {
	switch v := v.(type) {
	case string:
		return printable.Cut(printable.String(v), maxString)
	case []any:
		for i := range v {
			v[i] = sanitize(v[i])
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[printable.Cut(printable.String(k), maxString)] = sanitize(x)
		}
		return out
	}
	return v
}
