package account

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vros/vros/libs/periodic"
)

// Eraser erases what the services hold of an account: property-svc's erase, which also
// publishes the event that makes every other service and view forget the account
// (docs/erasure.md). It must be idempotent: an interrupted deletion calls it again.
type Eraser interface {
	EraseAccount(ctx context.Context, id string) error
}

// DeletionRetry is how long a deletion may stay unfinished before this replica's loop
// (FinishDeletions) drives it on: long enough that it never races the DELETE still at work.
const DeletionRetry = time.Minute

// Delete deletes an account in three steps, each of which a retry repeats harmlessly:
//  1. the account becomes Deleting: every credential of it is refused at once here and
//     within the poll interval on every other replica, and every other change is refused;
//  2. the services erase their data (Eraser);
//  3. its credentials are deleted and the account is left as its id, status Deleted and
//     the time (FinishDeletion): the id is never reused, and nothing else answers for it.
//
// Interrupted after step 1, the deletion is finished by the next Delete or by
// FinishDeletions. Concurrent Deletes of one account in this replica share one run.
func (s *Service) Delete(ctx context.Context, id string) (Account, error) {
	return s.deletions.do(id, func() (Account, error) { return s.delete(ctx, id) })
}

func (s *Service) delete(ctx context.Context, id string) (Account, error) {
	if s.eraser == nil {
		return Account{}, errors.New("edge cannot erase accounts: no services are configured to erase them")
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	before, after, err := s.repo.MarkDeleting(ctx, id, now)
	s.forget(id)
	if err != nil {
		return Account{}, err
	}
	// Each run writes the deletion's two records under ids of the deletion's own (its
	// start), so that a retry writes those a failed run did not, never a second copy.
	var was any = string(before.Status)
	if before.Status == Deleting {
		was = nil // the run that marked it knew the status before; a retry does not
	}
	err = s.audit(ctx, AuditRecord{ID: deletionAuditID(after.DeletingAt, ActionDelete), AccountID: id, Action: ActionDelete,
		Changes: []FieldChange{{Field: "status", Old: was, New: string(Deleting)}}})
	if err != nil {
		return Account{}, err
	}
	if err := s.eraser.EraseAccount(ctx, id); err != nil {
		return Account{}, fmt.Errorf("erase account %s: %w", id, err)
	}
	err = s.audit(ctx, AuditRecord{ID: deletionAuditID(after.DeletingAt, ActionDeleted), AccountID: id, Action: ActionDeleted,
		Changes: []FieldChange{{Field: "status", Old: string(Deleting), New: string(Deleted)}}})
	if err != nil {
		return Account{}, err
	}
	a, err := s.repo.FinishDeletion(ctx, id, s.now().UTC().Truncate(time.Millisecond))
	s.forget(id)
	if err != nil {
		return Account{}, fmt.Errorf("finish the deletion of account %s: %w", id, err)
	}
	return a, nil
}

// deletionAuditID is the id of a deletion's audit record of action: the deletion's start,
// then the action, so that it sorts with the records of that time and is the same in every
// run of the deletion.
func deletionAuditID(started time.Time, action string) string {
	suffix := "00000000" + action
	return fmt.Sprintf("%016x", started.UnixNano()) + suffix[len(suffix)-8:]
}

// FinishDeletions drives on, every interval, each deletion left unfinished for
// DeletionRetry (its DELETE interrupted: edge stopped, a service down), until ctx ends.
func (s *Service) FinishDeletions(ctx context.Context, every time.Duration, onError func(error)) {
	periodic.Run(ctx, every, s.FinishStale, onError)
}

// FinishStale is one tick of FinishDeletions: it finishes every deletion begun more than
// DeletionRetry ago, returning the errors of those it could not finish (they are tried
// again at the next tick).
func (s *Service) FinishStale(ctx context.Context) error {
	ids, err := s.repo.Deleting(ctx, s.now().Add(-DeletionRetry))
	if err != nil {
		return fmt.Errorf("unfinished deletions: %w", err)
	}
	var errs []error
	for _, id := range ids {
		if _, err := s.Delete(ctx, id); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// joins lets concurrent calls for one key share the first one's run and result.
type joins struct {
	mu    sync.Mutex
	calls map[string]*joined
}

type joined struct {
	done chan struct{}
	a    Account
	err  error
}

func (j *joins) do(key string, run func() (Account, error)) (Account, error) {
	j.mu.Lock()
	if c, ok := j.calls[key]; ok {
		j.mu.Unlock()
		<-c.done
		return c.a, c.err
	}
	if j.calls == nil {
		j.calls = map[string]*joined{}
	}
	c := &joined{done: make(chan struct{})}
	j.calls[key] = c
	j.mu.Unlock()
	defer func() {
		j.mu.Lock()
		delete(j.calls, key)
		j.mu.Unlock()
		close(c.done)
	}()
	c.a, c.err = run()
	return c.a, c.err
}

// GuestErased records in the audit log that a guest's personal data was erased in account
// id: the counts of records anonymised, never who (the address is personal data itself).
func (s *Service) GuestErased(ctx context.Context, id string, bookings, users int) error {
	return s.audit(ctx, AuditRecord{AccountID: id, Action: ActionGuestErase,
		Changes: []FieldChange{{Field: "bookings", New: bookings}, {Field: "users", New: users}}})
}

// IntegrationsChanged records in the audit log that the account's integration setting field
// (held by integration-svc) went from old to new.
func (s *Service) IntegrationsChanged(ctx context.Context, id, field string, old, new any) error {
	return s.audit(ctx, AuditRecord{AccountID: id, Action: ActionIntegrations,
		Changes: []FieldChange{{Field: field, Old: old, New: new}}})
}
