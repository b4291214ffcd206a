package statedir

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Answers from the operator's chat travel through a watcher's directory,
// in Answers/, so that the watcher stays the only thing that types:
//
//   - The poll that relays a question it can answer writes its offers
//     (OffersRecord): one random nonce per option, the callback data of the
//     option's button, bound to the watcher, the dialog's key, the option's
//     position and an expiry. A new question replaces the offers; the ones
//     it replaced are void.
//   - The relay receiver, for a tap by an allowed user on a button whose
//     nonce it finds here, writes a request (AnswerRequest) named for the
//     nonce, created once: a second tap on the same button finds it taken.
//     Then it wakes the loop.
//   - The next poll takes the request under the state lock, and accepts it
//     only if the offer is live (not expired, not spent), its dialog is the
//     one on screen, and the option exists there; it spends the offer
//     either way, and hands the loop an answer action, or writes the result
//     (AnswerResult) refused, with the reason.
//   - The loop types the answer with the checks of a nudge; its ack writes
//     the result typed or refused. The receiver reports the result in the
//     chat and removes the request and the result.
const (
	Answers = "answers"     // the directory of the exchange
	Offers  = "offers.json" // in Answers: OffersRecord
)

// The suffixes of a request and of its result in Answers, after the nonce.
const (
	RequestSuffix = ".request"
	ResultSuffix  = ".result"
)

// OfferLife is how long a button can be answered after it was relayed.
const OfferLife = 10 * time.Minute

// An Offer is one option of a relayed question, as a button offers it.
type Offer struct {
	// Nonce is the button's callback data: 128 random bits in hex. It
	// names nothing but itself.
	Nonce string `json:"nonce"`
	// Pos is the option's position in the menu, from 1; Label its text
	// as the alert relayed it.
	Pos   int    `json:"pos"`
	Label string `json:"label"`
	// Widens says the option widens what the agent may do without
	// asking: it takes a second tap to confirm.
	Widens bool `json:"widens,omitempty"`
	// Esc says the button is the dialog's Esc (its hint line offers it;
	// Label says what it does there): Pos is 0, and the key is Esc.
	Esc bool `json:"esc,omitempty"`
	// FreeText says the option takes the operator's own words: a
	// reply to the question's message, typed into the option's field
	// (package answer's Field). Its button, if any, only says so.
	FreeText bool      `json:"free_text,omitempty"`
	Expires  time.Time `json:"expires"`
	// Spent says a request for it was taken: it is never typed again.
	Spent bool `json:"spent,omitempty"`
}

// OffersRecord is the offers of the question last relayed, each bound to
// its dialog: an answer is typed only into a dialog with Key (package
// answer's), in the pane Pane it was asked in.
type OffersRecord struct {
	Key  string `json:"key"`
	Pane string `json:"pane,omitempty"`
	// Agent is the agent's process the question was asked by, as the
	// poll found it in the pane's foreground process group: an answer's
	// keys go only while the group still holds it.
	Agent  *AgentProcess `json:"agent,omitempty"`
	At     time.Time     `json:"at"`
	Offers []Offer       `json:"offers"`
	// ChatID and MessageID are the message whose buttons these are, as
	// the funnel said when it sent it (zero when it did not say): the
	// one a RetireRecord names when the question leaves the screen.
	ChatID    int64 `json:"chat_id,omitempty"`
	MessageID int   `json:"message_id,omitempty"`
	// Gone is when a poll first found the question off the screen; a
	// look a moment later that still does not find it retires the
	// offers (retire.go). Zero while the question shows.
	Gone time.Time `json:"gone,omitzero"`
}

// An AgentProcess is an agent's process: its id, its start (which tells it
// apart from a later process with the same id) and how the line names it.
type AgentProcess struct {
	PID   int    `json:"pid"`
	Start string `json:"start"`
	Name  string `json:"name"`
}

// An AnswerRequest is a tap on a button, as the relay receiver got it.
type AnswerRequest struct {
	Nonce string `json:"nonce"`
	// FromID and From are the user who tapped: their Telegram id and
	// name, as the update said.
	FromID int64  `json:"from_id"`
	From   string `json:"from,omitempty"`
	// ChatID and MessageID are the message whose button was tapped: the
	// receiver edits it with the result.
	ChatID    int64     `json:"chat_id"`
	MessageID int       `json:"message_id"`
	At        time.Time `json:"at"`
	// Confirmed says this is the second tap an option that widens
	// what the agent may do takes.
	Confirmed bool `json:"confirmed,omitempty"`
	// Text is the operator's own words for a free-text option (an
	// Offer with FreeText), from a reply to the question's message;
	// MessageID is then the question's message, which the reply answered.
	Text string `json:"text,omitempty"`
}

// The outcomes of a request.
const (
	AnswerTyped   = "typed"   // the answer was typed into its dialog
	AnswerRefused = "refused" // nothing was typed; Why says why
	AnswerConfirm = "confirm" // a widening option: ask for a second tap
)

// An AnswerResult is what became of a request.
type AnswerResult struct {
	Nonce   string `json:"nonce"`
	Outcome string `json:"outcome"`
	Why     string `json:"why,omitempty"`
	Label   string `json:"label,omitempty"`
	// Note says more of a typed answer: what the screen showed after it
	// ("typed; the agent asked again: see the next message"). Keys says,
	// for a refused answer, which keys of it reached the terminal before
	// it stopped (none: empty).
	Note string    `json:"note,omitempty"`
	Keys []string  `json:"keys,omitempty"`
	At   time.Time `json:"at"`
}

// NewNonce returns 128 random bits in hex, from the kernel's generator.
// It reads /dev/urandom rather than linking crypto/rand, whose package
// initialisation every start of the binary would pay for.
func NewNonce() (string, error) {
	f, err := os.Open("/dev/urandom")
	if err != nil {
		return "", errorf("nonce: %w", err)
	}
	defer f.Close()
	var b [16]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return "", errorf("nonce: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// IsNonce says whether s has a nonce's shape: 32 lower-case hex digits.
// Anything else from a chat is refused before it names a file.
func IsNonce(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// answersDir is d's Answers directory, made private if it is missing.
func (d Dir) answersDir() (string, error) {
	dir := d.Path(Answers)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", errorf("%w", err)
	}
	if err := CheckPrivate(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// WriteOffers replaces the offers of d with r.
func (d Dir) WriteOffers(r OffersRecord) error {
	if _, err := d.answersDir(); err != nil {
		return err
	}
	return d.WriteRecord(filepath.Join(Answers, Offers), r)
}

// ReadOffers reads d's offers; none is an empty record.
func (d Dir) ReadOffers() (OffersRecord, error) {
	var r OffersRecord
	err := d.ReadRecord(filepath.Join(Answers, Offers), &r)
	if errors.Is(err, fs.ErrNotExist) {
		return OffersRecord{}, nil
	}
	return r, err
}

// WriteRequest writes r as the request of its nonce, once: a request
// already there (a second tap, two taps at once) is an error that is
// fs.ErrExist, and the first stands.
func (d Dir) WriteRequest(r AnswerRequest) error {
	if !IsNonce(r.Nonce) {
		return errorf("%q is not a nonce", r.Nonce)
	}
	dir, err := d.answersDir()
	if err != nil {
		return err
	}
	return createOnce(filepath.Join(dir, r.Nonce+RequestSuffix), r)
}

// Requests returns the requests waiting in d, oldest first by their time.
// A request that cannot be read is returned with only its nonce, to be
// refused as such.
func (d Dir) Requests() ([]AnswerRequest, error) {
	entries, err := os.ReadDir(d.Path(Answers))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, errorf("%w", err)
	}
	var out []AnswerRequest
	for _, e := range entries {
		nonce, ok := strings.CutSuffix(e.Name(), RequestSuffix)
		if !ok || !IsNonce(nonce) || !e.Type().IsRegular() {
			continue
		}
		var r AnswerRequest
		if err := d.ReadRecord(filepath.Join(Answers, e.Name()), &r); err != nil || r.Nonce != nonce {
			r = AnswerRequest{Nonce: nonce}
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b AnswerRequest) int { return a.At.Compare(b.At) })
	return out, nil
}

// WriteResult writes the result of a request; the receiver reads it.
func (d Dir) WriteResult(r AnswerResult) error {
	return d.writeNonceRecord(r.Nonce, ResultSuffix, r)
}

// ReadResult reads the result of the request of nonce; none yet is an
// error that is fs.ErrNotExist.
func (d Dir) ReadResult(nonce string) (AnswerResult, error) {
	var r AnswerResult
	err := d.readNonceRecord(nonce, ResultSuffix, &r)
	return r, err
}

// writeNonceRecord writes v as the record of nonce with suffix in the
// answers directory, which it makes the user's alone.
func (d Dir) writeNonceRecord(nonce, suffix string, v any) error {
	if !IsNonce(nonce) {
		return errorf("%q is not a nonce", nonce)
	}
	if _, err := d.answersDir(); err != nil {
		return err
	}
	return d.WriteRecord(filepath.Join(Answers, nonce+suffix), v)
}

// readNonceRecord reads the record of nonce with suffix into v; none is
// an error that is fs.ErrNotExist.
func (d Dir) readNonceRecord(nonce, suffix string, v any) error {
	if !IsNonce(nonce) {
		return errorf("%q is not a nonce", nonce)
	}
	return d.ReadRecord(filepath.Join(Answers, nonce+suffix), v)
}

// Take removes the request of nonce, which a poll has taken: it is never
// taken again; its result, once there is one, stays for the receiver.
func (d Dir) Take(nonce string) {
	if IsNonce(nonce) {
		os.Remove(d.Path(filepath.Join(Answers, nonce+RequestSuffix)))
	}
}

// Settle removes the request of nonce and its result: the receiver has
// reported it.
func (d Dir) Settle(nonce string) {
	if !IsNonce(nonce) {
		return
	}
	os.Remove(d.Path(filepath.Join(Answers, nonce+RequestSuffix)))
	os.Remove(d.Path(filepath.Join(Answers, nonce+ResultSuffix)))
}

// createOnce writes v as JSON to path, which must not exist: written whole
// under a temporary name, then linked into place, which fails when the
// name is taken.
func createOnce(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return errorf("%w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".request-*")
	if err != nil {
		return errorf("%w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return errorf("%w", err)
	}
	if err := tmp.Close(); err != nil {
		return errorf("%w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		return errorf("%w", err)
	}
	return nil
}

// ConfirmSuffix names, in Answers, the record of a first tap on an option
// that widens what the agent may do (Offer.Widens): the receiver writes it
// when it asks for the second tap, and the poll types a confirmed answer
// only when it finds it, from the same user, written before the request.
// A client that sends a confirming tap's data without the first tap (a
// modified one can send any data) finds none.
const ConfirmSuffix = ".confirm"

// A ConfirmAsked is a first tap on a widening option: who tapped, when,
// and on which message.
type ConfirmAsked struct {
	Nonce     string    `json:"nonce"`
	FromID    int64     `json:"from_id"`
	ChatID    int64     `json:"chat_id"`
	MessageID int       `json:"message_id"`
	At        time.Time `json:"at"`
}

// WriteConfirmAsked records c, replacing an earlier first tap on the same
// button.
func (d Dir) WriteConfirmAsked(c ConfirmAsked) error {
	return d.writeNonceRecord(c.Nonce, ConfirmSuffix, c)
}

// ReadConfirmAsked reads the first tap on the button nonce; none is an
// error that is fs.ErrNotExist.
func (d Dir) ReadConfirmAsked(nonce string) (ConfirmAsked, error) {
	var c ConfirmAsked
	err := d.readNonceRecord(nonce, ConfirmSuffix, &c)
	if err == nil && c.Nonce != nonce {
		return ConfirmAsked{}, errorf("the confirmation record of %s names another button", nonce[:8])
	}
	return c, err
}
