package contracttest

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/vros/vros/libs/events/contract"
)

// TestGoldenRoundTrip: every event type has a golden payload, and its type reads every field
// of it and writes it back unchanged. A json tag renamed here fails: the golden field is then
// unknown to the type.
func TestGoldenRoundTrip(t *testing.T) {
	for typ, payload := range Types() {
		t.Run(typ, func(t *testing.T) {
			golden := Golden(typ)
			v := payload()
			dec := json.NewDecoder(bytes.NewReader(golden))
			dec.DisallowUnknownFields()
			if err := dec.Decode(v); err != nil {
				t.Fatalf("testdata/%s.json: %v", typ, err)
			}
			again, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			_ = json.Unmarshal(again, &got)
			_ = json.Unmarshal(golden, &want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%T writes\n%s\nnot testdata/%s.json", v, again, typ)
			}
		})
	}
}

// TestEveryGoldenFileIsAType: no golden file outlives its event type.
func TestEveryGoldenFileIsAType(t *testing.T) {
	files, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	types := Types()
	for _, f := range files {
		if _, ok := types[strings.TrimSuffix(f.Name(), ".json")]; !ok {
			t.Errorf("testdata/%s names no event type", f.Name())
		}
	}
	if len(files) != len(types) {
		t.Errorf("%d golden files for %d event types", len(files), len(types))
	}
}

func TestDiffGolden(t *testing.T) {
	same, err := DiffGolden(contract.BlockCreated, []byte(`{"account_id":"1001","block_id":9,"property_id":17,"start_date":"2027-04-01",
		"end_date":"2027-04-03","memo":"painting","deleted":false,"version":1,"created_at":"2026-11-22 02:45:10"}`))
	if err != nil || len(same) != 0 {
		t.Errorf("the golden block, reordered: %v %v", same, err)
	}
	got, err := DiffGolden(contract.BookingReserved, []byte(strings.Replace(string(Golden(contract.BookingReserved)), `"adults"`, `"adult"`, 1)))
	want := []string{`data.adult = 2 is not in the contract`, `data.adults missing, want 2`}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("a renamed field: %q %v", got, err)
	}
}
