package nodeipam

import "testing"

func TestBlocks(t *testing.T) {
	b, err := NewBlocks("10.42.0.0/16", 24)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Occupy("existing", "10.42.0.0/24") {
		t.Fatal("could not occupy the first block")
	}
	if b.Occupy("other", "10.42.0.0/24") {
		t.Fatal("two nodes hold one block")
	}
	if b.Occupy("x", "10.99.0.0/24") || b.Occupy("x", "10.42.1.0/25") {
		t.Fatal("occupied a range outside the cluster CIDR or of the wrong size")
	}
	got, err := b.Allocate("n1")
	if err != nil || got != "10.42.1.0/24" {
		t.Fatalf("first allocation %q %v, want 10.42.1.0/24", got, err)
	}
	if again, _ := b.Allocate("n1"); again != got {
		t.Fatalf("second allocation for the same node %q", again)
	}
	n2, _ := b.Allocate("n2")
	b.Release("n1")
	n3, _ := b.Allocate("n3")
	if n2 != "10.42.2.0/24" || n3 != "10.42.1.0/24" {
		t.Fatalf("n2 %s n3 %s: a released block must be reused first", n2, n3)
	}
	small, _ := NewBlocks("10.0.0.0/30", 30)
	if _, err := small.Allocate("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := small.Allocate("b"); err == nil || err.Error() != "no remaining CIDRs left to allocate in 10.0.0.0/30" {
		t.Fatalf("exhausted: %v", err)
	}
	if _, err := NewBlocks("fd00::/64", 80); err == nil {
		t.Fatal("IPv6 accepted")
	}
}
