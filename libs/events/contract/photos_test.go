package contract_test

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/libs/events/contract/contracttest"
)

// photosOf is a property with photos of the ids given, each with the position given (0:
// none, as in a snapshot from before photos could be ordered).
func photosOf(idPos ...[2]int) *contract.Property {
	p := &contract.Property{Photos: map[string]contract.Photo{}}
	for _, ip := range idPos {
		p.Photos[strconv.Itoa(ip[0])] = contract.Photo{PhotoID: int64(ip[0]), Position: ip[1]}
	}
	return p
}

func ids(ps []contract.Photo) []int64 {
	out := []int64{}
	for _, ph := range ps {
		out = append(out, ph.PhotoID)
	}
	return out
}

// TestPhotoOrder: photos follow their positions; a snapshot without positions orders them
// by id; photos without a position come after those with one, by id; the main photo is
// always the first.
func TestPhotoOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     *contract.Property
		order []int64
	}{
		{"none", photosOf(), []int64{}},
		{"positions", photosOf([2]int{12, 1}, [2]int{7, 3}, [2]int{9, 2}), []int64{12, 9, 7}},
		{"old snapshot: by id", photosOf([2]int{40, 0}, [2]int{3, 0}, [2]int{12, 0}), []int64{3, 12, 40}},
		{"without a position last", photosOf([2]int{40, 2}, [2]int{3, 0}, [2]int{12, 1}, [2]int{1, 0}), []int64{12, 40, 1, 3}},
		{"one position twice: by id", photosOf([2]int{8, 1}, [2]int{5, 1}), []int64{5, 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 { // map order varies from run to run
				got := tc.p.OrderedPhotos()
				if !reflect.DeepEqual(ids(got), tc.order) {
					t.Fatalf("order %v, want %v", ids(got), tc.order)
				}
				main, ok := tc.p.MainPhoto()
				if ok != (len(tc.order) > 0) || (ok && main != got[0]) {
					t.Fatalf("main photo %+v %v, want the first of %v", main, ok, ids(got))
				}
			}
		})
	}
}

// TestGoldenPhotoOrder: the golden snapshot orders photo 5 before photo 3, so its main
// photo is not the lowest id; a snapshot without positions reads as before (the lowest id
// first).
func TestGoldenPhotoOrder(t *testing.T) {
	var p contract.Property
	if err := json.Unmarshal(contracttest.Golden(contract.PhotosUpdated), &p); err != nil {
		t.Fatal(err)
	}
	if got := ids(p.OrderedPhotos()); !reflect.DeepEqual(got, []int64{5, 3}) {
		t.Errorf("golden order %v, want [5 3]", got)
	}
	for k, ph := range p.Photos {
		ph.Position = 0
		p.Photos[k] = ph
	}
	b, _ := json.Marshal(p)
	var old contract.Property
	if err := json.Unmarshal(b, &old); err != nil {
		t.Fatal(err)
	}
	if got := ids(old.OrderedPhotos()); !reflect.DeepEqual(got, []int64{3, 5}) {
		t.Errorf("order without positions %v, want [3 5]", got)
	}
	if m, _ := old.MainPhoto(); m.PhotoID != 3 {
		t.Errorf("main photo without positions %d, want 3", m.PhotoID)
	}
}
