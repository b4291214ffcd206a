package statedir

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
)

// Every action the tick hands the loop (a nudge, an answer, a pause, a
// measure of the diff) is a list of steps, one a line, which the loop
// carries out in order and nothing more: it knows the steps, not the
// actions. The order of the checks before each key, the events each outcome
// records and the texts that say them are Go's, written here; the loop only
// runs the effect a step names and reports how it went.
//
//	capture NAME            a fresh capture frame into the poll directory's NAME
//	confirm STAGE NAME USECS
//	                        Go judges NAME for the action's STAGE (confirm):
//	                        0 go on, 1 refused (recorded: the action ends), 3
//	                        not settled yet: capture NAME anew USECS later
//	                        and ask again (Go bounds the tries)
//	keys KEY                one key (Keys), sent only while the pane is as the
//	                        last confirm saw it (the multiplexer tests it in
//	                        the same command)
//	paste NAME              the file NAME of Pastes, through a paste buffer, on
//	                        the same condition
//	rest USECS              a wait of USECS microseconds, whatever wakes come
//	ack EVENT               the outcome: the action is done
//	pace SECONDS            the pause before the next poll (a fraction allowed)
//	wake                    the next poll comes at once, as after a wake (the
//	                        screen is about to change: an answer was typed)
//	measure NAME            runs the diff command in the file NAME of Pastes;
//	                        what it printed goes to the next tick
//
// A capture, key or paste that fails ends the action: the loop says which
// step failed and why (ack --failed-step), and Go records what that means.
type Op string

// The steps the loop knows: a contract test holds the loop's interpreter
// to this list.
const (
	OpCapture Op = "capture"
	OpConfirm Op = "confirm"
	OpKeys    Op = "keys"
	OpPaste   Op = "paste"
	OpRest    Op = "rest"
	OpAck     Op = "ack"
	OpPace    Op = "pace"
	OpMeasure Op = "measure"
	OpWake    Op = "wake"
)

// Ops are the steps the loop knows, in the order the doc above lists them.
var Ops = []Op{OpCapture, OpConfirm, OpKeys, OpPaste, OpRest, OpAck, OpPace, OpMeasure, OpWake}

// Keys are the keys a keys step may send: the names the multiplexer's
// send-keys takes, one command line each in the loop's settings.
var Keys = []string{"Enter", "Up", "Down", "Left", "Right", "Escape", "Tab"}

// Pastes is the directory, beside Actions, of the files a paste or a
// measure step names: a nudge's text, an operator's words, a diff command.
const Pastes = "pastes"

// A Step is one line of an action.
type Step struct {
	Op   Op
	Args []string
}

// arity is how many words each step takes after its name.
var arity = map[Op]int{OpCapture: 1, OpConfirm: 3, OpKeys: 1, OpPaste: 1, OpRest: 1, OpAck: 1, OpPace: 1, OpMeasure: 1, OpWake: 0}

// Check says what is wrong with s, or nil: an unknown step, a word count
// the loop does not read, a word it cannot carry (empty, or holding a
// space or a control character), a key it does not send, a name that is
// not a plain file name, a number that is not one.
func (s Step) Check() error {
	n, ok := arity[s.Op]
	if !ok {
		return errorf("unknown step %q", s.Op)
	}
	if len(s.Args) != n {
		return errorf("step %s takes %d word(s), not %d", s.Op, n, len(s.Args))
	}
	for _, a := range s.Args {
		if a == "" || strings.ContainsFunc(a, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return errorf("step %s: the word %q is empty or holds a space or a control character", s.Op, a)
		}
	}
	switch s.Op {
	case OpKeys:
		if !slices.Contains(Keys, s.Args[0]) {
			return errorf("step keys: %q is not a key the loop sends", s.Args[0])
		}
	case OpCapture, OpPaste, OpMeasure:
		if !plainName(s.Args[0]) {
			return errorf("step %s: %q is not a plain file name", s.Op, s.Args[0])
		}
	case OpConfirm:
		if !plainName(s.Args[1]) || !digits(s.Args[2]) {
			return errorf("step confirm: %q %q are not a file name and microseconds", s.Args[1], s.Args[2])
		}
	case OpRest:
		if !digits(s.Args[0]) {
			return errorf("step rest: %q is not microseconds", s.Args[0])
		}
	case OpPace:
		if _, err := strconv.ParseFloat(s.Args[0], 64); err != nil || strings.ContainsAny(s.Args[0], "eE+-") {
			return errorf("step pace: %q is not seconds", s.Args[0])
		}
	}
	return nil
}

func (s Step) String() string { return strings.Join(append([]string{string(s.Op)}, s.Args...), " ") }

func plainName(s string) bool {
	return s != "." && s != ".." && len(s) <= 64 && !strings.ContainsAny(s, `/\`)
}

func digits(s string) bool { return s != "" && len(s) <= 10 && strings.Trim(s, "0123456789") == "" }

// FormatSteps renders steps one a line, each checked first.
func FormatSteps(steps []Step) ([]byte, error) {
	var b bytes.Buffer
	for _, s := range steps {
		if err := s.Check(); err != nil {
			return nil, err
		}
		b.WriteString(s.String())
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// ParseSteps reads an action's steps back, each checked.
func ParseSteps(data []byte) ([]Step, error) {
	var steps []Step
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Split(sc.Text(), " ")
		s := Step{Op: Op(f[0]), Args: f[1:]}
		if err := s.Check(); err != nil {
			return nil, err
		}
		steps = append(steps, s)
	}
	if err := sc.Err(); err != nil {
		return nil, errorf("steps: %w", err)
	}
	return steps, nil
}

// WriteSteps hands the loop the action name (NNN.kind) as its steps; each
// paste the steps name is written first, into Pastes, so that no step
// names a file that is not there.
func (d Dir) WriteSteps(name string, steps []Step, pastes map[string][]byte) error {
	if !plainName(name) {
		return errorf("%q is not an action's name", name)
	}
	data, err := FormatSteps(steps)
	if err != nil {
		return err
	}
	if len(pastes) > 0 {
		if err := os.MkdirAll(d.Path(Pastes), 0o700); err != nil {
			return errorf("%w", err)
		}
		if err := CheckPrivate(d.Path(Pastes)); err != nil {
			return err
		}
	}
	for n, p := range pastes {
		if !plainName(n) {
			return errorf("%q is not a paste's name", n)
		}
		if err := atomicfile.Write(filepath.Join(d.Path(Pastes), n), p, 0o600); err != nil {
			return errorf("%w", err)
		}
	}
	return d.WriteAction(name, data)
}

// ReadSteps reads the steps of the action file path.
func ReadSteps(path string) ([]Step, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errorf("%w", err)
	}
	return ParseSteps(data)
}

// ReadPaste reads the paste name of d.
func (d Dir) ReadPaste(name string) ([]byte, error) {
	if !plainName(name) {
		return nil, errorf("not a paste's name")
	}
	return os.ReadFile(filepath.Join(d.Path(Pastes), name))
}

// DropPastes removes the pastes of the actions handed over: a poll's
// actions are the only ones that name them.
func (d Dir) DropPastes() {
	entries, _ := os.ReadDir(d.Path(Pastes))
	for _, e := range entries {
		os.Remove(filepath.Join(d.Path(Pastes), e.Name()))
	}
}
