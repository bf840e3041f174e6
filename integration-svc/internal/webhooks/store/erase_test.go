package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/integration-svc/internal/webhooks/store"
	"github.com/vros/vros/libs/mongostore"
)

// TestEraseAccountLeavesOnlyTheMark: erasing an account deletes its endpoints, deliveries,
// queue, attempts, snapshots and switch, leaves its mark in erased_accounts (id and time)
// and nothing else of it, and leaves another account whole; erasing again changes nothing.
func TestEraseAccountLeavesOnlyTheMark(t *testing.T) {
	ctx := context.Background()
	gone, kept := setup(t), setup(t)
	for _, f := range []*fixture{gone, kept} {
		f.add(t, "msg_e1", 1, time.Now())
		f.add(t, "msg_e2", 2, time.Now())
		h, _ := f.head(t, 1)
		f.finish(t, h, false, nil)
		if err := f.st.SetAllowsPrivate(ctx, f.account, true); err != nil {
			t.Fatal(err)
		}
		if _, _, err := mongostore.KeepNewer(ctx, f.st.Snapshots(), f.account+":7", 1, `{}`); err != nil {
			t.Fatal(err)
		}
	}
	holding := func(account string) []string {
		var out []string
		for _, c := range []string{store.Endpoints, store.Deliveries, store.Queue, store.Attempts, store.Snapshots, store.Accounts, store.ErasedAccounts} {
			cur, err := db.Collection(c).Find(ctx, bson.D{})
			if err != nil {
				t.Fatal(err)
			}
			var docs []bson.M
			if err := cur.All(ctx, &docs); err != nil {
				t.Fatal(err)
			}
			for _, d := range docs {
				id := fmt.Sprint(d["_id"])
				if d["account_id"] == account || id == account || strings.HasPrefix(id, account+":") {
					out = append(out, c+" "+id)
				}
			}
		}
		slices.Sort(out)
		return out
	}
	before := holding(kept.account)
	for range 2 {
		if err := gone.st.EraseAccount(ctx, gone.account, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if left := holding(gone.account); !slices.Equal(left, []string{store.ErasedAccounts + " " + gone.account}) {
		t.Fatalf("after the erasure the store holds %v, want only the mark", left)
	}
	if erased, err := gone.st.Erased(ctx, gone.account); err != nil || !erased {
		t.Fatalf("erased account not marked: %v %v", erased, err)
	}
	if allow, _ := gone.st.AllowsPrivate(ctx, gone.account); allow {
		t.Fatal("an erased account keeps its private-targets switch")
	}
	if after := holding(kept.account); !slices.Equal(after, before) {
		t.Fatalf("the other account lost %v, kept %v", before, after)
	}
	if erased, _ := kept.st.Erased(ctx, kept.account); erased {
		t.Fatal("the other account reads as erased")
	}
}
