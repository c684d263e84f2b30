package fairqueue

import "math"

// MaxHashBits is how many bits of a flow's hash shuffle sharding may use:
// more would make the last card dealt noticeably uneven, as upstream notes.
const MaxHashBits = 60

// RequiredEntropyBits is how many bits of hash dealing handSize cards
// from a deck of deckSize takes, as upstream estimates it.
func RequiredEntropyBits(deckSize, handSize int) int {
	return int(math.Ceil(math.Log2(float64(deckSize)) * float64(handSize)))
}

// deal picks handSize distinct cards out of deckSize using hash as the
// source of entropy, as upstream's shuffle-sharding dealer does, so a flow
// gets the same queues here as there. The caller has checked the sizes.
func deal(hash uint64, deckSize, handSize int, hand []int) []int {
	var remainders [15]int
	for i := 0; i < handSize; i++ {
		next := hash / uint64(deckSize-i)
		remainders[i] = int(hash - uint64(deckSize-i)*next)
		hash = next
	}
	hand = hand[:0]
	for i := 0; i < handSize; i++ {
		card := remainders[i]
		for j := i; j > 0; j-- {
			if card >= remainders[j-1] {
				card++
			}
		}
		hand = append(hand, card)
	}
	return hand
}
