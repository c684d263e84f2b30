package fairqueue

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"k8s.io/apiserver/pkg/util/shufflesharding"
)

// TestDealMatchesUpstream: a flow gets the same hand of queues as from
// upstream's dealer, so it is classified the same way on either server.
func TestDealMatchesUpstream(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sizes := range [][2]int{{1, 1}, {8, 1}, {16, 4}, {64, 6}, {128, 6}, {64, 8}, {15, 15}} {
		d, err := shufflesharding.NewDealer(sizes[0], sizes[1])
		if err != nil {
			t.Fatal(err)
		}
		for range 1000 {
			h := rng.Uint64()
			want := d.DealIntoHand(h, nil)
			got := deal(h, sizes[0], sizes[1], nil)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("deal(%d, %v) = %v, upstream %v", h, sizes, got, want)
			}
			seen := map[int]bool{}
			for _, c := range got {
				if c < 0 || c >= sizes[0] || seen[c] {
					t.Fatalf("bad hand %v for %v", got, sizes)
				}
				seen[c] = true
			}
		}
	}
}

func TestRequiredEntropyBits(t *testing.T) {
	for _, tc := range []struct{ deck, hand, want int }{{128, 6, 42}, {64, 8, 48}, {2, 1, 1}, {1 << 10, 6, 60}, {1 << 10, 7, 70}} {
		if got := RequiredEntropyBits(tc.deck, tc.hand); got != tc.want {
			t.Errorf("RequiredEntropyBits(%d, %d) = %d, want %d", tc.deck, tc.hand, got, tc.want)
		}
	}
}
