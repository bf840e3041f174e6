package chantest

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/testkit/fakechannex"
)

// TestRecorder: requests through the proxy reach the fake with their headers and body, are
// kept in order with the fake's answer, and a held request never reaches the fake.
func TestRecorder(t *testing.T) {
	fake := fakechannex.Start(t)
	p := fake.AddProperty("k1", fakechannex.Property{RoomTypes: []fakechannex.RoomType{{RatePlans: []string{""}}}})
	rec := NewRecorder(fake.URL())
	defer rec.Close()
	post := func(path, body string) int {
		req, _ := http.NewRequest(http.MethodPost, rec.URL+path, strings.NewReader(body))
		req.Header.Set("user-api-key", "k1")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	day := time.Now().UTC().AddDate(0, 0, 3).Format(time.DateOnly)
	body := `{"values":[{"property_id":"` + p.ID + `","room_type_id":"` + p.RoomTypes[0].ID + `","date":"` + day + `","availability":0}]}`
	if code := post("/api/v1/availability", body); code != http.StatusOK {
		t.Fatalf("through the proxy: %d", code)
	}
	if a, _, ok := fake.Availability(p.ID, p.RoomTypes[0].ID, day); !ok || a != 0 {
		t.Fatalf("the fake holds %d %v", a, ok)
	}
	xs := rec.Since(0)
	if len(xs) != 1 || xs[0].Status != http.StatusOK || !bytes.Equal(xs[0].Body, []byte(body)) || xs[0].Header.Get("user-api-key") != "k1" {
		t.Fatalf("recorded %+v", xs)
	}
	calls, err := ReadCalls("channex", xs)
	if err != nil || len(calls) != 1 || calls[0].Kind != "availability" || strings.Join(calls[0].Dates(), ",") != day {
		t.Fatalf("read back %+v %v", calls, err)
	}

	h := rec.Hold(func(x Exchange) bool { return strings.HasSuffix(x.Path, "/ack") })
	done := make(chan int)
	go func() { done <- post("/api/v1/booking_revisions/"+fakechannex.NewID()+"/ack", "") }()
	x := <-h.Caught
	if !x.Held {
		t.Fatalf("caught %+v", x)
	}
	h.Release()
	if code := <-done; code != http.StatusBadGateway {
		t.Fatalf("a held request answered %d", code)
	}
	if n := fake.Count("ack"); n != 0 {
		t.Fatalf("the fake saw %d acks", n)
	}
}
