package statedir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNonce(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		n, err := NewNonce()
		if err != nil {
			t.Fatal(err)
		}
		if !IsNonce(n) || seen[n] {
			t.Fatalf("nonce %q: shape %v, seen %v", n, IsNonce(n), seen[n])
		}
		seen[n] = true
	}
	for _, bad := range []string{"", "../../etc/passwd", "0123456789abcdef0123456789abcdeF", "0123456789abcdef0123456789abcde", "0123456789abcdef0123456789abcdef0", "0123456789abcdef/123456789abcdef"} {
		if IsNonce(bad) {
			t.Errorf("IsNonce(%q) = true", bad)
		}
	}
}

func TestOffersRoundTrip(t *testing.T) {
	t.Parallel()
	d := Dir(t.TempDir())
	got, err := d.ReadOffers()
	if err != nil || len(got.Offers) != 0 {
		t.Fatalf("no offers: %+v, %v", got, err)
	}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	want := OffersRecord{Key: "k1", Pane: "s:@1.%2", At: at, Offers: []Offer{
		{Nonce: "0123456789abcdef0123456789abcdef", Pos: 1, Label: "Yes", Expires: at.Add(OfferLife)},
		{Nonce: "fedcba9876543210fedcba9876543210", Pos: 2, Label: "Yes, and don't ask again", Widens: true, Expires: at.Add(OfferLife)},
	}}
	if err := d.WriteOffers(want); err != nil {
		t.Fatal(err)
	}
	if got, err = d.ReadOffers(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("offers (-want +got):\n%s", diff)
	}
	if fi, err := os.Stat(d.Path(Answers)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("answers directory: %v %v", fi.Mode(), err)
	}
}

// TestRequestIsTakenOnce: of many taps at once on one button, exactly one
// request is written; the others find it taken.
func TestRequestIsTakenOnce(t *testing.T) {
	t.Parallel()
	d := Dir(t.TempDir())
	nonce := "0123456789abcdef0123456789abcdef"
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, taken := 0, 0
	for i := range 20 {
		wg.Go(func() {
			err := d.WriteRequest(AnswerRequest{Nonce: nonce, FromID: int64(i), At: time.Now()})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, fs.ErrExist):
				taken++
			default:
				t.Errorf("request: %v", err)
			}
		})
	}
	wg.Wait()
	if won != 1 || taken != 19 {
		t.Errorf("won %d, taken %d; want 1 and 19", won, taken)
	}
	rs, err := d.Requests()
	if err != nil || len(rs) != 1 || rs[0].Nonce != nonce {
		t.Fatalf("requests: %+v, %v", rs, err)
	}
	leftovers, _ := filepath.Glob(d.Path(filepath.Join(Answers, ".request-*")))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %q", leftovers)
	}
}

// TestRequestsRefuseWhatIsNotOne: a request that names no nonce never
// names a file; a planted file that is not a request is not one; a
// corrupt request is returned bare, to be refused.
func TestRequestsRefuseWhatIsNotOne(t *testing.T) {
	t.Parallel()
	d := Dir(t.TempDir())
	for _, bad := range []string{"../../state", "", "x.request"} {
		if err := d.WriteRequest(AnswerRequest{Nonce: bad}); err == nil {
			t.Errorf("request for %q written", bad)
		}
	}
	if err := d.WriteRequest(AnswerRequest{Nonce: "0123456789abcdef0123456789abcdef", FromID: 7, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	dir := d.Path(Answers)
	corrupt := "fedcba9876543210fedcba9876543210"
	for name, data := range map[string]string{
		"notes.request":              "{}",
		corrupt + RequestSuffix:      "{not json",
		"ffff" + RequestSuffix:       "{}",
		corrupt[:31] + "g.request":   "{}",
		"0123456789abcdef.something": "{}",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := d.Requests()
	if err != nil {
		t.Fatal(err)
	}
	var nonces []string
	for _, r := range rs {
		nonces = append(nonces, r.Nonce)
		if r.Nonce == corrupt && r.FromID != 0 {
			t.Errorf("a corrupt request kept fields: %+v", r)
		}
	}
	want := []string{corrupt, "0123456789abcdef0123456789abcdef"} // the corrupt one has no time: first
	if diff := cmp.Diff(want, nonces); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestResultAndSettle(t *testing.T) {
	t.Parallel()
	d := Dir(t.TempDir())
	nonce := "0123456789abcdef0123456789abcdef"
	if _, err := d.ReadResult(nonce); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no result yet: %v", err)
	}
	if err := d.WriteRequest(AnswerRequest{Nonce: nonce}); err != nil {
		t.Fatal(err)
	}
	want := AnswerResult{Nonce: nonce, Outcome: AnswerRefused, Why: "the question is gone", At: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	if err := d.WriteResult(want); err != nil {
		t.Fatal(err)
	}
	got, err := d.ReadResult(nonce)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	d.Settle(nonce)
	if rs, _ := d.Requests(); len(rs) != 0 {
		t.Errorf("settled, still %+v", rs)
	}
	if _, err := d.ReadResult(nonce); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("settled result: %v", err)
	}
}

// TestAnswersRefuseAPlantedDirectory: an answers directory another user
// could write is refused, not written into.
func TestAnswersRefuseAPlantedDirectory(t *testing.T) {
	t.Parallel()
	d := Dir(t.TempDir())
	if err := os.Mkdir(d.Path(Answers), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d.Path(Answers), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteRequest(AnswerRequest{Nonce: "0123456789abcdef0123456789abcdef"}); err == nil {
		t.Error("a request was written into a world-writable directory")
	}
}
