package allocator

import (
	"errors"
	"math/rand/v2"
	"net/netip"
	"testing"
)

func TestBitmap(t *testing.T) {
	tests := []struct {
		name         string
		size, static int
		take         []int // specific allocations before AllocateNext
		next         int   // AllocateNext calls
		wantErr      error // of the last AllocateNext
		wantUsed     int
		wantInStatic int // how many of the next ones landed in the static band
	}{
		{name: "empty range fills completely", size: 70, static: 0, next: 70, wantUsed: 70},
		{name: "full range", size: 10, static: 0, next: 11, wantErr: ErrFull, wantUsed: 10},
		{name: "upper band first", size: 100, static: 20, next: 80, wantUsed: 80, wantInStatic: 0},
		{name: "static band last", size: 100, static: 20, next: 90, wantUsed: 90, wantInStatic: 10},
		{name: "specific then next skip them", size: 8, static: 0, take: []int{0, 3, 7}, next: 5, wantUsed: 8},
		{name: "word boundaries", size: 130, static: 0, take: []int{63, 64, 127, 128, 129}, next: 125, wantUsed: 130},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBitmap(tt.size, tt.static)
			rnd := rand.New(rand.NewPCG(1, 2))
			for _, off := range tt.take {
				if err := b.Allocate(off); err != nil {
					t.Fatalf("Allocate(%d): %v", off, err)
				}
			}
			seen := map[int]bool{}
			for _, off := range tt.take {
				seen[off] = true
			}
			inStatic := 0
			var err error
			for i := 0; i < tt.next; i++ {
				var off int
				off, err = b.AllocateNext(rnd)
				if err != nil {
					break
				}
				if seen[off] {
					t.Fatalf("offset %d handed out twice", off)
				}
				if off < 0 || off >= tt.size {
					t.Fatalf("offset %d outside [0,%d)", off, tt.size)
				}
				seen[off] = true
				if off < tt.static {
					inStatic++
				}
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("last AllocateNext: %v, want %v", err, tt.wantErr)
			}
			if b.Used() != tt.wantUsed || b.Free() != tt.size-tt.wantUsed {
				t.Errorf("used %d free %d, want used %d", b.Used(), b.Free(), tt.wantUsed)
			}
			if inStatic != tt.wantInStatic {
				t.Errorf("%d dynamic allocations in the static band, want %d", inStatic, tt.wantInStatic)
			}
		})
	}
}

func TestBitmapAllocateReleaseAndBytes(t *testing.T) {
	b := NewBitmap(1000, 16)
	for _, off := range []int{0, 7, 8, 500, 999} {
		if err := b.Allocate(off); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Allocate(500); !errors.Is(err, ErrAllocated) {
		t.Errorf("second Allocate(500): %v, want ErrAllocated", err)
	}
	if err := b.Allocate(1000); err == nil {
		t.Error("Allocate outside the range succeeded")
	}
	b.Release(7)
	b.Release(7) // twice is harmless
	b.Release(3) // never taken
	if b.Used() != 4 || b.Has(7) {
		t.Fatalf("after release: used %d, has 7 %v", b.Used(), b.Has(7))
	}
	data := b.Bytes()
	// Upstream's format: big-endian integer, bit i is offset i.
	if data[len(data)-1] != 0x01 {
		t.Errorf("last byte %08b, want offset 0 in its low bit", data[len(data)-1])
	}
	if data[0] != 1<<(999%8) || len(data) != 125 {
		t.Errorf("first byte %08b of %d, want offset 999 in it", data[0], len(data))
	}
	c := NewBitmap(1000, 16)
	c.SetBytes(data)
	if got, want := c.Offsets(), []int{0, 8, 500, 999}; !equalInts(got, want) {
		t.Errorf("round trip: %v, want %v", got, want)
	}
	// A range that shrank drops what no longer fits.
	small := NewBitmap(600, 16)
	small.SetBytes(data)
	if got, want := small.Offsets(), []int{0, 8, 500}; !equalInts(got, want) {
		t.Errorf("shrunk: %v, want %v", got, want)
	}
	if len(NewBitmap(64, 0).Bytes()) != 0 {
		t.Error("an empty bitmap encodes to bytes")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestIPRange(t *testing.T) {
	r, err := ParseIPRange("10.43.0.0/16")
	if err != nil {
		t.Fatal(err)
	}
	if r.Size() != 65534 || r.StaticBand() != 256 || r.Addr(0).String() != "10.43.0.1" || r.Addr(65533).String() != "10.43.255.254" {
		t.Errorf("size %d static %d first %s last %s", r.Size(), r.StaticBand(), r.Addr(0), r.Addr(65533))
	}
	for ip, want := range map[string]int{"10.43.0.1": 0, "10.43.1.0": 255, "10.43.255.254": 65533, "10.43.0.0": -1, "10.43.255.255": -1, "10.44.0.1": -1} {
		off, ok := r.Offset(netip.MustParseAddr(ip))
		if (want < 0) == ok || (ok && off != want) {
			t.Errorf("Offset(%s) = %d, %v; want %d", ip, off, ok, want)
		}
	}
	small, _ := ParseIPRange("192.168.0.0/28")
	if small.Size() != 14 || small.StaticBand() != 0 {
		t.Errorf("/28: size %d static %d", small.Size(), small.StaticBand())
	}
	mid, _ := ParseIPRange("10.0.0.0/24")
	if mid.StaticBand() != 16 {
		t.Errorf("/24: static %d, want 16", mid.StaticBand())
	}
	for _, bad := range []string{"10.0.0.0/8", "10.0.0.0/31", "fd00::/108", "nonsense"} {
		if _, err := ParseIPRange(bad); err == nil {
			t.Errorf("ParseIPRange(%q) succeeded", bad)
		}
	}
}

func TestPortRange(t *testing.T) {
	for in, want := range map[string]string{"30000-32767": "30000-32767", "30000+2767": "30000-32767", " 80-80 ": "80-80"} {
		r, err := ParsePortRange(in)
		if err != nil || r.String() != want {
			t.Errorf("ParsePortRange(%q) = %v, %v; want %s", in, r, err, want)
		}
	}
	r, _ := ParsePortRange("30000-32767")
	if r.Size != 2768 || r.StaticBand() != 86 {
		t.Errorf("size %d static %d, want 2768 and 86", r.Size, r.StaticBand())
	}
	if off, ok := r.Offset(30080); !ok || off != 80 {
		t.Errorf("Offset(30080) = %d, %v", off, ok)
	}
	if _, ok := r.Offset(29999); ok {
		t.Error("29999 in range")
	}
	for _, bad := range []string{"32767-30000", "0-10", "1-70000", "30000", "a-b"} {
		if _, err := ParsePortRange(bad); err == nil {
			t.Errorf("ParsePortRange(%q) succeeded", bad)
		}
	}
}
