package rt

import "fmt"

// handles numbers a kind of descriptor (arrangements, templates) 1, 2, ...
// A released handle is given out again, so a subprogram that declares a
// template each time it is called does not pile descriptors up. Every
// rank declares and releases in the same order, so handles agree.
type handles[T any] struct {
	kind  string
	items []*T
}

func (t *handles[T]) add(item *T) int {
	for i, it := range t.items {
		if it == nil {
			t.items[i] = item
			return i + 1
		}
	}
	t.items = append(t.items, item)
	return len(t.items)
}

func (t *handles[T]) get(h int) (*T, error) {
	if h < 1 || h > len(t.items) || t.items[h-1] == nil {
		return nil, fmt.Errorf("no %s has handle %d", t.kind, h)
	}
	return t.items[h-1], nil
}

func (t *handles[T]) release(h int) error {
	if _, err := t.get(h); err != nil {
		return err
	}
	t.items[h-1] = nil
	return nil
}
