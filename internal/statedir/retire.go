package statedir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// When the question whose options a message carries as buttons leaves the
// screen, its offers are retired: the poll removes them (no nonce of them
// is accepted from then on) and, when the funnel said which message it
// sent them under, leaves a RetireRecord in Answers, named for the first
// offer's nonce. The relay receiver, which runs long, picks the records
// up, removes the message's buttons, appends a line saying what became of
// the question, and removes the record. A record waits while no receiver
// runs; one older than RetireLife is dropped unapplied.
//
// The receiver reads a record as hostile input: only a regular file of
// this user's, mode 0600, small, whose JSON has exactly these fields, with
// ids of the right shape and a reason it knows, is taken; and nothing in
// it but the ids and the reason reaches the chat (the line is the
// receiver's own).

// RetireSuffix names a retire record in Answers, after the nonce.
const RetireSuffix = ".retire"

const (
	// MaxRetires is how many retire records a watcher keeps waiting;
	// past it the oldest are dropped: with no receiver running, a pane
	// whose questions come and go must not fill its directory.
	MaxRetires = 32
	// RetireLife is how long a record waits for a receiver: past it,
	// the buttons it would remove have long been refused anyway (an
	// offer lives OfferLife), and an edit so late would only puzzle.
	RetireLife = 24 * time.Hour
	// maxRetireSize is the largest record read: one is about 150 bytes.
	maxRetireSize = 4 << 10
)

// The reasons a question's offers are retired, as the poll saw it.
const (
	// RetireGone: the question left the screen, and nothing answered
	// it from the chat.
	RetireGone = "gone"
	// RetireAnswered: the question left the screen and the agent went
	// on working: it was answered at the terminal.
	RetireAnswered = "answered"
	// RetireReplaced: another question took its place.
	RetireReplaced = "replaced"
	// RetireAgain: the same question is relayed again, in a newer
	// message with buttons of its own.
	RetireAgain = "again"
)

// retireReasons are the reasons a record may give.
var retireReasons = []string{RetireGone, RetireAnswered, RetireReplaced, RetireAgain}

// A RetireRecord is the message whose buttons are to be removed, and why.
type RetireRecord struct {
	Nonce     string    `json:"nonce"`
	ChatID    int64     `json:"chat_id"`
	MessageID int       `json:"message_id"`
	Reason    string    `json:"reason"`
	At        time.Time `json:"at"`
}

// check says what is wrong with r's fields, or nil.
func (r RetireRecord) check() error {
	switch {
	case !IsNonce(r.Nonce):
		return errors.New("no nonce")
	case r.ChatID == 0:
		return errors.New("no chat id")
	case r.MessageID <= 0:
		return errors.New("no message id")
	case !slices.Contains(retireReasons, r.Reason):
		return fmt.Errorf("an unknown reason %q", r.Reason)
	case r.At.IsZero():
		return errors.New("no time")
	}
	return nil
}

// WriteRetire leaves r for the receiver, and drops the records past
// MaxRetires, oldest first, and those older than RetireLife.
func (d Dir) WriteRetire(r RetireRecord) error {
	if err := r.check(); err != nil {
		return errorf("retire record: %w", err)
	}
	if err := d.writeNonceRecord(r.Nonce, RetireSuffix, r); err != nil {
		return err
	}
	d.capRetires(d.Path(Answers), r.At)
	return nil
}

// capRetires drops the records in dir past MaxRetires and RetireLife, by
// their files' times: what is dropped is only a message edit not made.
func (d Dir) capRetires(dir string, now time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type rec struct {
		name string
		at   time.Time
	}
	var recs []rec
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), RetireSuffix) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		if now.Sub(fi.ModTime()) > RetireLife {
			os.Remove(filepath.Join(dir, e.Name()))
			continue
		}
		recs = append(recs, rec{e.Name(), fi.ModTime()})
	}
	slices.SortStableFunc(recs, func(a, b rec) int { return a.at.Compare(b.at) })
	for len(recs) > MaxRetires {
		os.Remove(filepath.Join(dir, recs[0].name))
		recs = recs[1:]
	}
}

// A RefusedRetire is a file in Answers named as a retire record that is
// not taken as one, and why; the receiver drops it.
type RefusedRetire struct {
	Name string
	Why  string
}

// Retires returns the retire records waiting in d, oldest first, and the
// files named as records that are refused: not a regular file of this
// user's, mode 0600 at most (a link, another user's, one open to others),
// too large, not exactly a record's JSON, a name that is not its nonce's,
// ids or a reason out of shape, older than RetireLife, or from the future.
func (d Dir) Retires(now time.Time) ([]RetireRecord, []RefusedRetire) {
	dir := d.Path(Answers)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	var out []RetireRecord
	var refused []RefusedRetire
	for _, e := range entries {
		nonce, ok := strings.CutSuffix(e.Name(), RetireSuffix)
		if !ok {
			continue
		}
		r, err := readRetire(filepath.Join(dir, e.Name()), nonce, now)
		if err != nil {
			refused = append(refused, RefusedRetire{Name: e.Name(), Why: err.Error()})
			continue
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b RetireRecord) int { return a.At.Compare(b.At) })
	return out, refused
}

// readRetire reads the record at path, named for nonce, checking the file
// it opened, never through a link.
func readRetire(path, nonce string, now time.Time) (RetireRecord, error) {
	var r RetireRecord
	if !IsNonce(nonce) {
		return r, errors.New("its name is not a nonce's")
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return r, errors.New("a symbolic link")
		}
		return r, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return r, err
	}
	switch {
	case !fi.Mode().IsRegular():
		return r, errors.New("not a regular file")
	case fi.Mode().Perm()&0o077 != 0:
		return r, fmt.Errorf("mode %#o, open to others", fi.Mode().Perm())
	case fi.Size() > maxRetireSize:
		return r, fmt.Errorf("larger than %d bytes", maxRetireSize)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return r, fmt.Errorf("owned by uid %d, not by you", st.Uid)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRetireSize+1))
	if err != nil {
		return r, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return RetireRecord{}, errors.New("not a retire record's JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return RetireRecord{}, errors.New("more than one record")
	}
	if err := r.check(); err != nil {
		return RetireRecord{}, err
	}
	switch {
	case r.Nonce != nonce:
		return RetireRecord{}, errors.New("its name is not its nonce")
	case now.Sub(r.At) > RetireLife:
		return RetireRecord{}, fmt.Errorf("older than %v: expired", RetireLife)
	case r.At.Sub(now) > time.Minute:
		return RetireRecord{}, errors.New("from the future")
	}
	return r, nil
}

// DropRetire removes the file name (a retire record's, as Retires named
// it) from d's Answers: applied, or refused.
func (d Dir) DropRetire(name string) {
	if strings.HasSuffix(name, RetireSuffix) && !strings.ContainsAny(name, `/\`) && name != RetireSuffix {
		os.Remove(filepath.Join(d.Path(Answers), name))
	}
}

// DropOffers removes d's offers: none of their nonces is accepted again.
func (d Dir) DropOffers() error {
	err := os.Remove(d.Path(filepath.Join(Answers, Offers)))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errorf("%w", err)
	}
	return nil
}
