package gateway

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/vros/vros/libs/tenancy"
)

// TestNormalOrigin: origins are compared with scheme and host in lower case and a default
// port dropped; anything a browser's Origin or a brand's setting could not be is no origin.
func TestNormalOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://a.example":             "https://a.example",
		"HTTPS://A.Example":             "https://a.example",
		"https://a.example:443":         "https://a.example",
		"http://a.example:80":           "http://a.example",
		"http://a.example:443":          "http://a.example:443",
		"https://a.example:80":          "https://a.example:80",
		"http://localhost:8081":         "http://localhost:8081",
		"http://LOCALHOST:08081":        "http://localhost:8081",
		"http://127.0.0.1:3000":         "http://127.0.0.1:3000",
		"http://[::1]:3000":             "http://[::1]:3000",
		"http://[0:0::1]:3000":          "http://[::1]:3000", // as a brand's origin is stored
		"https://xn--bcher-kva.example": "https://xn--bcher-kva.example",
	} {
		if got, ok := normalOrigin(in); !ok || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "null", "a.example", "//a.example", "ftp://a.example", "https://", "https://a.example/",
		"https://a.example/x", "https://a.example?x", "https://a.example?", "https://a.example#x", "https://u@a.example",
		"https://a.example:", "https://a.example:0", "https://a.example:65536", "https://a.example:x", "javascript:alert(1)",
		"https://a.example:443:443", "https:a.example", "https://" + string(make([]byte, 600))} {
		if got, ok := normalOrigin(in); ok {
			t.Errorf("%q is an origin: %q", in, got)
		}
	}
}

// TestOriginCacheBounded: the cache keeps at most its size of accounts, the least recently
// used going first (read again when next asked for); a read that fails is not kept.
func TestOriginCacheBounded(t *testing.T) {
	var mu sync.Mutex
	reads := map[string]int{}
	fail := false
	o := newOriginCache(time.Hour, 2, func(_ context.Context, tn tenancy.Tenant, _ string) (brandOrigins, error) {
		mu.Lock()
		defer mu.Unlock()
		reads[tn.AccountID]++
		if fail {
			return nil, errors.New("down")
		}
		return brandOrigins{"https://" + tn.AccountID + ".example": 1}, nil
	})
	get := func(id string) error {
		_, err := o.get(context.Background(), tenancy.Tenant{AccountID: id}, "")
		return err
	}
	for _, id := range []string{"a", "b", "a", "c", "a", "b"} {
		if err := get(id); err != nil {
			t.Fatal(err)
		}
		if o.Len() > 2 {
			t.Fatalf("%d accounts kept, at most 2", o.Len())
		}
	}
	// a stayed (used most recently each time); b went for c, then c for b.
	if reads["a"] != 1 || reads["b"] != 2 || reads["c"] != 1 {
		t.Errorf("reads %v, want a 1, b 2, c 1", reads)
	}
	fail = true
	if err := get("d"); err == nil {
		t.Fatal("a failed read answered")
	}
	fail = false
	if err := get("d"); err != nil || reads["d"] != 2 {
		t.Errorf("after a failed read: %v, %d reads", err, reads["d"])
	}
}
