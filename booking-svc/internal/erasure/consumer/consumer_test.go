package consumer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/booking-svc/internal/erasure"
	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
)

// TestApplyRoutes: only an erasure event under its own account's key erases (and needs the
// markers); every other message of vros.property.v1 goes to the view, and an erasure event
// that cannot be read is parked, never retried for ever.
func TestApplyRoutes(t *testing.T) {
	encode := func(typ, key string, data any) []byte {
		v, err := events.Encode("/test", typ, key, time.Now(), data)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	event := contract.AccountErasure{AccountID: "a1", ErasedAt: time.Now()}
	for _, r := range []struct {
		name      string
		m         kafka.Message
		next      bool
		permanent bool
	}{
		{"a property snapshot", kafka.Message{Key: []byte("a1:7"), Value: encode(contract.PropertyUpdated, "a1:7", map[string]any{"account_id": "a1"})}, true, false},
		{"a settings snapshot", kafka.Message{Key: []byte("a1:settings"), Value: encode(contract.SettingsUpdated, "a1:settings", map[string]any{})}, true, false},
		{"a tombstone", kafka.Message{Key: []byte("a1:7")}, true, false},
		{"the erasure key's tombstone", kafka.Message{Key: []byte("a1:account")}, true, false},
		{"another type under an account key", kafka.Message{Key: []byte("a1:account"), Value: encode("vros.account.other", "a1:account", map[string]any{})}, true, false},
		{"an erasure of another account", kafka.Message{Key: []byte("a1:account"), Value: encode(contract.AccountErased, "a1:account",
			contract.AccountErasure{AccountID: "a2"})}, false, true},
		{"an erasure without account", kafka.Message{Key: []byte(":account"), Value: encode(contract.AccountErased, ":account",
			contract.AccountErasure{})}, false, true},
		{"not a CloudEvent", kafka.Message{Key: []byte("a1:account"), Value: []byte("{")}, false, true},
		{"an erasure of its own account reaches the markers", kafka.Message{Key: []byte("a1:account"), Value: encode(contract.AccountErased, "a1:account", event)}, false, false},
	} {
		next := false
		h := &Handler{Eraser: &erasure.Eraser{Marks: nil}, Next: func(context.Context, kafka.Message) error { next = true; return nil }}
		err := func() (err error) {
			defer func() {
				if recover() != nil {
					err = errors.New("reached the markers")
				}
			}()
			return h.Apply(context.Background(), r.m)
		}()
		if next != r.next || events.IsPermanent(err) != r.permanent || !r.next && !r.permanent && err == nil {
			t.Errorf("%s: next %v, err %v; want next %v, permanent %v", r.name, next, err, r.next, r.permanent)
		}
	}
}
