package store

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/vros/vros/property-svc/internal/property"
	"github.com/vros/vros/testkit/together"
)

// order is the published order of a property's photos: their ids, and their positions in
// that order.
func (h *harness) order(t *testing.T, account string, pid int64) (ids []int64, positions []int) {
	t.Helper()
	p := h.state(t, account, pid)
	for _, ph := range p.OrderedPhotos() {
		ids, positions = append(ids, ph.PhotoID), append(positions, ph.Position)
	}
	return ids, positions
}

// wantOrder fails the test unless the published photos are ids, in this order, at positions
// 1 to n.
func (h *harness) wantOrder(t *testing.T, what, account string, pid int64, ids ...int64) {
	t.Helper()
	got, pos := h.order(t, account, pid)
	want := make([]int, len(ids))
	for i := range want {
		want[i] = i + 1
	}
	if !slices.Equal(got, ids) || !slices.Equal(pos, want) {
		t.Errorf("%s: photos %v at positions %v, want %v at %v", what, got, pos, ids, want)
	}
}

func (h *harness) addPhoto(t *testing.T, account string, pid int64, tag string) int64 {
	t.Helper()
	st, err := h.repo.Find(ctx, account, ref(pid))
	must(t, err)
	id, err := h.repo.AddPhoto(ctx, st, img(tag), "")
	must(t, err)
	return id
}

// exactly is an order function that writes want when the photos are still those it was
// computed from (as the domain's rule does), else refuses.
var errStale = errors.New("stale order")

func exactly(want []int64) func(cur []int64) ([]int64, error) {
	return func(cur []int64) ([]int64, error) {
		if !slices.Equal(slices.Sorted(slices.Values(cur)), slices.Sorted(slices.Values(want))) {
			return nil, errStale
		}
		return want, nil
	}
}

// TestPhotoOrder: photos are numbered 1..n in the order they are added; an order replaces
// it; a new photo goes last, a replaced one keeps its place (with a new key), a deleted one
// leaves the others in their order, renumbered. Each write publishes the order.
func TestPhotoOrder(t *testing.T) {
	h := newHarness(t)
	acct := newAccount()
	pid := h.create(t, acct, "V1")
	a, b, c := h.addPhoto(t, acct, pid, "a"), h.addPhoto(t, acct, pid, "b"), h.addPhoto(t, acct, pid, "c")
	h.wantOrder(t, "added", acct, pid, a, b, c)

	st, err := h.repo.Find(ctx, acct, ref(pid))
	must(t, err)
	got, err := h.repo.OrderPhotos(ctx, st, exactly([]int64{c, a, b}))
	if err != nil || !slices.Equal(got, []int64{c, a, b}) {
		t.Fatalf("OrderPhotos: %v %v", got, err)
	}
	h.wantOrder(t, "ordered", acct, pid, c, a, b)
	if m, _ := h.state(t, acct, pid).MainPhoto(); m.PhotoID != c {
		t.Errorf("main photo %d, want %d", m.PhotoID, c)
	}

	d := h.addPhoto(t, acct, pid, "d")
	h.wantOrder(t, "added after the order", acct, pid, c, a, b, d)

	st, err = h.repo.Find(ctx, acct, ref(pid))
	must(t, err)
	oldKey := st.Photos[a]
	must(t, h.repo.ReplacePhoto(ctx, st, a, img("a2"), ""))
	h.wantOrder(t, "replaced", acct, pid, c, a, b, d)
	if k := h.state(t, acct, pid).Photos[strconv.FormatInt(a, 10)].Key; k == oldKey {
		t.Errorf("replaced photo kept its key %s", k)
	}

	st, err = h.repo.Find(ctx, acct, ref(pid))
	must(t, err)
	must(t, h.repo.DeletePhoto(ctx, st, c))
	h.wantOrder(t, "main photo deleted", acct, pid, a, b, d)
	must(t, h.repo.DeletePhoto(ctx, st, b))
	h.wantOrder(t, "middle photo deleted", acct, pid, a, d)
	if err := h.repo.DeletePhoto(ctx, st, b); !errors.Is(err, property.ErrPhotoNotFound) {
		t.Errorf("deleting a deleted photo: %v, want ErrPhotoNotFound", err)
	}
	if err := h.repo.ReplacePhoto(ctx, st, c, img("c2"), ""); !errors.Is(err, property.ErrPhotoNotFound) {
		t.Errorf("replacing a photo deleted since it was read: %v, want ErrPhotoNotFound", err)
	}
	h.wantOrder(t, "after refused writes", acct, pid, a, d)
}

// TestOrderRefusedWritesNothing: an error of the order function is returned as it is and
// the property is left as it was (no version, no event).
func TestOrderRefusedWritesNothing(t *testing.T) {
	h := newHarness(t)
	acct := newAccount()
	pid := h.create(t, acct, "V1")
	a, b := h.addPhoto(t, acct, pid, "a"), h.addPhoto(t, acct, pid, "b")
	st, err := h.repo.Find(ctx, acct, ref(pid))
	must(t, err)
	before := raw(t, acct, pid)
	if _, err := h.repo.OrderPhotos(ctx, st, exactly([]int64{b})); !errors.Is(err, errStale) {
		t.Fatalf("partial order: %v, want the order function's error", err)
	}
	unchanged(t, "a refused order", before, raw(t, acct, pid))
	other := st
	other.Account = newAccount()
	if _, err := h.repo.OrderPhotos(ctx, other, exactly([]int64{b, a})); !errors.Is(err, property.ErrNotFound) {
		t.Fatalf("another account's property: %v, want ErrNotFound", err)
	}
	unchanged(t, "another account's order", before, raw(t, acct, pid))
}

// TestPhotosWithoutPositions: photos stored before positions (none has one) are read in id
// order, and the property's next photo write numbers them so: an added photo goes after
// them.
func TestPhotosWithoutPositions(t *testing.T) {
	h := newHarness(t)
	acct := newAccount()
	pid := h.create(t, acct, "V1")
	old := bson.D{}
	for _, id := range []int64{40, 3, 12} {
		old = append(old, bson.E{Key: "photos." + strconv.FormatInt(id, 10),
			Value: bson.D{{Key: "photo_id", Value: id}, {Key: "key", Value: fmt.Sprintf("old%d", id)}}})
	}
	if _, err := db.Collection(collProperties).UpdateOne(ctx, bson.D{{Key: "_id", Value: recordID(acct, pid)}},
		bson.D{{Key: "$set", Value: old}}); err != nil {
		t.Fatal(err)
	}
	ids, pos := h.order(t, acct, pid)
	if !slices.Equal(ids, []int64{3, 12, 40}) || !slices.Equal(pos, []int{0, 0, 0}) {
		t.Fatalf("old photos: %v at %v, want id order without positions", ids, pos)
	}
	n := h.addPhoto(t, acct, pid, "new")
	h.wantOrder(t, "a photo added to old ones", acct, pid, 3, 12, 40, n)
}

// TestConcurrentPhotoAddsAndOrders: 8 goroutines on one property, 4 adding photos and 4
// ordering what they last read (reversed), a stale order refused as the domain refuses it.
// At the end every added photo is there exactly once, at distinct positions 1..n, the
// version counts every successful write once, and the last order written stands but for
// the photos added after it, which follow it.
func TestConcurrentPhotoAddsAndOrders(t *testing.T) {
	const workers, rounds = 8, 4
	for round := range 3 {
		h := newHarness(t)
		acct := newAccount()
		pid := h.create(t, acct, "V1")
		seed := h.addPhoto(t, acct, pid, "seed")
		added := make([][]int64, workers)
		ordered := make([]int, workers)
		errs := make([]error, workers)
		together.Run(workers, func(w int) {
			for r := range rounds {
				st, err := h.repo.Find(ctx, acct, ref(pid))
				if err != nil {
					errs[w] = err
					return
				}
				if w%2 == 0 {
					id, err := h.repo.AddPhoto(ctx, st, img(fmt.Sprintf("w%dr%d", w, r)), "")
					if err != nil {
						errs[w] = err
						return
					}
					added[w] = append(added[w], id)
					continue
				}
				seen := make([]int64, 0, len(st.Photos))
				for id := range st.Photos {
					seen = append(seen, id)
				}
				slices.Sort(seen)
				slices.Reverse(seen)
				_, err = h.repo.OrderPhotos(ctx, st, exactly(seen))
				switch {
				case err == nil:
					ordered[w]++
				case !errors.Is(err, errStale):
					errs[w] = err
					return
				}
			}
		})
		for w, err := range errs {
			if err != nil {
				t.Fatalf("round %d: worker %d: %v", round, w, err)
			}
		}
		want := []int64{seed}
		for _, ids := range added {
			want = append(want, ids...)
		}
		p := h.state(t, acct, pid)
		var got []int64
		for i, ph := range p.OrderedPhotos() {
			got = append(got, ph.PhotoID)
			if ph.Position != i+1 {
				t.Errorf("round %d: photo %d at position %d, want %d", round, ph.PhotoID, ph.Position, i+1)
			}
		}
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
			t.Errorf("round %d: photos %v, want each of %v once", round, got, want)
		}
		orders := 0
		for _, n := range ordered {
			orders += n
		}
		// created, the seed, every add and every order written
		if wantVersion := int64(2 + len(want) - 1 + orders); p.Version != wantVersion {
			t.Errorf("round %d: version %d, want %d (%d adds, %d orders)", round, p.Version, wantVersion, len(want)-1, orders)
		}
		t.Logf("round %d: %d photos, %d orders written", round, len(got), orders)
	}
}
