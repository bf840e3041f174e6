package service

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/vros/vros/libs/httpapi"
)

// hostileRequest is one request of the hostile burst: a path, its headers and a body.
type hostileRequest struct {
	name   string
	path   string
	header map[string]string
	body   string
	b      bool // interface B's envelope
}

// hostileRequests are unauthenticated requests of about 1 MiB each, of every kind a client
// can make expensive for edge — nested PHP forms, many flat pairs, deep JSON, many multipart
// parts, many headers — to interface B, interface A and an owner-token read, without
// credentials and with wrong ones.
func hostileRequests() []hostileRequest {
	const size = 1<<20 - 256 // within interface A's and B's 1 MiB, so edge reads every one
	fill := func(prefix, unit, suffix string) string {
		n := (size - len(prefix) - len(suffix)) / len(unit)
		return prefix + strings.Repeat(unit, n) + suffix
	}
	const form = "application/x-www-form-urlencoded"
	const boundary = "hostileboundary"
	mp := "multipart/form-data; boundary=" + boundary
	part := func(name string) string {
		return "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\nx\r\n"
	}
	bodies := []struct {
		name, ct, b, a string // the body, as B and A send their pair (prefix)
	}{
		{"nested form", form, "", ""},
		{"flat pairs", form, "", ""},
		{"deep JSON", "application/json", "", ""},
		{"deep JSON list", "application/json", "", ""},
		{"multipart parts", mp, "", ""},
		{"nested multipart", mp, "", ""},
	}
	body := func(kind, creds string) string {
		switch kind {
		case "nested form":
			return fill(creds, "a[][][][][][][]=&", "")
		case "flat pairs":
			return fill(creds, "a=&", "")
		case "deep JSON":
			return fill(`{`+creds+`"a":`, "[", "")
		case "deep JSON list":
			return fill("", "[", "")
		case "multipart parts":
			return fill(creds, part("a[]"), "--"+boundary+"--\r\n")
		case "nested multipart":
			return fill(creds, part("a[][][][][][][]"), "--"+boundary+"--\r\n")
		}
		panic(kind)
	}
	formCreds := func(ct, k1, v1, k2, v2 string) string {
		switch {
		case strings.HasPrefix(ct, "multipart/"):
			return "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + k1 + "\"\r\n\r\n" + v1 + "\r\n" +
				"--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + k2 + "\"\r\n\r\n" + v2 + "\r\n"
		case ct == form:
			return k1 + "=" + v1 + "&" + k2 + "=" + v2 + "&"
		}
		return fmt.Sprintf("%q:%q,%q:%q,", k1, v1, k2, v2)
	}
	wrongBasic := "Basic " + base64.StdEncoding.EncodeToString([]byte("a_nosuchuser:wrong-password"))
	var out []hostileRequest
	for _, k := range bodies {
		ct := map[string]string{"Content-Type": k.ct}
		with := func(h map[string]string) map[string]string {
			m := map[string]string{"Content-Type": k.ct}
			for x, v := range h {
				m[x] = v
			}
			return m
		}
		out = append(out,
			hostileRequest{"B, no credentials, " + k.name, "/vros/external-booking", ct, body(k.name, ""), true},
			hostileRequest{"B, wrong key/pass, " + k.name, "/vros/external-booking", ct,
				body(k.name, formCreds(k.ct, "key", "k_nosuchkey", "pass", "wrong")), true},
			hostileRequest{"A, no credentials, " + k.name, "/api/property", ct, body(k.name, ""), false},
			hostileRequest{"A, wrong Basic, no pair, " + k.name, "/api/property", with(map[string]string{"Authorization": wrongBasic}),
				body(k.name, ""), false},
			hostileRequest{"A, wrong Basic, pair in the body, " + k.name, "/api/property", with(map[string]string{"Authorization": wrongBasic}),
				body(k.name, formCreds(k.ct, "servicekey", "s_nosuchkey", "servicepass", "wrong")), false},
			hostileRequest{"read, wrong token, " + k.name, "/vros/api/default-config/owner_token/no-such-token-0123456789", ct,
				body(k.name, ""), true},
		)
	}
	// Many headers (within the 16 KiB limit) on a nested form.
	many := map[string]string{"Content-Type": form}
	for i := range 1200 {
		many[fmt.Sprintf("X-H%d", i)] = "1"
	}
	out = append(out,
		hostileRequest{"B, many headers, nested form", "/vros/external-booking", many, body("nested form", ""), true},
		hostileRequest{"A, many headers, nested form", "/api/property", many, body("nested form", ""), false})
	return out
}

// hostileAnswer checks one answer: a client error in its interface's envelope (interface B:
// HTTP 200 with an error status for its application errors, 413 and 429 as HTTP codes);
// it reports whether the answer was a 429.
func hostileAnswer(r hostileRequest, code int, body []byte) (throttled bool, problem string) {
	if r.b {
		var env struct {
			Status  *int   `json:"status"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(body, &env); err != nil || env.Status == nil || env.Message == "" {
			return false, fmt.Sprintf("HTTP %d, not interface B's envelope: %.200s", code, body)
		}
		switch {
		case code == http.StatusOK && (*env.Status == httpapi.StatusInvalid || *env.Status == httpapi.StatusUnauthorized):
		case code == http.StatusRequestEntityTooLarge && *env.Status == httpapi.StatusTooLarge:
		case code == http.StatusTooManyRequests && *env.Status == httpapi.StatusRateLimited:
		default:
			return false, fmt.Sprintf("HTTP %d status %d %q, want an error status on 200, or 413/429", code, *env.Status, env.Message)
		}
		return code == http.StatusTooManyRequests, ""
	}
	var env struct {
		Code      int    `json:"code"`
		ErrorType string `json:"error_type"`
		Message   string `json:"error_message"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Code != code || env.ErrorType == "" || env.Message == "" {
		return false, fmt.Sprintf("HTTP %d, not interface A's envelope: %.200s", code, body)
	}
	if code < 400 || code >= 500 {
		return false, fmt.Sprintf("HTTP %d %s %q, want a 4xx", code, env.ErrorType, env.Message)
	}
	return code == http.StatusTooManyRequests, ""
}

// burst sends each request 16 times, 16 at a time, and returns how many answers were 429s.
func burst(t *testing.T, e *testEdge, reqs []hostileRequest) (sent, throttled int) {
	t.Helper()
	const clients = 16
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}}
	defer client.CloseIdleConnections()
	work := make(chan hostileRequest)
	var wg sync.WaitGroup
	var n429, total atomic.Int64
	var mu sync.Mutex
	problems := map[string]string{}
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				req, err := http.NewRequest(http.MethodPost, e.url+r.path, strings.NewReader(r.body))
				if err != nil {
					panic(err)
				}
				for k, v := range r.header {
					req.Header.Set(k, v)
				}
				resp, err := client.Do(req)
				if err != nil {
					mu.Lock()
					problems[r.name] = err.Error()
					mu.Unlock()
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				total.Add(1)
				is429, problem := hostileAnswer(r, resp.StatusCode, b)
				if is429 {
					n429.Add(1)
				}
				if problem != "" {
					mu.Lock()
					problems[r.name] = problem
					mu.Unlock()
				}
			}
		}()
	}
	for _, r := range reqs {
		for range clients {
			work <- r
		}
	}
	close(work)
	wg.Wait()
	for name, p := range problems {
		t.Errorf("%s: %s", name, p)
	}
	return int(total.Load()), int(n429.Load())
}

// heapObjects is the bytes of the heap's objects (live, and dead ones not yet swept).
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestHostileBodiesBounded: hostile bodies of about 1 MiB — nested PHP forms, many flat
// pairs, deep JSON, many multipart parts, many headers — sent 16 at a time without
// credentials or with wrong ones, to interface B, interface A and an owner-token read, cost
// edge little memory: the heap grows by less than 64 MiB over its size before the burst,
// of which fasthttp's 16 request bodies in flight are 16 MiB (edge reads the credentials
// before any body and parses none of an unauthenticated caller). Every answer is a client
// error in its interface's envelope, and every one counts as a failed authentication of the
// address: after its burst of failures the address is answered 429.
func TestHostileBodiesBounded(t *testing.T) {
	reqs := hostileRequests()
	const budget = 64 << 20

	t.Run("memory", func(t *testing.T) {
		// Failures are not throttled here: every body reaches edge's handlers.
		e := start(t, Config{PublicURL: "https://api.example.com", AuthFailureRPS: 1000, AuthFailureBurst: 1 << 30})
		// A low GC target, so that the heap measures what is live rather than garbage
		// waiting for a collection: the heap's size is then close to its live bytes.
		defer debug.SetGCPercent(debug.SetGCPercent(10))
		runtime.GC()
		base := heapObjects()
		var peak atomic.Uint64
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			for {
				if h := heapObjects(); h > peak.Load() {
					peak.Store(h)
				}
				select {
				case <-stop:
					return
				default:
					runtime.Gosched()
				}
			}
		}()
		sent, throttled := burst(t, e, reqs)
		close(stop)
		<-done
		growth := int64(peak.Load()) - int64(base)
		t.Logf("%d hostile requests, 16 at a time: heap %d MiB before, peak %d MiB (growth %d MiB, budget %d MiB)",
			sent, base>>20, peak.Load()>>20, growth>>20, budget>>20)
		if throttled != 0 {
			t.Errorf("%d answers were 429 with failures not throttled", throttled)
		}
		if growth >= budget {
			t.Errorf("the heap grew by %d MiB during the burst, want under %d MiB", growth>>20, budget>>20)
		}
	})

	t.Run("throttled", func(t *testing.T) {
		const failures = 20
		e := start(t, Config{PublicURL: "https://api.example.com", AuthFailureRPS: 0.0001, AuthFailureBurst: failures})
		// The reads' bodies are over their route's 64 KiB: those are answered 413 whatever
		// the throttle says (docs/limits.md, "Plans"), and are not sent here.
		var within []hostileRequest
		for _, r := range reqs {
			if !strings.HasPrefix(r.path, "/vros/api/") {
				within = append(within, r)
			}
		}
		sent, throttled := burst(t, e, within)
		// 16 requests in flight may each pass the throttle before the failures of the
		// others are counted.
		if allowed := sent - throttled; allowed > failures+16 {
			t.Errorf("%d of %d hostile requests were answered without 429, want at most %d (the burst of %d failures, and 16 in flight)",
				allowed, sent, failures+16, failures)
		}
		t.Logf("%d hostile requests, %d answered 429", sent, throttled)
	})
}
