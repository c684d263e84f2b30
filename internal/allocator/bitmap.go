// Package allocator hands out what the API server assigns to services at
// write time: cluster IPs from the service CIDR and node ports from the
// node port range. The pure logic is a bitmap over a range (this file);
// Range keeps one bitmap in etcd under optimistic concurrency, so that any
// number of API servers sharing an etcd never hand out the same value;
// Services applies upstream's rules for which service gets what; Repair
// frees what a crash left allocated without a service.
package allocator

import (
	"errors"
	"math/bits"
	"math/rand/v2"
)

// Errors of the bitmap, worded as upstream's allocators word them because
// they reach users inside 422 messages.
var (
	ErrFull      = errors.New("range is full")
	ErrAllocated = errors.New("already allocated")
)

// Bitmap records which offsets of a range [0, size) are taken.
//
// Dynamic allocation avoids the first Static offsets while others are
// free, as upstream does since 1.27 (IPs) and 1.29 (ports): users who ask
// for a specific value pick it from the low end, and are then unlikely to
// find it taken by an automatic allocation.
type Bitmap struct {
	size   int
	static int
	words  []uint64
	count  int
}

// NewBitmap returns an empty bitmap of size offsets with a static band of
// the first static offsets.
func NewBitmap(size, static int) *Bitmap {
	if static > size {
		static = size
	}
	return &Bitmap{size: size, static: static, words: make([]uint64, (size+63)/64)}
}

// Size is the number of offsets in the range.
func (b *Bitmap) Size() int { return b.size }

// Used is the number of taken offsets.
func (b *Bitmap) Used() int { return b.count }

// Free is the number of free offsets.
func (b *Bitmap) Free() int { return b.size - b.count }

// Has reports whether off is taken; offsets outside the range are not.
func (b *Bitmap) Has(off int) bool {
	if off < 0 || off >= b.size {
		return false
	}
	return b.words[off/64]&(1<<(off%64)) != 0
}

// Allocate takes a specific offset.
func (b *Bitmap) Allocate(off int) error {
	if off < 0 || off >= b.size {
		return errors.New("offset out of range")
	}
	if b.Has(off) {
		return ErrAllocated
	}
	b.words[off/64] |= 1 << (off % 64)
	b.count++
	return nil
}

// Release frees off; freeing a free offset does nothing.
func (b *Bitmap) Release(off int) {
	if !b.Has(off) {
		return
	}
	b.words[off/64] &^= 1 << (off % 64)
	b.count--
}

// AllocateNext takes a free offset: from a random starting point, the
// first free one above the static band, else the first free one in it.
// Random starts spread allocations, so a value just released is unlikely
// to be handed out again at once (clients may still hold it).
func (b *Bitmap) AllocateNext(rnd *rand.Rand) (int, error) {
	if b.count >= b.size {
		return 0, ErrFull
	}
	off, ok := b.scan(b.static, b.size, rnd)
	if !ok {
		off, ok = b.scan(0, b.static, rnd)
	}
	if !ok {
		return 0, ErrFull
	}
	b.words[off/64] |= 1 << (off % 64)
	b.count++
	return off, nil
}

// scan finds a free offset in [lo, hi), starting at a random one and
// wrapping around.
func (b *Bitmap) scan(lo, hi int, rnd *rand.Rand) (int, bool) {
	n := hi - lo
	if n <= 0 {
		return 0, false
	}
	start := lo
	if rnd != nil {
		start = lo + rnd.IntN(n)
	}
	if off, ok := b.firstFree(start, hi); ok {
		return off, true
	}
	return b.firstFree(lo, start)
}

// firstFree is the lowest free offset in [from, to), a word at a time.
func (b *Bitmap) firstFree(from, to int) (int, bool) {
	for off := from; off < to; {
		w := ^b.words[off/64] >> (off % 64)
		if w != 0 {
			free := off + bits.TrailingZeros64(w)
			if free < to {
				return free, true
			}
			return 0, false
		}
		off = (off/64 + 1) * 64
	}
	return 0, false
}

// Clone returns an independent copy.
func (b *Bitmap) Clone() *Bitmap {
	c := *b
	c.words = append([]uint64(nil), b.words...)
	return &c
}

// Offsets lists the taken offsets in order.
func (b *Bitmap) Offsets() []int {
	out := make([]int, 0, b.count)
	for i, w := range b.words {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			out = append(out, i*64+t)
			w &= w - 1
		}
	}
	return out
}

// Bytes encodes the bitmap as upstream's RangeAllocation.data does: the
// big-endian bytes of the integer whose bit i is offset i, without
// leading zero bytes.
func (b *Bitmap) Bytes() []byte {
	n := (b.size + 7) / 8
	out := make([]byte, n)
	for _, off := range b.Offsets() {
		out[n-1-off/8] |= 1 << (off % 8)
	}
	i := 0
	for i < len(out) && out[i] == 0 {
		i++
	}
	return out[i:]
}

// SetBytes loads what Bytes wrote. Bits beyond the range (a range that
// shrank) are dropped; the caller's repair finds the services holding them.
func (b *Bitmap) SetBytes(data []byte) {
	clear(b.words)
	b.count = 0
	n := len(data)
	for i, byt := range data {
		for bit := 0; bit < 8; bit++ {
			if byt&(1<<bit) == 0 {
				continue
			}
			off := (n-1-i)*8 + bit
			if off < b.size {
				b.words[off/64] |= 1 << (off % 64)
				b.count++
			}
		}
	}
}
