package channels

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/vros/vros/libs/events"
	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/systest/chantest"
)

// conflictEvents reads vros.integration.v1 from the start until every one of the account's
// conflicts has its event (docs/events.md, "Integration events"), and answers them by id.
func conflictEvents(t *testing.T, account string, conflicts []chantest.Conflict) map[int64]contract.Conflict {
	t.Helper()
	want := map[string]bool{}
	for _, c := range conflicts {
		want[account+":conflict:"+c.ConflictID.String()] = true
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: st.KafkaBrokers, GroupID: "conflict-events-" + account,
		Topic: events.TopicIntegration, StartOffset: kafka.FirstOffset, MaxWait: 50 * time.Millisecond})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got := map[int64]contract.Conflict{}
	for len(got) < len(want) {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("reading %s: %v (%d of %d conflicts' events)", events.TopicIntegration, err, len(got), len(want))
		}
		if !want[string(m.Key)] || len(m.Value) == 0 {
			continue
		}
		var c contract.Conflict
		e, err := events.Decode(m.Value, &c)
		if err != nil || e.Type() != contract.ChannelConflict {
			t.Fatalf("%s: event %q, %v", m.Key, e.Type(), err)
		}
		got[c.ConflictID] = c
	}
	return got
}

// sameConflict reports whether a published conflict is the one the channel-conflict resource
// answers.
func sameConflict(ev contract.Conflict, c chantest.Conflict) bool {
	id, _ := strconv.ParseInt(c.ConflictID.String(), 10, 64)
	return ev.ConflictID == id && ev.RevisionID == c.RevisionID && ev.Reason == c.Reason &&
		len(c.BookingIDs) > 0 && ev.BookingID == c.BookingIDs[0]
}
