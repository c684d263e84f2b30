// Package printerstest checks registry tables against upstream's column
// definitions in the tests of every API group.
package printerstest

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orca-project/orca/internal/registry"
)

// Column is a column as upstream declares it.
type Column struct {
	Name     string
	Type     string
	Priority int32
}

// CheckColumns compares a table's columns with upstream's, and makes sure
// every one is documented and none claims the format of the NAME column,
// which the server adds itself.
func CheckColumns(t testing.TB, table *registry.Table, want []Column) {
	t.Helper()
	if table == nil || table.Row == nil {
		t.Fatal("no table")
	}
	if len(table.Columns) != len(want) {
		t.Fatalf("got %d columns, want %d: %+v", len(table.Columns), len(want), table.Columns)
	}
	for i, w := range want {
		c := table.Columns[i]
		if c.Name != w.Name || c.Type != w.Type || c.Priority != w.Priority {
			t.Errorf("column %d = %s/%s/%d, want %s/%s/%d", i, c.Name, c.Type, c.Priority, w.Name, w.Type, w.Priority)
		}
		if c.Description == "" {
			t.Errorf("column %s has no description", c.Name)
		}
		if c.Format != "" {
			t.Errorf("column %s has format %q", c.Name, c.Format)
		}
	}
}

// Row builds obj's row at now and checks it has one cell per column.
func Row(t testing.TB, table *registry.Table, obj runtime.Object, now time.Time) []any {
	t.Helper()
	cells := table.Row(obj, now)
	if len(cells) != len(table.Columns) {
		t.Fatalf("%d cells for %d columns: %#v", len(cells), len(table.Columns), cells)
	}
	return cells
}

// CheckRow compares a whole row, cell types included.
func CheckRow(t testing.TB, table *registry.Table, obj runtime.Object, now time.Time, want []any) {
	t.Helper()
	if got := Row(t, table, obj, now); !reflect.DeepEqual(got, want) {
		t.Errorf("row = %#v\nwant  %#v", got, want)
	}
}

// CheckCells compares the cells of the named columns only.
func CheckCells(t testing.TB, table *registry.Table, obj runtime.Object, now time.Time, want map[string]any) {
	t.Helper()
	cells := Row(t, table, obj, now)
	for name, w := range want {
		found := false
		for i, c := range table.Columns {
			if c.Name == name {
				found = true
				if !reflect.DeepEqual(cells[i], w) {
					t.Errorf("%s = %#v, want %#v", name, cells[i], w)
				}
			}
		}
		if !found {
			t.Errorf("no column %s", name)
		}
	}
}

// Col builds a Column; tables of columns read better positionally.
func Col(name, typ string, priority int32) Column {
	return Column{Name: name, Type: typ, Priority: priority}
}
