package digest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// TestKnownAnswers checks the sums FIPS 180-4's examples give.
func TestKnownAnswers(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	} {
		got := Sum256([]byte(c.in))
		if hex.EncodeToString(got[:]) != c.want {
			t.Errorf("Sum256(%q) = %x, want %s", c.in, got, c.want)
		}
	}
}

// TestAgreesWithCrypto checks every length around the block and padding
// boundaries, written whole and in uneven pieces, against crypto/sha256.
func TestAgreesWithCrypto(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(r.UintN(256))
	}
	for n := range len(data) {
		in := data[:n]
		want := sha256.Sum256(in)
		if got := Sum256(in); got != want {
			t.Fatalf("Sum256 of %d bytes = %x, want %x", n, got, want)
		}
		h := New()
		for rest := in; len(rest) > 0; {
			k := min(len(rest), 1+int(r.UintN(130)))
			h.Write(rest[:k])
			rest = rest[k:]
		}
		if got := h.Sum(nil); !bytes.Equal(got, want[:]) {
			t.Fatalf("New of %d bytes in pieces = %x, want %x", n, got, want)
		}
		// Sum leaves the hash going on.
		h.Write([]byte("more"))
		again := sha256.Sum256(append(append([]byte(nil), in...), "more"...))
		if got := h.Sum(nil); !bytes.Equal(got, again[:]) {
			t.Fatalf("writing after Sum: %x, want %x", got, again)
		}
	}
}

func FuzzAgreesWithCrypto(f *testing.F) {
	f.Add([]byte("omega-monitor"))
	f.Fuzz(func(t *testing.T, in []byte) {
		if got, want := Sum256(in), sha256.Sum256(in); got != want {
			t.Fatalf("Sum256(%q) = %x, want %x", in, got, want)
		}
	})
}
