// Package digest is SHA-256, as FIPS 180-4 defines it, for the names and
// keys omega-monitor derives from text: a watcher's fingerprint, an alert's
// key, a question's frame, an ssh control socket's path, an audit's snapshot
// of the files it must not change.
//
// It is not for security; nothing here is secret. It exists because linking
// crypto/sha256 links Go's FIPS 140 module, whose package initialisation
// costs every start of the binary about 2 ms of CPU (measured with perf stat
// against the same binary without it), and the poll loop starts the binary
// once a poll for every watched agent. The sums are the standard ones
// (digest_test.go checks them against crypto/sha256), so every name and key
// recorded before stays the same.
package digest

import (
	"encoding/binary"
	"hash"
	"math/bits"
)

// Size is the length of a sum in bytes.
const Size = 32

// BlockSize is the length of the blocks the sum is computed over.
const BlockSize = 64

// The initial hash value: the first 32 bits of the fractional parts of the
// square roots of the first eight primes (FIPS 180-4, 5.3.3).
var initial = [8]uint32{
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
}

// The round constants: the first 32 bits of the fractional parts of the
// cube roots of the first sixty-four primes (FIPS 180-4, 4.2.2).
var rounds = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

// Sum256 returns the SHA-256 sum of data.
func Sum256(data []byte) [Size]byte {
	var d state
	d.Reset()
	d.Write(data)
	return d.sum()
}

// New returns a hash.Hash computing the SHA-256 sum.
func New() hash.Hash {
	d := new(state)
	d.Reset()
	return d
}

// state is a sum under way: the hash value so far, the bytes of a block not
// yet complete, and the length written.
type state struct {
	h      [8]uint32
	block  [BlockSize]byte
	filled int
	length uint64
}

func (d *state) Reset() {
	d.h = initial
	d.filled = 0
	d.length = 0
}

func (d *state) Size() int      { return Size }
func (d *state) BlockSize() int { return BlockSize }

func (d *state) Write(p []byte) (int, error) {
	n := len(p)
	d.length += uint64(n)
	if d.filled > 0 {
		c := copy(d.block[d.filled:], p)
		d.filled += c
		p = p[c:]
		if d.filled < BlockSize {
			return n, nil
		}
		d.compress(d.block[:])
		d.filled = 0
	}
	for len(p) >= BlockSize {
		d.compress(p[:BlockSize])
		p = p[BlockSize:]
	}
	d.filled = copy(d.block[:], p)
	return n, nil
}

// Sum appends the sum of what was written so far to b; the hash goes on.
func (d *state) Sum(b []byte) []byte {
	c := *d
	s := c.sum()
	return append(b, s[:]...)
}

// sum pads the message (FIPS 180-4, 5.1.1) and returns the final hash value.
func (d *state) sum() [Size]byte {
	bitLength := d.length * 8
	var pad [BlockSize + 8]byte
	pad[0] = 0x80
	// The padding ends the message 8 bytes short of a block boundary, where
	// the length goes.
	n := (BlockSize + 56 - int(d.length%BlockSize)) % BlockSize
	if n == 0 {
		n = BlockSize
	}
	binary.BigEndian.PutUint64(pad[n:], bitLength)
	d.Write(pad[:n+8])
	var out [Size]byte
	for i, v := range d.h {
		binary.BigEndian.PutUint32(out[4*i:], v)
	}
	return out
}

// compress folds one 64-byte block into the hash value (FIPS 180-4, 6.2.2).
func (d *state) compress(block []byte) {
	var w [64]uint32
	for i := range 16 {
		w[i] = binary.BigEndian.Uint32(block[4*i:])
	}
	for i := 16; i < 64; i++ {
		s0 := bits.RotateLeft32(w[i-15], -7) ^ bits.RotateLeft32(w[i-15], -18) ^ w[i-15]>>3
		s1 := bits.RotateLeft32(w[i-2], -17) ^ bits.RotateLeft32(w[i-2], -19) ^ w[i-2]>>10
		w[i] = w[i-16] + s0 + w[i-7] + s1
	}
	a, b, c, e, f, g, h, dd := d.h[0], d.h[1], d.h[2], d.h[4], d.h[5], d.h[6], d.h[7], d.h[3]
	for i := range 64 {
		s1 := bits.RotateLeft32(e, -6) ^ bits.RotateLeft32(e, -11) ^ bits.RotateLeft32(e, -25)
		choose := (e & f) ^ (^e & g)
		t1 := h + s1 + choose + rounds[i] + w[i]
		s0 := bits.RotateLeft32(a, -2) ^ bits.RotateLeft32(a, -13) ^ bits.RotateLeft32(a, -22)
		majority := (a & b) ^ (a & c) ^ (b & c)
		t2 := s0 + majority
		h, g, f, e = g, f, e, dd+t1
		dd, c, b, a = c, b, a, t1+t2
	}
	d.h[0] += a
	d.h[1] += b
	d.h[2] += c
	d.h[3] += dd
	d.h[4] += e
	d.h[5] += f
	d.h[6] += g
	d.h[7] += h
}
