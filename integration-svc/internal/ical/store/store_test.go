package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/integration-svc/internal/ical/feed"
	"github.com/vros/vros/testkit/testinfra"
)

var db *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "icalfeedstore_test", &db, nil) }

func open(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newFeed(t *testing.T, s *Store, account string, now time.Time) *feed.Feed {
	t.Helper()
	f := &feed.Feed{AccountID: account, PropertyID: 17, InternalCode: "V1", URL: "https://example.com/a.ics", Name: "n",
		IntervalMinutes: 15, Enabled: true, CreatedAt: now, UpdatedAt: now, Status: feed.Status{NextPollAt: now}}
	if err := s.Create(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	return f
}

// raw is the stored document, deleting or not.
func raw(t *testing.T, id string) feed.Feed {
	t.Helper()
	var f feed.Feed
	if err := db.Collection(Feeds).FindOne(context.Background(), bson.D{{Key: "_id", Value: id}}).Decode(&f); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestAPIAndPollWritesKeepEachOther: the account's updates and delete race polls' leases
// and outcomes on one feed. Every write of each side survives the other's: the last name
// set, the deletion (a poll's outcome must not write deleting:false back) and the last
// outcome recorded. FerretDB rewrites the whole document on every update, so without the
// feed's lease around each read-change-write one side undoes the other.
func TestAPIAndPollWritesKeepEachOther(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	now := time.Date(2027, 1, 1, 12, 0, 0, 0, time.UTC)
	for round := range 12 {
		f := newFeed(t, s, "race", now)
		var wg sync.WaitGroup
		recorded := -1
		wg.Go(func() {
			for i := range 6 {
				g, err := s.Lease(ctx, f.ID, now, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if g == nil {
					continue
				}
				polled := now.Add(time.Duration(i) * time.Minute)
				g.Status.LastPolledAt = &polled
				g.Status.EventsImported = 100 + i
				ok, err := s.Finish(ctx, g, g.URL, nil)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					recorded = 100 + i
				}
			}
		})
		wg.Go(func() {
			for i := range 6 {
				name, interval, enabled := fmt.Sprint("name ", i), 20+i, i%2 == 1
				if _, err := s.Update(ctx, f.AccountID, f.FeedID, feed.Change{Name: &name, IntervalMinutes: &interval, Enabled: &enabled}, now); err != nil {
					t.Error(err)
					return
				}
			}
			if _, err := s.MarkDeleting(ctx, f.AccountID, f.FeedID, now); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		if t.Failed() {
			return
		}
		g := raw(t, f.ID)
		if !g.Deleting || g.Name != "name 5" || g.IntervalMinutes != 25 || !g.Enabled {
			t.Fatalf("round %d: deleting %v, name %q, interval %d, enabled %v: an API write was undone", round, g.Deleting, g.Name, g.IntervalMinutes, g.Enabled)
		}
		if recorded >= 0 && g.Status.EventsImported != recorded {
			t.Fatalf("round %d: events_imported %d, want the last recorded outcome's %d", round, g.Status.EventsImported, recorded)
		}
	}
}
