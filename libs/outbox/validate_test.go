package outbox

import (
	"errors"
	"testing"

	"github.com/vros/vros/libs/events"
)

// TestValidate: a message Kafka could never take, or a tombstone that is not one, is refused
// before it is sent; a snapshot and a tombstone pass.
func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		m    events.Message
		ok   bool
	}{
		{"snapshot", events.Message{Topic: "t", Key: "a:1", Value: []byte("{}")}, true},
		{"tombstone", events.Message{Topic: "t", Key: "a:1", Tombstone: true}, true},
		{"no topic", events.Message{Key: "a:1", Value: []byte("{}")}, false},
		{"nil value, not a tombstone", events.Message{Topic: "t", Key: "a:1"}, false},
		{"tombstone with a value", events.Message{Topic: "t", Key: "a:1", Value: []byte("{}"), Tombstone: true}, false},
	}
	for _, c := range cases {
		err := validate([]events.Message{c.m})
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, errUnpublishable)) {
			t.Errorf("%s: validate = %v, want ok=%v", c.name, err, c.ok)
		}
	}
}
