package account

import (
	"context"
	"errors"
	"testing"
	"time"
)

// changesRepo is a Repository whose ChangedSince answers from a list, recording what it
// was asked.
type changesRepo struct {
	memRepo
	changes []Change
	asked   []time.Time
	fail    bool
}

func (r *changesRepo) ChangedSince(_ context.Context, since time.Time) ([]Change, error) {
	r.asked = append(r.asked, since)
	if r.fail {
		return nil, errors.New("store down")
	}
	var out []Change
	for _, c := range r.changes {
		if c.At.After(since) {
			out = append(out, c)
		}
	}
	return out, nil
}

// TestPollRules: what Poll asks the store for and which accounts it drops from the cache.
func TestPollRules(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	type step struct {
		add     []Change // changes stored before this poll
		fail    bool
		since   time.Time // what the poll must ask for
		dropped []string  // the accounts whose cache entries it must drop
	}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"a new change drops its account once", []step{
			{add: []Change{{ID: "1000", At: t0.Add(time.Second), Version: 2}}, since: t0.Add(-ChangeOverlap), dropped: []string{"1000"}},
			{since: t0.Add(time.Second - ChangeOverlap)},
		}},
		{"a later version of the same account drops it again", []step{
			{add: []Change{{ID: "1000", At: t0.Add(time.Second), Version: 2}}, since: t0.Add(-ChangeOverlap), dropped: []string{"1000"}},
			{add: []Change{{ID: "1000", At: t0.Add(time.Second), Version: 3}}, since: t0.Add(time.Second - ChangeOverlap), dropped: []string{"1000"}},
		}},
		{"a change committed late but stamped within the overlap is found", []step{
			{add: []Change{{ID: "1000", At: t0.Add(3 * time.Second), Version: 2}}, since: t0.Add(-ChangeOverlap), dropped: []string{"1000"}},
			{add: []Change{{ID: "2000", At: t0.Add(time.Second), Version: 5}}, since: t0.Add(3*time.Second - ChangeOverlap), dropped: []string{"2000"}},
		}},
		{"the cursor follows the stamps read, not this replica's clock", []step{
			{add: []Change{{ID: "1000", At: t0.Add(time.Hour), Version: 2}}, since: t0.Add(-ChangeOverlap), dropped: []string{"1000"}},
			{since: t0.Add(time.Hour - ChangeOverlap)},
		}},
		{"a failed poll is asked again from the same point", []step{
			{add: []Change{{ID: "1000", At: t0.Add(time.Second), Version: 2}}, fail: true, since: t0.Add(-ChangeOverlap)},
			{since: t0.Add(-ChangeOverlap), dropped: []string{"1000"}},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			repo := &changesRepo{memRepo: memRepo{creds: map[string]Credential{}, accounts: map[string]Account{}}}
			svc := NewService(repo, Options{CacheTTL: time.Hour})
			svc.cursor = t0
			for i, st := range c.steps {
				// Cache one credential of every account the test knows.
				for _, id := range []string{"1000", "2000"} {
					svc.cache.Add("key:"+id, cached{cred: Credential{AccountID: id}, status: Active})
				}
				repo.changes = append(repo.changes, st.add...)
				repo.fail = st.fail
				err := svc.Poll(context.Background())
				if (err != nil) != st.fail {
					t.Fatalf("step %d: poll error %v", i, err)
				}
				if got := repo.asked[len(repo.asked)-1]; !got.Equal(st.since) {
					t.Errorf("step %d: asked for changes since %v, want %v", i, got, st.since)
				}
				for _, id := range []string{"1000", "2000"} {
					want := false
					for _, d := range st.dropped {
						want = want || d == id
					}
					if _, ok := svc.cache.Peek("key:" + id); ok == want {
						t.Errorf("step %d: account %s dropped %v, want %v", i, id, !ok, want)
					}
				}
			}
		})
	}
}
