// Package bytelru is a least-recently-used map bounded by the sum of its entries' sizes in
// bytes, not by their number: the kept answers of catalog-svc and of edge hold bodies of a
// few hundred bytes to hundreds of kilobytes, which a count bound would not bound.
// (hashicorp/golang-lru, used elsewhere, bounds the count only.)
package bytelru

import (
	"container/list"
	"iter"
)

// Cache is the map. It is not safe for concurrent use: its owner holds its own lock.
type Cache[K comparable, V any] struct {
	max, size int
	order     list.List // of *entry[K, V], most recently used first
	byKey     map[K]*list.Element
	removed   func(K, V)
}

type entry[K comparable, V any] struct {
	key  K
	val  V
	size int
}

// New returns a Cache of at most max bytes. removed, when set, is told every entry that
// leaves it (evicted, removed or replaced).
func New[K comparable, V any](max int, removed func(K, V)) *Cache[K, V] {
	return &Cache[K, V]{max: max, byKey: map[K]*list.Element{}, removed: removed}
}

// Get returns the value under k, marking it used.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	el, ok := c.byKey[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry[K, V]).val, true
}

// Peek returns the value under k without marking it used.
func (c *Cache[K, V]) Peek(k K) (V, bool) {
	el, ok := c.byKey[k]
	if !ok {
		var zero V
		return zero, false
	}
	return el.Value.(*entry[K, V]).val, true
}

// Add keeps v under k as size bytes, replacing what k held, and evicts the least recently
// used entries beyond the bound. An entry over an eighth of the bound is not kept (false):
// one large answer never empties the cache.
func (c *Cache[K, V]) Add(k K, v V, size int) bool {
	if size > c.max/8 {
		return false
	}
	c.Remove(k)
	c.byKey[k] = c.order.PushFront(&entry[K, V]{key: k, val: v, size: size})
	c.size += size
	for c.size > c.max {
		c.remove(c.order.Back())
	}
	return true
}

// Remove drops the entry under k, if any.
func (c *Cache[K, V]) Remove(k K) bool {
	el, ok := c.byKey[k]
	if ok {
		c.remove(el)
	}
	return ok
}

// RemoveIf drops every entry for which drop is true.
func (c *Cache[K, V]) RemoveIf(drop func(K, V) bool) {
	for el := c.order.Front(); el != nil; {
		next := el.Next()
		if e := el.Value.(*entry[K, V]); drop(e.key, e.val) {
			c.remove(el)
		}
		el = next
	}
}

func (c *Cache[K, V]) remove(el *list.Element) {
	e := c.order.Remove(el).(*entry[K, V])
	delete(c.byKey, e.key)
	c.size -= e.size
	if c.removed != nil {
		c.removed(e.key, e.val)
	}
}

// All is every entry, most recently used first (not marked used).
func (c *Cache[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		for el := c.order.Front(); el != nil; el = el.Next() {
			if e := el.Value.(*entry[K, V]); !yield(e.key, e.val) {
				return
			}
		}
	}
}

// Len is the number of entries; Size the sum of their sizes.
func (c *Cache[K, V]) Len() int  { return c.order.Len() }
func (c *Cache[K, V]) Size() int { return c.size }
