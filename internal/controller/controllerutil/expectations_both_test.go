package controllerutil

import "testing"

func TestExpectCreationsAndDeletions(t *testing.T) {
	e := NewExpectations()
	e.ExpectCreationsAndDeletions("ds", 1, []string{"u1"})
	e.CreationObserved("ds")
	if e.Satisfied("ds") {
		t.Fatal("satisfied with a deletion outstanding")
	}
	e.DeletionObserved("ds", "u1")
	if !e.Satisfied("ds") {
		t.Fatal("not satisfied after the creation and the deletion")
	}
	e.ExpectCreationsAndDeletions("ds", 1, nil)
	if e.Satisfied("ds") {
		t.Fatal("satisfied with a creation outstanding")
	}
}
