package capture

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/probe"
)

// Caps on what a frame may carry: a header is a coordinate and a path; an
// agent's status file is a few hundred bytes (Claude Code's), and all of
// them together MaxStatus; a Codex log's tail is MaxStatusFile, of at most
// MaxCodexLogs logs. What passes a cap is dropped, never buffered: a
// hostile host cannot grow the reader.
const (
	MaxHeader     = 4 << 10
	MaxMuxLine    = 64 << 10 // some 3,000 sessions
	MaxStatus     = 1 << 20
	MaxStatusFile = 64 << 10
)

// A Capture is one poll's screen, with where it was drawn and the agent's
// own status files for that pane.
type Capture struct {
	Screen *classify.Screen
	Pane   string // session:@window.%pane
	Dir    string // the pane's working directory; "" when unknown, or when its name holds a control character
	// Statuses are the agent's status files that name the pane.
	Statuses [][]byte
	// CodexLogs are the ends of the pane's recent Codex session logs (at
	// most MaxCodexLogs, each at most MaxStatusFile bytes): read here for
	// a local frame, sent by the host for a remote one. They are read as
	// Codex logs only, never as a status file or a frame line.
	CodexLogs [][]byte
	// CodexLogsErr says why the host's Codex logs were all taken as
	// absent: it sent more than it may, or one that does not read.
	CodexLogsErr error
	// QwenChats are the ends of the pane's recent Qwen Code records (at
	// most MaxQwenChats, each at most MaxStatusFile bytes), read as
	// CodexLogs are, and as Qwen Code records only; QwenChatsErr says why
	// the host's were all taken as absent.
	QwenChats    [][]byte
	QwenChatsErr error
	// Events are, for each agent whose description gives an events log
	// (Options.Events), the ends of its pane's recent logs, read as
	// QwenChats are, and as that agent's events only.
	Events []EventsFound
	// StatusErr says why the one status file given could not be read.
	StatusErr error
	// Humans is what the multiplexer said of the humans at the pane;
	// the zero value when the frame did not ask.
	Humans probe.Humans
	// Transcript is the end of the agent's transcript a remote frame
	// carried; nil when it carried none.
	Transcript *Transcript
	// PaneState is what the multiplexer said of the pane (its cursor,
	// size, mode and process), for the condition keys are sent on.
	PaneState PaneState
	// Foreground is the pane's foreground process group: read from /proc
	// for a local frame, sent by the host for a remote one.
	Foreground probe.Foreground
	// Title is the pane's title as the program in it set it, one line,
	// printable, capped; "" when the frame did not carry one.
	Title string
}

// A Transcript is the end of the agent's own record as a remote host sent
// it: Claude Code's transcript of a session, or Codex CLI's session log
// (Log set); the file's size when measured, and its last bytes (at most
// VitalsTail; all of them, unless Err says why not).
type Transcript struct {
	Session string // Claude Code's session id, letters, digits and dashes
	Dir     string // the folder under ~/.claude/projects; "-" when not Claude Code's form
	// Log is Codex's session log, its path under the sessions folder,
	// YYYY/MM/DD/rollout-<id>.jsonl, <id> letters, digits and dashes; ""
	// for Claude Code's transcript.
	Log  string
	Size int64
	Tail []byte
	Err  error
}

// Options say how to read a capture.
type Options struct {
	// Framed says the input is a frame; else it is a bare pane, named by
	// Pane.
	Framed bool
	Pane   string
	// StatusFile is the agent's one status file, for a bare pane.
	StatusFile string
	// StatusDir is where the agent's status files are on this machine
	// (a local frame carries none): those naming the pane are read, and
	// the recent Codex logs of the pane's directory.
	StatusDir string
	// CodexHome is Codex's home on this machine ($CODEX_HOME, else
	// ~/.codex), where its session logs are; QwenHome Qwen Code's
	// ($QWEN_HOME, else ~/.qwen), where its records are.
	CodexHome string
	QwenHome  string
	// Events are the agents' events logs (classify.EventsLogs), and where
	// each is on this machine: a remote frame carries each one's blocks,
	// and a local one's are found here.
	Events []EventsSource
	// Now is the time against which a Codex log counts as recent.
	Now time.Time
	// Procs reads a local pane's processes (nil: /proc).
	Procs ProcReader
	// Foreground is the foreground group of the pane's terminal, as a
	// test or a caller that read it says: it stands for what the frame
	// says, or /proc (nil: what they say; unknown for a bare pane).
	Foreground *probe.Foreground
}

// Read reads a capture from r.
func Read(r io.Reader, o Options) (Capture, error) {
	c := Capture{Pane: o.Pane}
	if !o.Framed {
		c.Foreground = probe.Foreground{Unknown: "a bare pane says nothing of its processes"}
		if o.Foreground != nil {
			c.Foreground = *o.Foreground
		}
		s, err := classify.ReadScreen(r)
		if err != nil {
			return c, fmt.Errorf("reading the pane: %v", err)
		}
		c.Screen = s
		if o.StatusFile != "" {
			data, err := fsutil.ReadCapped(o.StatusFile, MaxStatusFile)
			if err != nil {
				c.StatusErr = err // no witness; the screen decides alone
				return c, nil
			}
			c.Statuses = [][]byte{data}
		}
		return c, nil
	}
	lim := &frameLimit{r: r, left: MaxFrame}
	c, err := readFrame(bufio.NewReaderSize(lim, 64<<10), c, o)
	if lim.over {
		// Whatever was read of it, a frame past its cap is believed on
		// none of it: the rest of it was not read.
		return Capture{Pane: o.Pane, Foreground: probe.Foreground{Unknown: "the frame passed its cap"}}, fmt.Errorf("capture frame: more than %d MiB (a frame is never that long)", MaxFrame>>20)
	}
	return c, err
}

// MaxFrame caps a whole frame: over five times what its parts' own caps
// add up to (the mux line, the header and title, the foreground block, the
// agent's record, the Codex logs and the status files: under 3 MiB), the
// rest for the pane, whose visible screen with its escape sequences is the
// one part no cap of its own bounds as sent. A frame is never read past
// it, and the loop keeps no more of one on disk.
const MaxFrame = 16 << 20

// frameLimit reads at most MaxFrame bytes of r; a byte more makes over
// true, and every read after it fails.
type frameLimit struct {
	r    io.Reader
	left int64
	over bool
}

var errFrameTooLong = errors.New("capture frame: past its cap")

func (l *frameLimit) Read(p []byte) (int, error) {
	switch {
	case l.over:
		return 0, errFrameTooLong
	case l.left > 0:
		n, err := l.r.Read(p[:min(int64(len(p)), l.left)])
		l.left -= int64(n)
		return n, err
	}
	var b [1]byte
	n, err := l.r.Read(b[:])
	if n > 0 {
		l.over = true
		return 0, errFrameTooLong
	}
	return 0, err
}

// readFrame reads the frame's lines from br into c.
func readFrame(br *bufio.Reader, c Capture, o Options) (Capture, error) {
	header, full, err := readLine(br, MaxMuxLine)
	if err == nil && strings.HasPrefix(header, MuxMark) {
		c.Humans, c.PaneState = readMux(header, full)
		header, full, err = readLine(br, MaxHeader)
	}
	switch {
	case err != nil:
		return c, errors.New("capture frame: no header line (is the session there?)")
	case !full || len(header) > MaxHeader:
		return c, fmt.Errorf("capture frame: the header line passes %d bytes", MaxHeader)
	}
	c.Pane, c.Dir = splitHeader(header)
	// A local frame carries no status (they are read from StatusDir): a line
	// before its pane mark is the rest of a directory name that holds a
	// line break, one a repository can ship to forge frame lines.
	local, dirBroken := o.StatusDir != "", false
	var cur bytes.Buffer
	size := 0
	// A transcript or a Codex log is read only right after the header:
	// past it, a line is the status files', which may say anything.
	first, fgRead, titleRead := true, false, false
	codex := logBlocks{mark: CodexLogMark, end: CodexLogEnd, what: "Codex logs", one: "Codex log", max: MaxCodexLogs}
	qwen := logBlocks{mark: QwenChatMark, end: QwenChatEnd, what: "Qwen Code records", one: "Qwen Code record", max: MaxQwenChats}
	kinds := []*logBlocks{&codex, &qwen}
	for _, s := range o.Events {
		mark, end := eventsMarks(s.Log)
		kinds = append(kinds, &logBlocks{mark: mark, end: end, what: s.Log.Agent + " events logs", one: s.Log.Agent + " events log", max: MaxEventsLogs})
	}
	c.Foreground = probe.Foreground{Unknown: "the frame does not say the pane's processes"}
	for {
		line, full, err := readLine(br, MaxStatusFile)
		if err != nil {
			return c, errors.New("capture frame: no pane after the header")
		}
		if first && !titleRead && strings.HasPrefix(line, TitleMark+" ") {
			// Right after the header, before anything a status file or
			// a directory name could carry.
			titleRead = true
			c.Title = title(strings.TrimPrefix(line, TitleMark+" "))
			continue
		}
		if first && !local && line == ForegroundMark && !fgRead {
			fgRead = true
			// Right after the header only: past it a line may be a
			// status file's, which may say anything.
			if c.Foreground, err = readForegroundBlock(br); err != nil {
				return c, err
			}
			continue
		}
		if first && !local && (strings.HasPrefix(line, VitalsMark+" ") || strings.HasPrefix(line, VitalsCodexMark+" ")) {
			t, err := readTranscript(br, line)
			if err != nil {
				return c, err
			}
			if c.Transcript != nil {
				// The script sends one record at most: a host that sent
				// two is believed on neither.
				t = &Transcript{Err: errors.New("capture: the host sent two records of the agent")}
			}
			c.Transcript = t
			continue
		}
		if i := slices.IndexFunc(kinds, func(b *logBlocks) bool { return b.mark == line }); first && !local && i >= 0 {
			if err := kinds[i].read(br); err != nil {
				return c, err
			}
			continue
		}
		if first && !local && strings.HasPrefix(line, eventsMarkPrefix) {
			// The events log of an agent no description read here gives
			// (the rules file changed since the watcher started): read
			// past, so that no line of it is taken for a status file's.
			_, end, _ := strings.Cut(line, " ")
			unknown := logBlocks{end: eventsEndPrefix + end, what: "logs of an agent's events", one: "log of an agent's events"}
			if err := unknown.read(br); err != nil {
				return c, err
			}
			continue
		}
		first = false
		switch {
		case line == PaneMark:
			s, err := classify.ReadScreen(br)
			if err != nil {
				return c, fmt.Errorf("reading the pane: %v", err)
			}
			c.Screen = s
			// A directory name may hold the pane mark itself; a pane
			// that shows it costs no more than its directory.
			if dirBroken || local && showsLine(s, PaneMark) || strings.ContainsFunc(c.Dir, unicode.IsControl) {
				c.Dir = ""
			}
			if o.Foreground != nil {
				c.Foreground = *o.Foreground
			} else if local {
				procs := o.Procs
				if procs == nil {
					procs = Proc{}
				}
				c.Foreground = ReadForeground(procs, c.PaneState.PID)
			}
			c.CodexLogs, c.CodexLogsErr = codex.result()
			c.QwenChats, c.QwenChatsErr = qwen.result()
			for i, s := range o.Events {
				found := EventsFound{Log: s.Log}
				found.Tails, found.Err = kinds[2+i].result()
				if local {
					found.Tails = eventsTails(s, c.Dir, o.Now)
				}
				c.Events = append(c.Events, found)
			}
			if local {
				c.Statuses = statusFiles(o.StatusDir, c.Pane)
				c.CodexLogs = codexLogs(o.CodexHome, c.Dir, o.Now)
				c.QwenChats = qwenChats(o.QwenHome, c.Dir, o.Now)
			}
			return c, nil
		case local:
			dirBroken = true
			continue
		case line == StatusEnd:
			if cur.Len() > 0 {
				c.Statuses = append(c.Statuses, bytes.Clone(cur.Bytes()))
			}
			cur.Reset()
			continue
		}
		if !full || size+len(line) > MaxStatus || cur.Len()+len(line) > MaxStatusFile {
			continue // dropped: past a cap
		}
		size += len(line) + 1
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
}

// maxTitle caps a pane's title as kept.
const maxTitle = 256

// title is a pane's title as a frame keeps it: valid UTF-8, no control
// character, at most maxTitle bytes.
func title(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
	if len(s) > maxTitle {
		s = strings.ToValidUTF8(s[:maxTitle], "")
	}
	return s
}

// readTranscript reads a transcript's block, its mark line given: the
// base64 lines up to VitalsEnd, at most what VitalsTail bytes take. What
// does not decode, or is not the whole tail the mark line measured, is a
// transcript with Err set; only a block without its end fails the frame.
func readTranscript(br *bufio.Reader, mark string) (*Transcript, error) {
	t := &Transcript{}
	codex := strings.HasPrefix(mark, VitalsCodexMark+" ")
	f := strings.Fields(strings.TrimPrefix(strings.TrimPrefix(mark, VitalsMark+" "), VitalsCodexMark+" "))
	var enc []byte
	over := false
	for {
		line, full, err := readLine(br, 2*VitalsTail)
		if err != nil {
			return nil, errors.New("capture frame: a transcript without its end")
		}
		if line == VitalsEnd {
			break
		}
		if !full || len(enc)+len(line) > 2*VitalsTail {
			over = true
			continue
		}
		enc = append(enc, line...)
	}
	size, err := strconv.ParseInt(fieldOr(f, 0), 10, 64)
	switch {
	case codex && (len(f) != 2 || err != nil || size < 0):
		t.Err = errors.New("capture: the host's Codex log line is not \"size log\"")
		return t, nil
	case codex && !CodexLogName(f[1]):
		t.Err = errors.New("capture: the host's Codex log is not named as Codex names them (YYYY/MM/DD/rollout-<id>.jsonl)")
		return t, nil
	case !codex && (len(f) != 3 || err != nil || size < 0):
		t.Err = errors.New("capture: the host's transcript line is not \"size session folder\"")
		return t, nil
	case over:
		t.Err = fmt.Errorf("capture: the host sent more than %d bytes of transcript", VitalsTail)
		return t, nil
	}
	if codex {
		t.Log, t.Size = f[1], size
	} else {
		t.Session, t.Dir, t.Size = f[1], f[2], size
		if strings.ContainsFunc(t.Dir, notIDRune) {
			t.Dir = "-"
		}
	}
	tail, err := base64.StdEncoding.DecodeString(string(enc))
	switch want := min(size, VitalsTail); {
	case err != nil:
		t.Err = errors.New("capture: the host's transcript is not base64")
	case int64(len(tail)) != want:
		t.Err = fmt.Errorf("capture: the host sent %d of the transcript's last %d bytes", len(tail), want)
	default:
		t.Tail = tail
	}
	return t, nil
}

// logBlocks are the blocks of one kind of log a remote frame carried
// (Codex's session logs, Qwen Code's records, an agent's events logs),
// each between its mark and end lines: what of them is kept, and why none
// is. A host that sends more blocks than the script does, or one that does
// not read, is believed on none of them.
type logBlocks struct {
	mark, end string
	what, one string // "Codex logs" and "Codex log", as the errors name them
	max       int
	n         int
	kept      [][]byte
	bad       string
}

// read reads one block, its mark line read already: the base64 lines up
// to its end line, of at most MaxStatusFile bytes decoded. What passes that or does
// not decode is bad, and says why; past max blocks, or once one is bad, a
// block is only read past, nothing of it kept. Only a block without its
// end fails the frame: nothing after it could be told from the log.
func (b *logBlocks) read(br *bufio.Reader) error {
	b.n++
	keep := b.n <= b.max && b.bad == ""
	if !keep && b.bad == "" {
		b.bad = fmt.Sprintf("the host sent more than %d %s", b.max, b.what)
	}
	limit := base64.StdEncoding.EncodedLen(MaxStatusFile)
	var enc []byte
	bad := ""
	for {
		line, full, err := readLine(br, limit)
		if err != nil {
			return fmt.Errorf("capture frame: a %s without its end", b.one)
		}
		if line == b.end {
			break
		}
		switch {
		case !keep || bad != "":
		case !full || len(enc)+len(line) > limit:
			bad = fmt.Sprintf("the host sent more than %d bytes of a %s", MaxStatusFile, b.one)
		default:
			enc = append(enc, line...)
		}
	}
	if !keep {
		return nil
	}
	tail, err := base64.StdEncoding.DecodeString(string(enc))
	switch {
	case bad != "":
		b.bad = bad
	case err != nil:
		b.bad = "a " + b.one + " the host sent is not base64"
	case len(tail) > 0:
		b.kept = append(b.kept, tail)
	}
	return nil
}

// result is what is believed of the blocks: all that were kept, or none,
// with why.
func (b *logBlocks) result() ([][]byte, error) {
	if b.bad != "" {
		return nil, fmt.Errorf("capture: %s: its %s are taken as absent", b.bad, b.what)
	}
	return b.kept, nil
}

func notIDRune(r rune) bool {
	return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-')
}

// CodexLogName says rel is the path of a session log under Codex's
// sessions folder as Codex names them, YYYY/MM/DD/rollout-<id>.jsonl with
// <id> of letters, digits and dashes (at most 128): a name from a host,
// shown as it is, that can say nothing else.
func CodexLogName(rel string) bool {
	parts := strings.Split(rel, "/")
	if len(parts) != 4 || len(parts[0]) != 4 || len(parts[1]) != 2 || len(parts[2]) != 2 {
		return false
	}
	for _, p := range parts[:3] {
		if strings.ContainsFunc(p, func(r rune) bool { return r < '0' || r > '9' }) {
			return false
		}
	}
	id, ok := strings.CutPrefix(parts[3], "rollout-")
	id, ok2 := strings.CutSuffix(id, ".jsonl")
	return ok && ok2 && id != "" && len(id) <= 128 && !strings.ContainsFunc(id, notIDRune)
}

func fieldOr(f []string, i int) string {
	if i < len(f) {
		return f[i]
	}
	return ""
}

// splitHeader splits a frame header into the pane's coordinate and its
// working directory. tmux prints the tab between them as "_" to a client
// whose locale does not say UTF-8 (a service's, or an ssh login's that
// passes none); the coordinate, name:@N.%N, then ends where the pane id's
// digits do.
func splitHeader(h string) (pane, dir string) {
	if pane, dir, ok := strings.Cut(h, "\t"); ok {
		return pane, dir
	}
	for i := 0; ; {
		j := strings.Index(h[i:], ".%")
		if j < 0 {
			return h, ""
		}
		k := i + j + 2
		for k < len(h) && '0' <= h[k] && h[k] <= '9' {
			k++
		}
		if k > i+j+2 && k < len(h) && h[k] == '_' {
			return h[:k], h[k+1:]
		}
		i = k
	}
}

// showsLine says whether the screen holds a line that reads exactly text.
func showsLine(s *classify.Screen, text string) bool {
	for _, l := range s.Lines {
		if l.Text == text {
			return true
		}
	}
	return false
}

// readLine reads one line, without its line ending, keeping at most max
// bytes of it; full says it fit. Past max the rest of the line is read and
// dropped, a buffer at a time.
func readLine(br *bufio.Reader, max int) (line string, full bool, err error) {
	var b []byte
	full = true
	for {
		chunk, err := br.ReadSlice('\n')
		if len(b)+len(chunk) <= max+2 {
			b = append(b, chunk...)
		} else {
			full = false
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil && len(b) == 0 && full:
			return "", false, err
		case err != nil && err != io.EOF:
			return "", false, err
		case err == io.EOF && len(chunk) == 0 && len(b) == 0:
			return "", false, io.EOF
		}
		return strings.TrimRight(string(b), "\r\n"), full, nil
	}
}

// statusFiles reads the agent's status files in dir that name pane.
func statusFiles(dir, pane string) [][]byte {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	mark := []byte(statusMark(pane))
	var files [][]byte
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") || !e.Type().IsRegular() {
			continue
		}
		data, err := fsutil.ReadCapped(filepath.Join(dir, e.Name()), MaxStatusFile)
		if err == nil && bytes.Contains(data, mark) {
			files = append(files, data)
		}
	}
	return files
}

// Witness is the agent's freshest own status for the pane, of any kind of
// file, and what to say about it; nil when none counts.
func (c Capture) Witness(now time.Time) (*probe.Witness, string) {
	return c.WitnessOfKind(now, "")
}

// WitnessOfKind is Witness read from the files of kind only (probe's
// kinds; "" any): the word of the agent whose description names kind. A
// Qwen Code record in the directory of a Codex pane does not hide Codex's
// own log.
func (c Capture) WitnessOfKind(now time.Time, kind string) (*probe.Witness, string) {
	if c.StatusErr != nil {
		return nil, "unreadable (" + c.StatusErr.Error() + "): the screen decides alone"
	}
	statuses := c.Statuses
	var logs probe.Logs
	var errs []error
	if kind == "" || kind == probe.CodexLog {
		logs.Codex, errs = c.CodexLogs, append(errs, c.CodexLogsErr)
	}
	if kind == "" || kind == probe.QwenChat {
		logs.Qwen, errs = c.QwenChats, append(errs, c.QwenChatsErr)
	}
	n := len(logs.Codex) + len(logs.Qwen)
	for _, e := range c.Events {
		if kind == "" || kind == probe.EventsKind(e.Log.Key) {
			logs.Events, errs = append(logs.Events, probe.EventsTail{Log: e.Log, Tails: e.Tails}), append(errs, e.Err)
			n += len(e.Tails)
		}
	}
	if kind != "" && kind != probe.ClaudeStatus && kind != probe.CodexLog {
		statuses = nil // a record or a log of its own: no status file speaks for it
	}
	if len(statuses) == 0 && n == 0 {
		if err := errors.Join(errs...); err != nil {
			return nil, "none (" + strings.ReplaceAll(err.Error(), "\n", "; ") + ")"
		}
		return nil, "none"
	}
	w, err := probe.PaneWitness(statuses, logs, c.Pane, now)
	if err != nil {
		return nil, err.Error() + ": the screen decides alone"
	}
	return &w, fmt.Sprintf("says %s (written %s)", w.Status, w.Updated.UTC().Format(time.RFC3339))
}
