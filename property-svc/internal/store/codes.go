package store

import (
	"strings"
	"sync"
	"sync/atomic"
)

// Why a code's hint needs no invalidation to be right (UpdateContent).
//
// A code document "<account>:<code>" names the property that claimed the code (claimCode).
// A property's internal_code is set when it is created and never changed; its deleted flag,
// once set, is never cleared (Delete); its id is never reused (a Sequence). The code
// document changes only when
//   - Delete frees it, after marking its property deleted;
//   - claimCode takes it over, only when its property is deleted or, after claimLease, does
//     not exist;
//   - an erasure removes it, after deleting the account's properties.
// So while a property is live with internal_code c, the code document c names it: an update
// filtered on the hinted id, on not being deleted and on internal_code c either changes the
// very property a lookup would have named, or finds nothing — and only then is the code
// looked up. This holds whichever process deleted or created what, so the hints of several
// replicas need no coordination; forgetting a hint on Delete and on erasure only keeps them
// from piling up.
//
// (One exception, as old as the claims: a create stopped for longer than claimLease between
// its claim and its insert, whose claim another create took over, inserts a second live
// property with the same code. A lookup names the newer; a hint may name either.)

// maxHints bounds the hints kept; past it they are all forgotten and learnt again.
const maxHints = 1 << 17

// codeHints maps a code document's id to the property id it named when this process last
// read or claimed it.
type codeHints struct {
	m sync.Map // string → int64
	n atomic.Int64
}

func (h *codeHints) lookup(id string) (int64, bool) {
	v, ok := h.m.Load(id)
	if !ok {
		return 0, false
	}
	return v.(int64), true
}

func (h *codeHints) remember(id string, pid int64) {
	if _, loaded := h.m.Swap(id, pid); loaded {
		return
	}
	if h.n.Add(1) > maxHints {
		h.m.Clear()
		h.n.Store(0)
	}
}

func (h *codeHints) forget(id string) {
	if _, loaded := h.m.LoadAndDelete(id); loaded {
		h.n.Add(-1)
	}
}

// forgetIf forgets id's hint if it still names pid.
func (h *codeHints) forgetIf(id string, pid int64) {
	if h.m.CompareAndDelete(id, pid) {
		h.n.Add(-1)
	}
}

// forgetAccount forgets the hints of account's codes.
func (h *codeHints) forgetAccount(account string) {
	prefix := account + ":"
	h.m.Range(func(k, _ any) bool {
		if strings.HasPrefix(k.(string), prefix) {
			h.forget(k.(string))
		}
		return true
	})
}
