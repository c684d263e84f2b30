package main

import (
	"bytes"
	"testing"
)

func TestRefuse(t *testing.T) {
	// ID 0xabcd, RD, one question foo.bar.com A IN, one additional (OPT).
	q := []byte{0xab, 0xcd, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 1,
		3, 'f', 'o', 'o', 3, 'b', 'a', 'r', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1,
		0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0}
	want := []byte{0xab, 0xcd, 0x81, 0x05, 0, 1, 0, 0, 0, 0, 0, 0,
		3, 'f', 'o', 'o', 3, 'b', 'a', 'r', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1}
	if got := refuse(q); !bytes.Equal(got, want) {
		t.Errorf("refuse = %x, want %x", got, want)
	}
	// A truncated question leaves a header alone.
	if got := refuse(q[:15]); !bytes.Equal(got, []byte{0xab, 0xcd, 0x81, 0x05, 0, 0, 0, 0, 0, 0, 0, 0}) {
		t.Errorf("refuse of a truncated question = %x", got)
	}
	if refuse(want) != nil || refuse(q[:5]) != nil {
		t.Error("answers and runts must not be answered")
	}
}
