package store

import (
	"errors"
	"testing"

	"github.com/vros/vros/property-svc/internal/photo"
	"github.com/vros/vros/property-svc/internal/property"
)

// TestDeleteMakesPropertyMissing: once deleted, a property is missing for every read and
// write, by id and by code; nothing changes it any more, and its photos' files are gone.
func TestDeleteMakesPropertyMissing(t *testing.T) {
	h := newHarness(t)
	acct := newAccount()
	pid := h.create(t, acct, "V1")
	st := h.configure(t, acct, pid)
	must(t, h.repo.Delete(ctx, acct, "V1"))

	p := h.state(t, acct, pid)
	if !p.Deleted {
		t.Fatalf("deleted property published as %+v", p)
	}
	for name, call := range calls(acct, st) {
		t.Run(name, func(t *testing.T) {
			before := raw(t, acct, pid)
			isNotFound(t, name+" after Delete", call(h.repo))
			unchanged(t, name+" after Delete", before, raw(t, acct, pid))
		})
	}
	for _, key := range st.Photos {
		for _, n := range photo.Names() {
			if _, err := h.repo.Rendition(ctx, key, n); !errors.Is(err, property.ErrPhotoNotFound) {
				t.Errorf("rendition %s/%s after Delete: %v, want ErrPhotoNotFound", key, n, err)
			}
		}
	}
}
