package mongostore

import (
	"hash/maphash"
	"sync"
)

// DocLocks serializes one process's writes to the same document.
//
// MongoDB applies each update atomically. FerretDB, the embedded store of `make run` and
// the tests, applies an update (and a findAndModify) as a read followed by a write of the
// whole document, so two concurrent updates of one document can lose one: a section of a
// property, or a version increment, so that two events carry one version and consumers
// drop one. Every read-modify-write of a shared document takes its lock; on MongoDB that
// costs an uncontended mutex. Several replicas sharing one FerretDB are not supported.
//
// The locks are striped: a fixed number of mutexes, so their memory is bounded; two
// documents that share a stripe only wait for each other.
type DocLocks struct {
	seed    maphash.Seed
	stripes [256]sync.Mutex
}

// NewDocLocks returns a set of document locks.
func NewDocLocks() *DocLocks { return &DocLocks{seed: maphash.MakeSeed()} }

// Lock locks the document id and returns its unlock.
func (l *DocLocks) Lock(id string) (unlock func()) {
	m := &l.stripes[maphash.String(l.seed, id)%uint64(len(l.stripes))]
	m.Lock()
	return m.Unlock
}
