package queue

import "container/heap"

// podHeap is a heap of queued pods that knows each pod's index so that a
// pod can be removed or re-sorted in O(log n) when it changes.
type podHeap struct {
	items []*QueuedPod
	less  func(a, b *QueuedPod) bool
	// which says which heap a pod is in (its index field is per heap).
	which location
}

func (h *podHeap) Len() int           { return len(h.items) }
func (h *podHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *podHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].index, h.items[j].index = i, j
}
func (h *podHeap) Push(x any) {
	qp := x.(*QueuedPod)
	qp.index = len(h.items)
	h.items = append(h.items, qp)
}
func (h *podHeap) Pop() any {
	n := len(h.items) - 1
	qp := h.items[n]
	h.items[n] = nil
	h.items = h.items[:n]
	qp.index = -1
	return qp
}

func (h *podHeap) add(qp *QueuedPod) {
	qp.where = h.which
	heap.Push(h, qp)
}

func (h *podHeap) remove(qp *QueuedPod) {
	if qp.where == h.which && qp.index >= 0 && qp.index < len(h.items) && h.items[qp.index] == qp {
		heap.Remove(h, qp.index)
	}
	qp.where = nowhere
}

func (h *podHeap) fix(qp *QueuedPod) { heap.Fix(h, qp.index) }

func (h *podHeap) peek() *QueuedPod {
	if len(h.items) == 0 {
		return nil
	}
	return h.items[0]
}

func (h *podHeap) pop() *QueuedPod {
	qp := heap.Pop(h).(*QueuedPod)
	qp.where = nowhere
	return qp
}
